"""Shared pieces of the training jobs: options, device set-up, the MNIST loader, loss reporting.

The jobs never hard-code a device target. MindSpore picks its default (CPU for a CPU-only
box, the accelerator otherwise); ``--device-target`` or ``MSINSPECT_DEVICE_TARGET`` overrides it,
and a launcher (msrun on a cluster, msinspect's dry-run launcher on a CPU-only box) may set it
from outside. IR dumping is likewise set from outside: ``MS_DEV_SAVE_GRAPHS`` and
``MS_DEV_SAVE_GRAPHS_PATH`` in the environment, or ``--save-graphs DIR`` here.
"""
from __future__ import annotations

import argparse
import os
import sys

MNIST_MEAN = 0.1307
MNIST_STD = 0.3081


def base_parser(description: str, *, epochs: int, batch_size: int, batch_help: str,
                data: bool = True) -> argparse.ArgumentParser:
    """Options every job takes, with the seed's values as defaults."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--epochs", type=int, default=epochs, help=f"epochs (default {epochs})")
    p.add_argument("--batch-size", type=int, default=batch_size,
                   help=f"{batch_help} (default {batch_size})")
    if data:
        p.add_argument("--data", default=os.environ.get("DATA_PATH"),
                       help="folder with MNIST in IDX layout (default: $DATA_PATH, else "
                            "msinspect's cached 5k subset)")
        p.add_argument("--num-samples", type=int, default=None,
                       help="use only the first N images (default: all)")
    p.add_argument("--ranks", type=int, default=None,
                   help="expected device count; checked against the launched group size")
    p.add_argument("--device-target", default=os.environ.get("MSINSPECT_DEVICE_TARGET"),
                   help="CPU, GPU or Ascend (default: MindSpore's own choice)")
    p.add_argument("--save-graphs", metavar="DIR", default=None,
                   help="dump IR (MS_DEV_SAVE_GRAPHS=2) into DIR/rank_N/")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    return p


def setup(args: argparse.Namespace):
    """Set the IR dump, graph mode and device, then ``init()``; return ``(ms, rank, group_size)``."""
    if args.save_graphs:
        os.environ["MS_DEV_SAVE_GRAPHS"] = "2"
        os.environ["MS_DEV_SAVE_GRAPHS_PATH"] = os.path.abspath(args.save_graphs)
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init

    ms.set_context(mode=ms.GRAPH_MODE)
    if args.device_target:
        ms.set_device(args.device_target)
    init()
    ms.set_seed(args.seed)
    rank, size = get_rank(), get_group_size()
    if args.ranks is not None and args.ranks != size:
        sys.exit(f"error: --ranks {args.ranks} but the job was launched with {size} processes")
    target = ms.get_context("device_target")
    print(f"msinspect-job: rank {rank} of {size}, device {target}, "
          f"mindspore {ms.__version__}", flush=True)
    return ms, rank, size


def data_path(args: argparse.Namespace) -> str:
    """The MNIST folder: --data, $DATA_PATH, else msinspect's cached subset (written if needed)."""
    if args.data:
        return args.data
    try:
        from msinspect.data import ensure_mnist5k
    except ImportError:
        sys.exit("error: no MNIST data: pass --data PATH or set DATA_PATH")
    return str(ensure_mnist5k())


def mnist_dataset(args: argparse.Namespace, batch_size: int, *, label_float: bool = False):
    """MNIST through MindSpore's own MnistDataset, normalised as in the seeds.

    Every rank reads the same samples in the same (seeded) shuffled order: the jobs cut the batch
    themselves (manual parallel) or let the planner cut it (``full_batch``).
    With *label_float* the label becomes a float32 column of shape (1,), for regression losses.
    """
    import mindspore as ms
    import mindspore.dataset as ds

    ds.config.set_seed(args.seed)
    dataset = ds.MnistDataset(data_path(args), usage="train", shuffle=True,
                              num_samples=args.num_samples)
    image_transforms = [
        ds.vision.Rescale(1.0 / 255.0, 0),
        ds.vision.Normalize(mean=(MNIST_MEAN,), std=(MNIST_STD,)),
        ds.vision.HWC2CHW(),
    ]
    dataset = dataset.map(image_transforms, "image")
    if label_float:
        dataset = dataset.map([ds.transforms.TypeCast(ms.float32),
                               lambda y: y.reshape(1)], "label")
    else:
        dataset = dataset.map(ds.transforms.TypeCast(ms.int32), "label")
    return dataset.batch(batch_size, drop_remainder=True)


def epoch_loss_callback():
    """A callback printing each epoch's mean loss: ``msinspect-job: epoch E mean loss L over N steps``."""
    from mindspore.train import Callback

    class EpochMeanLoss(Callback):
        def __init__(self):
            super().__init__()
            self.total, self.steps = 0.0, 0

        def on_train_epoch_begin(self, run_context):
            self.total, self.steps = 0.0, 0

        def on_train_step_end(self, run_context):
            out = run_context.original_args().net_outputs
            if isinstance(out, (tuple, list)):
                out = out[0]
            # A compile-only dry run hands back a plain 0 here: printed, never a real loss.
            self.total += float(out.asnumpy().mean()) if hasattr(out, "asnumpy") else float(out)
            self.steps += 1

        def on_train_epoch_end(self, run_context):
            epoch = run_context.original_args().cur_epoch_num
            mean = self.total / max(self.steps, 1)
            print(f"msinspect-job: epoch {epoch} mean loss {mean!r} over {self.steps} steps",
                  flush=True)

    return EpochMeanLoss()
