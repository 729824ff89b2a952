"""Seed 000: MLP 784-512-512-1 under double recursive search (recursive_programming).

Two pipeline stages (layer1/relu1 on stage 0, the rest on stage 1; 4 micro-batches, 1F1B),
optimizer parallel (hsdp), full-batch dataset strategy, recompute on both ReLUs. Random
data in MNIST's shape instead of MNIST, 2 steps of batch 32. Written to run unchanged under
msrun on a real cluster and under ``msinspect dryrun`` on a CPU-only machine. The network and
its parallel wrapping are the training job's (``train_jobs/networks.py``); the data is not.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "train_jobs"))

import numpy as np  # noqa: E402

import mindspore as ms  # noqa: E402
import mindspore.dataset as ds  # noqa: E402
from mindspore import nn, train  # noqa: E402
from mindspore.communication import init  # noqa: E402

import networks  # noqa: E402

ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_seed(1)

net, optimizer = networks.recursive_pipeline_network(1e-2)


def create_dataset(batch_size, steps=2):
    rng = np.random.default_rng(1)
    images = rng.random((batch_size * steps, 1, 28, 28), dtype=np.float32)
    labels = rng.random((batch_size * steps, 1), dtype=np.float32)
    return ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(batch_size)


data_set = create_dataset(32)
model = ms.Model(networks.recursive_pipeline(net, nn.MAELoss()), optimizer=optimizer)
model.train(1, data_set, callbacks=[train.LossMonitor()], dataset_sink_mode=True)
