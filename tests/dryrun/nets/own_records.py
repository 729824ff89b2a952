"""Two MatMuls trained one step under an ``AutoParallel`` cell (sharding propagation, optimizer
parallel) that saves its own strategy records: ``python own_records.py OUT``.

The cell's own settings replace the global context at its compile: its strategy checkpoint goes
to ``OUT/strategy_<rank>.json`` (JSON, because of the name; optimizer states too) and its
operator strategy file to ``OUT/operators_<rank>.json``; it names no group checkpoint. The dry
run leaves the script's files alone and writes the rest into the rank folder. ``matmul1`` is cut
((2, 1), (1, 2)) on 4 ranks; the planner infers ``matmul2``. Nothing is computed in a dry run.
"""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.communication import get_rank, init
from mindspore.parallel.auto_parallel import AutoParallel

out = os.path.abspath(sys.argv[1])
ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_seed(1)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w1 = Parameter(Tensor(np.full((64, 256), 0.01, np.float32)), name="w1")
        self.w2 = Parameter(Tensor(np.full((256, 32), 0.01, np.float32)), name="w2")
        self.matmul1 = ops.MatMul().shard(((2, 1), (1, 2)))
        self.matmul2 = ops.MatMul()
        self.relu = ops.ReLU()

    def construct(self, x):
        return self.matmul2(self.relu(self.matmul1(x, self.w1)), self.w2)


net = Net()
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
parallel = AutoParallel(step, parallel_mode="sharding_propagation")
parallel.dataset_strategy("full_batch")
parallel.hsdp()
parallel.save_param_strategy_file(os.path.join(out, f"strategy_{get_rank()}.json"))
parallel.disable_strategy_file_only_for_trainable_params()
parallel.save_operator_strategy_file(os.path.join(out, f"operators_{get_rank()}.json"))
print("loss", parallel(Tensor(np.ones((16, 64), np.float32)), Tensor(np.zeros((16, 32), np.float32))))
