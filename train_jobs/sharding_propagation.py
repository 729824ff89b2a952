"""Sharding propagation (seed 002): two MatMuls with the user's strategy ((2, 4), (4, 1)) on the
first; ``sharding_propagation`` infers the rest. The seed's random data and sizes: 4 steps an
epoch, batch 2 per rank (16 in the graph on 8 ranks, ``dataset_strategy="data_parallel"``),
in/hidden/out 32/16/16; MSE loss, Momentum (lr 0.2, momentum 0.1), 5 epochs.

The seed calls ``get_dataset(batch, step_per_epoch, in_dim, out_dim)`` against the signature
``get_dataset(batch_size, in_dim, out_dim, step_per_epoch)``; its IR and log show the intended
sizes (matmul (16, 32) x (32, 16), 4 steps an epoch), which are the ones used here. The network,
the parallel context and the data are in ``networks`` (shared with the dry-run test script).

Needs a GPU or Ascend target: MindSpore refuses auto_parallel on CPU. On a CPU-only box it runs
as msinspect's compile-only dry run, which computes nothing.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main(argv=None):
    p = common.base_parser(__doc__.splitlines()[0], epochs=5, batch_size=2,
                           batch_help="batch per rank (data_parallel dataset)", data=False)
    p.add_argument("--steps-per-epoch", type=int, default=4, help="default 4")
    p.add_argument("--in-dim", type=int, default=32, help="default 32")
    p.add_argument("--hidden-dim", type=int, default=16, help="default 16")
    p.add_argument("--out-dim", type=int, default=16, help="default 16")
    p.add_argument("--lr", type=float, default=0.2, help="Momentum learning rate (default 0.2)")
    p.add_argument("--momentum", type=float, default=0.1, help="default 0.1")
    args = p.parse_args(argv)

    ms, _, _ = common.setup(args)
    from mindspore.nn import Momentum, MSELoss
    from mindspore.train import LossMonitor

    import networks

    networks.sharding_propagation_context()
    dataset = networks.sharding_propagation_dataset(args.batch_size, args.in_dim, args.out_dim,
                                                    args.steps_per_epoch)
    net = networks.Net(args.in_dim, args.hidden_dim, args.out_dim)
    loss = MSELoss()
    opt = Momentum(net.trainable_params(), args.lr, args.momentum)
    model = ms.Model(net, loss_fn=loss, optimizer=opt)
    model.train(args.epochs, dataset, callbacks=[LossMonitor(), common.epoch_loss_callback()],
                dataset_sink_mode=False)


if __name__ == "__main__":
    main()
