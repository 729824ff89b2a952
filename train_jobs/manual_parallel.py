"""Manual parallel (seed 003): MNIST MLP 784-512-512-10, each rank cuts its slice of the batch,
the loss is averaged over ranks with an explicit ``ops.AllReduce``; cross entropy, SGD.

No parallel mode is set, so MindSpore inserts no communication of its own: the AllReduce in
ReduceLoss is the only one. Runs for real on CPU (MindSpore's CPU collectives) under
``msrun --worker_num=8 --local_worker_num=8 ...``, and on GPU/Ascend clusters the same way.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main(argv=None):
    p = common.base_parser(__doc__.splitlines()[0], epochs=10, batch_size=32,
                           batch_help="global batch, cut evenly across ranks")
    p.add_argument("--lr", type=float, default=1e-2, help="SGD learning rate (default 0.01)")
    p.add_argument("--print-every", type=int, default=20,
                   help="LossMonitor interval in steps (default 20; at most the steps of an epoch)")
    args = p.parse_args(argv)

    ms, cur_rank, device_num = common.setup(args)
    from mindspore import nn, ops, train

    import networks

    if args.batch_size % device_num:
        sys.exit(f"error: --batch-size {args.batch_size} is not divisible by {device_num} ranks")
    shard_size = args.batch_size // device_num

    class Network(networks.Network):
        """The seeds' MLP (10 classes) on this rank's rows of the batch."""

        def __init__(self):
            super().__init__(10)

        def construct(self, x):
            x = x[cur_rank * shard_size:cur_rank * shard_size + shard_size]
            return super().construct(x)

    class ReduceLoss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.loss = nn.CrossEntropyLoss()
            self.all_reduce = ops.AllReduce()

        def construct(self, data, label):
            label = label[cur_rank * shard_size:cur_rank * shard_size + shard_size]
            loss_value = self.loss(data, label)
            loss_value = self.all_reduce(loss_value) / device_num
            return loss_value

    data_set = common.mnist_dataset(args, args.batch_size)
    net = Network()
    optimizer = nn.SGD(net.trainable_params(), args.lr)
    model = ms.Model(net, loss_fn=ReduceLoss(), optimizer=optimizer)
    # at least one printed loss per epoch, however few steps a small --num-samples leaves
    every = max(1, min(args.print_every, data_set.get_dataset_size()))
    model.train(args.epochs, data_set, callbacks=[train.LossMonitor(every), common.epoch_loss_callback()])


if __name__ == "__main__":
    main()
