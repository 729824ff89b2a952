"""One MatMul under semi-auto parallel whose strategy is the environment variable MATMUL_STRATEGY.

``MATMUL_STRATEGY=1,2/2,1`` shards ``x @ w`` as ((1, 2), (2, 1)): on 2 ranks each holds half of
the contracted dimension, so the planner inserts an AllReduce of the partial products;
``MATMUL_STRATEGY=2,1/1,1`` splits the batch and keeps ``w`` whole: no communication in the
forward pass. Two dry runs that differ only in the variable (``msinspect dryrun --env``) differ in
their strategy. Compiled once with ``_cell_graph_executor.compile``; nothing is trained.
"""
import os

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.common.api import _cell_graph_executor
from mindspore.communication import init

strategy = tuple(tuple(int(n) for n in part.split(",")) for part in os.environ["MATMUL_STRATEGY"].split("/"))
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
