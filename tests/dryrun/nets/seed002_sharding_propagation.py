"""Seed 002: two MatMuls under sharding propagation, the first with a user-set shard.

``matmul`` is cut ((2, 4), (4, 1)); the planner infers the rest. Random data (as the seed):
input 32, hidden 16, output 16, batch 2 per rank, 4 steps. Written to run unchanged under
msrun on a real cluster and under ``msinspect dryrun`` on a CPU-only machine: it calls
``init()`` and leaves the device target to MindSpore. The network, its parallel context and
the data are the training job's (``train_jobs/networks.py``); this script takes no options.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "train_jobs"))

import mindspore as ms  # noqa: E402
from mindspore import nn  # noqa: E402
from mindspore.communication import init  # noqa: E402
from mindspore.train import LossMonitor, Model  # noqa: E402

import networks  # noqa: E402

STEP_PER_EPOCH = 4
SINGLE_BATCH_SIZE = 2
IN_DIM, HIDDEN_DIM, OUT_DIM = 32, 16, 16

ms.set_context(mode=ms.GRAPH_MODE)
networks.sharding_propagation_context()
init()
ms.set_seed(1)

dataset = networks.sharding_propagation_dataset(SINGLE_BATCH_SIZE, IN_DIM, OUT_DIM, STEP_PER_EPOCH)
net = networks.Net(IN_DIM, HIDDEN_DIM, OUT_DIM)
model = Model(net, loss_fn=nn.MSELoss(), optimizer=nn.Momentum(net.trainable_params(), 0.2, 0.1))
model.train(1, dataset, callbacks=[LossMonitor()], dataset_sink_mode=False)
