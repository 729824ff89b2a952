"""A weight whose first dimension two device axes cut: ``Layout((2, 4), ("dp", "tp"))`` on 8 ranks,
semi-auto, one MatMul ``x @ w`` with ``x`` (16, 512) cut ``("None", ("dp", "tp"))`` and ``w``
(512, 64) cut ``(("dp", "tp"), "None")``: the contracted dimension in 8 slices (partial sums,
AllReduce). Compiled once with ``_cell_graph_executor.compile``; nothing is trained.

MindSpore records the weight's tensor map as ``[[1, 0], [-1]]`` in its strategy checkpoint (one
map a dimension) and as ``[1, 0, -1]`` in the layout dictionary (the weight reshaped so that each
axis cuts a dimension of its own, ``slice_shape_after_reshape`` ``[1, 64, 64]``).
"""
import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.api import _cell_graph_executor
from mindspore.communication import init
from mindspore.parallel import Layout

ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL, full_batch=True)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        layout = Layout((2, 4), ("dp", "tp"))
        self.w = Parameter(Tensor(np.ones((512, 64), np.float32)), name="w")
        self.matmul = ops.MatMul().shard(in_strategy=(layout("None", ("dp", "tp")), layout(("dp", "tp"), "None")))

    def construct(self, x):
        return self.matmul(x, self.w)


_cell_graph_executor.compile(Net(), Tensor(np.ones((16, 512), np.float32)))
