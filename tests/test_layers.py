"""Layers: finding a dump's files (dumps, selection, ranks_read) imports no analysis and no parser;
the analyses import the dump, not the reverse."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import sys
import msinspect.dumps, msinspect.selection, msinspect.ranks_read, msinspect.cache
dump = msinspect.dumps.load_dump("fixtures/sharding_propagation_dryrun_8rank")
msinspect.ranks_read.plan_reads(dump)
print(sorted(m for m in sys.modules if m.startswith(("msinspect.analysis", "msinspect.parser", "lark", "pandas", "networkx"))))
"""


def test_finding_files_imports_no_analysis_and_no_parser():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
