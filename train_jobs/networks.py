"""The seed documents' networks and parallel set-ups, shared by the training jobs and by the
dry-run test scripts (``tests/dryrun/nets/``), which put this folder on ``sys.path``.

This module imports MindSpore when it is imported: the jobs import it only after
``common.setup()``, which sets the IR dump variables first. The class and attribute names
show in the dumps (scopes such as ``_backbone-Network/layer1-Dense``, instance names such
as ``matmul``, parameters such as ``layer1.weight``): the expectation specs rely on them.
"""
from __future__ import annotations

import mindspore as ms
from mindspore import Parameter, nn, ops
from mindspore.common.initializer import initializer
from mindspore.nn.utils import no_init_parameters
from mindspore.parallel.auto_parallel import AutoParallel

# Seeds 000/001: layer1/relu1 on pipeline stage 0, layer2/relu2/layer3 on stage 1.
STAGE_CONFIG = {
    "_backbone.layer1": 0,
    "_backbone.relu1": 0,
    "_backbone.layer2": 1,
    "_backbone.relu2": 1,
    "_backbone.layer3": 1,
}


class Network(nn.Cell):
    """The seeds' MNIST MLP 784-512-512-``out_dim`` (seeds 000/001: 1 output; seed 003: 10)."""

    def __init__(self, out_dim: int):
        super().__init__()
        self.flatten = nn.Flatten()
        self.layer1 = nn.Dense(28 * 28, 512)
        self.relu1 = nn.ReLU()
        self.layer2 = nn.Dense(512, 512)
        self.relu2 = nn.ReLU()
        self.layer3 = nn.Dense(512, out_dim)

    def construct(self, x):
        x = self.flatten(x)
        x = self.layer1(x)
        x = self.relu1(x)
        x = self.layer2(x)
        x = self.relu2(x)
        logits = self.layer3(x)
        return logits


def recursive_pipeline_network(lr: float):
    """Seeds 000/001: ``(net, optimizer)``, the MLP with one output and SGD, created without
    initialising parameters (the planner cuts them first), recompute on both ReLUs."""
    with no_init_parameters():
        net = Network(1)
        optimizer = nn.SGD(net.trainable_params(), lr)
    net.relu1.recompute()
    net.relu2.recompute()
    return net, optimizer


def recursive_pipeline(net, loss_fn, *, micro_batches: int = 4, stages: int = 2):
    """Seeds 000/001's wrapping, for ``ms.Model``: *net* with *loss_fn* in ``stages`` pipeline
    stages (:data:`STAGE_CONFIG`), ``micro_batches`` micro-batches, 1F1B, double recursive
    search (``recursive_programming``), optimizer parallel (hsdp) and a full-batch dataset.

    In 2.10 the seed's ``full_batch = True`` only sets a Python attribute;
    ``dataset_strategy("full_batch")`` is the effective call. The AutoParallel wrapper (not the
    inner Pipeline cell the seed passes) is what goes to ``Model``.
    """
    net_with_grads = ms.parallel.nn.Pipeline(nn.WithLossCell(net, loss_fn), micro_batches,
                                             stage_config=STAGE_CONFIG)
    net_with_grads_new = AutoParallel(net_with_grads, parallel_mode="recursive_programming")
    net_with_grads_new.hsdp()
    net_with_grads_new.dataset_strategy("full_batch")
    net_with_grads_new.pipeline(stages=stages, scheduler="1f1b")
    return net_with_grads_new


class Net(nn.Cell):
    """Seed 002: two MatMuls with a ReLU between; the first carries the user's strategy."""

    def __init__(self, in_dim, hidden_dim, out_dim):
        super().__init__()
        self.weight = Parameter(initializer("normal", [in_dim, hidden_dim]), "w")
        self.weight2 = Parameter(initializer("normal", [hidden_dim, out_dim]), "w2")
        # (2, 4): the input is cut in two along the batch and in four along the width;
        # (4, 1): the weight is cut in four along its height.
        self.matmul = ops.MatMul().shard(((2, 4), (4, 1)))
        self.relu = ops.ReLU()
        self.matmul2 = ops.MatMul()

    def construct(self, x):
        out = self.matmul(x, self.weight)
        out = self.relu(out)
        out = self.matmul2(out, self.weight2)
        return out


def sharding_propagation_context():
    """Seed 002's parallel context: auto parallel, ``sharding_propagation``, data-parallel input."""
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.AUTO_PARALLEL,
                                 search_mode="sharding_propagation",
                                 dataset_strategy="data_parallel")


def sharding_propagation_dataset(batch_size, in_dim, out_dim, step_per_epoch):
    """Seed 002's random data: the same (input, label) batch ``step_per_epoch`` times, as a
    ``GeneratorDataset`` with columns ``input`` and ``label``."""
    import mindspore.dataset as ds
    import numpy as np

    np.random.seed(1)
    input_data = np.random.rand(batch_size, in_dim).astype(np.float32)
    label_data = np.random.rand(batch_size, out_dim).astype(np.float32)

    def generate():
        for _ in range(step_per_epoch):
            yield (input_data, label_data)

    return ds.GeneratorDataset(generate, ["input", "label"])
