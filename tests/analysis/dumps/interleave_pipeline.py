"""The network of tests/analysis/dumps/pipeline_interleave_4rank: a 2-layer MLP (64 -> 64 -> 64,
ReLU, mean loss) in 2 pipeline stages of 2 ranks each (4 ranks: layer0 on stage 0 = ranks 0-1,
layer1 and the loss on stage 1 = ranks 2-3), dp 2 inside a stage, 2 micro-batches of a global
batch of 16, interleaved scheduling (``pipeline(interleave=True)``: MindSpore's PipelineInterleave
pass, whose Send / Receive name their peer by stage in ``dest_rank`` / ``src_rank`` and by global
rank in ``dst_global_rank`` / ``src_global_rank``, over a stage group named by hash).

Made with MindSpore 2.10 on CPU (compile only):
``msinspect dryrun interleave_pipeline.py --ranks 4 --keep-all-passes``, then
``msinspect scrub RUN pipeline_interleave_4rank --stage step_parallel_begin --stage
step_parallel_end --stage validate --gzip``.
"""
import sys
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn, ops, Parameter, lazy_inline
from mindspore.common.initializer import initializer
from mindspore.communication import init, get_group_size
from mindspore.nn.utils import no_init_parameters
from mindspore.parallel.auto_parallel import AutoParallel

DP, STAGES, MICRO, B, H = 2, 2, 2, 16, 64


class Layer(nn.Cell):
    def __init__(self, name):
        super().__init__()
        self.w = Parameter(initializer("normal", (H, H), ms.float32), name=name)
        self.matmul = ops.MatMul().shard(((DP, 1), (1, 1)))
        self.relu = ops.ReLU().shard(((DP, 1),))

    def construct(self, x):
        return self.relu(self.matmul(x, self.w))


class Net(nn.Cell):
    @lazy_inline
    def __init__(self):
        super().__init__()
        self.layer0 = Layer("w0")
        self.layer1 = Layer("w1")
        self.mean = ops.ReduceMean().shard(((DP, 1),))

    def construct(self, x, y):
        return self.mean(self.layer1(self.layer0(x)) - y)


ms.set_context(mode=ms.GRAPH_MODE)
init()
if get_group_size() != DP * STAGES:
    sys.exit("laid out for 4 ranks")
with no_init_parameters():
    net = Net()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=1e-2)
pipelined = ms.parallel.nn.Pipeline(net, MICRO, stage_config={"layer0": 0, "layer1": 1})
parallel = AutoParallel(pipelined, parallel_mode="semi_auto")
parallel.dataset_strategy("full_batch")
parallel.pipeline(stages=STAGES, interleave=True, scheduler="1f1b")
x = np.ones((B, H), np.float32)
data = ds.NumpySlicesDataset({"x": np.concatenate([x, x]), "y": np.concatenate([x, x])}, shuffle=False).batch(B)
model = ms.Model(parallel, optimizer=optimizer)
model.train(1, data, dataset_sink_mode=False)
