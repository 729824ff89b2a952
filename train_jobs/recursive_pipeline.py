"""Double recursive search (seeds 000/001): MNIST MLP 784-512-512-1 with recompute on both ReLUs,
2 pipeline stages (layer1/relu1 on stage 0; layer2/relu2/layer3 on stage 1), 4 micro-batches,
1F1B, optimizer parallel (hsdp), ``recursive_programming`` strategy search, MAE loss, SGD.

The network and its parallel wrapping are ``networks.recursive_pipeline_network`` and
``networks.recursive_pipeline`` (shared with the dry-run test script; MindSpore 2.10 API notes
there). MAE needs a float label of the logits' shape, so the digit is used as a float regression
target of shape (1,).

Needs a GPU or Ascend target: MindSpore refuses auto_parallel on CPU. On a CPU-only box it runs
as msinspect's compile-only dry run, which computes nothing.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


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

    import networks

    net, optimizer = networks.recursive_pipeline_network(args.lr)
    data_set = common.mnist_dataset(args, args.batch_size, label_float=True)
    net_with_grads = networks.recursive_pipeline(net, nn.MAELoss(),
                                                 micro_batches=args.micro_batches,
                                                 stages=args.stages)
    model = ms.Model(net_with_grads, optimizer=optimizer)
    model.train(args.epochs, data_set,
                callbacks=[train.LossMonitor(), common.epoch_loss_callback()],
                dataset_sink_mode=not args.no_sink)


if __name__ == "__main__":
    main()
