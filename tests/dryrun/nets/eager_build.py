"""A network that runs operations eagerly while it is built, after init(), as MindFormers'
LlamaForCausalLM does (``Tensor([0]).reshape(1, 1)``): the dry run's stand-in GPU executes
nothing, so the dry run builds it on the CPU device and compiles it for the GPU.

It also sets the device to GPU again while building (a script may) and prints the device target
that Python code sees while building (the dry run keeps answering the planner's: GPU)."""
import numpy as np

import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.common.api import _cell_graph_executor
from mindspore.communication import get_group_size, init

ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)
ms.set_device("GPU")


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hard_mask = Tensor([0], ms.float32).reshape(1, 1)  # an eager operation
        print("EAGER VALUE", float(self.hard_mask.asnumpy()[0, 0]), flush=True)
        print("BUILD DEVICE TARGET", ms.get_context("device_target"), flush=True)
        self.w = ms.Parameter(Tensor(np.ones((64, 64), np.float32)), name="w")
        self.matmul = ops.MatMul().shard(((get_group_size(), 1), (1, 1)))

    def construct(self, x):
        return self.matmul(x, self.w) + self.hard_mask


_cell_graph_executor.compile(Net(), Tensor(np.ones((16, 64), np.float32)))
print("COMPILED ON", ms.get_context("device_target"), flush=True)
