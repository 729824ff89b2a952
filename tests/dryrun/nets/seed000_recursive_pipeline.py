"""Seed 000: MLP 784-512-512-1 under double recursive search (recursive_programming).

Two pipeline stages (layer1/relu1 on stage 0, the rest on stage 1; 4 micro-batches, 1F1B),
optimizer parallel (hsdp), full-batch dataset strategy, recompute on both ReLUs. Random
data in MNIST's shape instead of MNIST, 2 steps of batch 32. Written to run unchanged under
msrun on a real cluster and under ``msinspect dryrun`` on a CPU-only machine.
"""
import numpy as np

import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn, train
from mindspore.communication import init
from mindspore.nn.utils import no_init_parameters
from mindspore.parallel.auto_parallel import AutoParallel

ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_seed(1)


class Network(nn.Cell):
    """The seed's MLP."""

    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.layer1 = nn.Dense(28 * 28, 512)
        self.relu1 = nn.ReLU()
        self.layer2 = nn.Dense(512, 512)
        self.relu2 = nn.ReLU()
        self.layer3 = nn.Dense(512, 1)

    def construct(self, x):
        x = self.flatten(x)
        x = self.layer1(x)
        x = self.relu1(x)
        x = self.layer2(x)
        x = self.relu2(x)
        return self.layer3(x)


with no_init_parameters():
    net = Network()
    optimizer = nn.SGD(net.trainable_params(), 1e-2)
net.relu1.recompute()
net.relu2.recompute()


def create_dataset(batch_size, steps=2):
    rng = np.random.default_rng(1)
    images = rng.random((batch_size * steps, 1, 28, 28), dtype=np.float32)
    labels = rng.random((batch_size * steps, 1), dtype=np.float32)
    return ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(batch_size)


data_set = create_dataset(32)
loss_fn = nn.MAELoss()
net_with_grads = ms.parallel.nn.Pipeline(nn.WithLossCell(net, loss_fn), 4,
                                         stage_config={"_backbone.layer1": 0,
                                                       "_backbone.relu1": 0,
                                                       "_backbone.layer2": 1,
                                                       "_backbone.relu2": 1,
                                                       "_backbone.layer3": 1})
net_with_grads_new = AutoParallel(net_with_grads, parallel_mode="recursive_programming")
net_with_grads_new.hsdp()
net_with_grads_new.dataset_strategy("full_batch")  # 2.10: the effective form of the seed's full_batch = True
net_with_grads_new.pipeline(stages=2, scheduler="1f1b")
model = ms.Model(net_with_grads_new, optimizer=optimizer)
model.train(1, data_set, callbacks=[train.LossMonitor()], dataset_sink_mode=True)
