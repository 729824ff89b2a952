"""A script that hard-codes the CPU device target: the dry run must name that as the reason."""
import runpy
import sys
from pathlib import Path

import mindspore as ms

print("SCRIPT ARGS", sys.argv[1:], flush=True)
ms.set_device("CPU")
runpy.run_path(str(Path(__file__).with_name("seed002_sharding_propagation.py")), run_name="__main__")
