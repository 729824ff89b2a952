"""Double recursive search (seeds 000/001): MNIST MLP 784-512-512-1 with recompute on both ReLUs,
2 pipeline stages (layer1/relu1 on stage 0; layer2/relu2/layer3 on stage 1), 4 micro-batches,
1F1B, optimizer parallel (hsdp), ``recursive_programming`` strategy search, MAE loss, SGD.

MindSpore 2.10 API notes: the seed's ``full_batch = True`` only sets a Python attribute in 2.10;
``dataset_strategy("full_batch")`` is the effective call. The AutoParallel wrapper (not the inner
Pipeline cell the seed passes) is what goes to ``Model``. MAE needs a float label of the logits'
shape, so the digit is used as a float regression target of shape (1,).

Needs a GPU or Ascend target: MindSpore refuses auto_parallel on CPU. On a CPU-only box it runs
as msinspect's compile-only dry run, which computes nothing.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

STAGE_CONFIG = {
    "_backbone.layer1": 0,
    "_backbone.relu1": 0,
    "_backbone.layer2": 1,
    "_backbone.relu2": 1,
    "_backbone.layer3": 1,
}


def main(argv=None):
    p = common.base_parser(__doc__.splitlines()[0], epochs=10, batch_size=32,
                           batch_help="global batch (full_batch: every rank reads all of it)")
    p.add_argument("--micro-batches", type=int, default=4, help="default 4")
    p.add_argument("--stages", type=int, default=2, help="pipeline stages (default 2)")
    p.add_argument("--lr", type=float, default=1e-2, help="SGD learning rate (default 0.01)")
    p.add_argument("--no-sink", action="store_true", help="dataset_sink_mode=False")
    args = p.parse_args(argv)

    ms, _, _ = common.setup(args)
    from mindspore import nn, train
    from mindspore.nn.utils import no_init_parameters
    from mindspore.parallel.auto_parallel import AutoParallel

    class Network(nn.Cell):
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
            logits = self.layer3(x)
            return logits

    with no_init_parameters():
        net = Network()
        optimizer = nn.SGD(net.trainable_params(), args.lr)
    net.relu1.recompute()
    net.relu2.recompute()

    data_set = common.mnist_dataset(args, args.batch_size, label_float=True)
    loss_fn = nn.MAELoss()
    net_with_grads = ms.parallel.nn.Pipeline(nn.WithLossCell(net, loss_fn), args.micro_batches,
                                             stage_config=STAGE_CONFIG)
    net_with_grads_new = AutoParallel(net_with_grads, parallel_mode="recursive_programming")
    net_with_grads_new.hsdp()
    net_with_grads_new.dataset_strategy("full_batch")
    net_with_grads_new.pipeline(stages=args.stages, scheduler="1f1b")
    model = ms.Model(net_with_grads_new, optimizer=optimizer)
    model.train(args.epochs, data_set,
                callbacks=[train.LossMonitor(), common.epoch_loss_callback()],
                dataset_sink_mode=not args.no_sink)


if __name__ == "__main__":
    main()
