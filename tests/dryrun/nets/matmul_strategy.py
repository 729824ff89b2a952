"""One MatMul under semi-auto parallel; its strategy is the argument, else $MATMUL_STRATEGY.

``2,8/8,1`` on 8 ranks needs 16 devices: the planner refuses it, saying why in the rank's log only.
``1,2/2,1`` on 2 ranks cuts the contracted dimension (an AllReduce of the partial products);
``2,1/1,1`` splits the batch and keeps ``w`` whole. (``dryrun --env`` sets the variable.)
"""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.common.api import _cell_graph_executor
from mindspore.communication import init

text = sys.argv[1] if len(sys.argv) > 1 else os.environ["MATMUL_STRATEGY"]
strategy = tuple(tuple(int(n) for n in part.split(",")) for part in text.split("/"))
ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(Tensor(np.ones((64, 32), np.float32)), name="w")
        self.matmul = ops.MatMul().shard(strategy)
        self.relu = ops.ReLU()

    def construct(self, x):
        return self.relu(self.matmul(x, self.w))


_cell_graph_executor.compile(Net(), Tensor(np.ones((16, 64), np.float32)))
