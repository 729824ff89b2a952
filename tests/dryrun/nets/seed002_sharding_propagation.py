"""Seed 002: two MatMuls under sharding propagation, the first with a user-set shard.

``matmul`` is cut ((2, 4), (4, 1)); the planner infers the rest. Random data (as the seed):
input 32, hidden 16, output 16, batch 2 per rank, 4 steps. Written to run unchanged under
msrun on a real cluster and under ``msinspect dryrun`` on a CPU-only machine: it calls
``init()`` and leaves the device target to MindSpore.
"""
import numpy as np

import mindspore as ms
import mindspore.dataset as ds
from mindspore import Parameter, nn, ops
from mindspore.common.initializer import initializer
from mindspore.communication import get_rank, init
from mindspore.train import LossMonitor, Model

STEP_PER_EPOCH = 4
SINGLE_BATCH_SIZE = 2
IN_DIM, HIDDEN_DIM, OUT_DIM = 32, 16, 16

ms.set_context(mode=ms.GRAPH_MODE)
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.AUTO_PARALLEL, search_mode="sharding_propagation",
                             dataset_strategy="data_parallel")
init()
rank_id = get_rank()
ms.set_seed(1)


class Net(nn.Cell):
    """Two MatMuls with a ReLU between; the first carries the user's strategy."""

    def __init__(self, in_dim, hidden_dim, out_dim):
        super().__init__()
        self.weight = Parameter(initializer("normal", [in_dim, hidden_dim]), "w")
        self.weight2 = Parameter(initializer("normal", [hidden_dim, out_dim]), "w2")
        self.matmul = ops.MatMul().shard(((2, 4), (4, 1)))
        self.relu = ops.ReLU()
        self.matmul2 = ops.MatMul()

    def construct(self, x):
        out = self.matmul(x, self.weight)
        out = self.relu(out)
        return self.matmul2(out, self.weight2)


def get_dataset(batch_size, in_dim, out_dim, step_per_epoch):
    np.random.seed(1)
    input_data = np.random.rand(batch_size, in_dim).astype(np.float32)
    label_data = np.random.rand(batch_size, out_dim).astype(np.float32)

    def generate():
        for _ in range(step_per_epoch):
            yield (input_data, label_data)
    return generate


dataset = ds.GeneratorDataset(get_dataset(SINGLE_BATCH_SIZE, IN_DIM, OUT_DIM, STEP_PER_EPOCH), ["input", "label"])
net = Net(IN_DIM, HIDDEN_DIM, OUT_DIM)
model = Model(net, loss_fn=nn.MSELoss(), optimizer=nn.Momentum(net.trainable_params(), 0.2, 0.1))
model.train(1, dataset, callbacks=[LossMonitor()], dataset_sink_mode=False)
