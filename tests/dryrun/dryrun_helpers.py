"""Constants and line-level IR helpers shared by the dry-run tests (imported by name, no package)."""
from __future__ import annotations

import re
from pathlib import Path

NETS = Path(__file__).parent / "nets"
SEED002 = NETS / "seed002_sharding_propagation.py"
RANKS = 8
#: The ranks of seed 002's 8 that its dry run compiles (tests/dryrun/conftest.py): one of each
#: half of the (2, 4) device grid, at different places in it (rank 0: batch slice 0, width slice
#: 0; rank 5: batch slice 1, width slice 1). The training job's dry run of the same network
#: compiles all 8 (tests/train/test_train_jobs.py).
SEED002_RANKS = (0, 5)


# ---------------------------------------------------------------- line-level IR helpers
# Simple line checks so that these tests do not depend on the grammar; the parser's own
# tests cover the same files structurally.
def ir_text(report, rank: int) -> str:
    files = report.rank(rank).step_parallel_end
    assert files, f"rank {rank} wrote no step_parallel_end"
    return "\n".join(p.read_text() for p in files)


def group_ranks(text: str) -> set[str]:
    return set(re.findall(r'group_ranks: "([0-9-]+)"', text))


def primitive_calls(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(r"= (?:PrimFunc_)?" + re.escape(name) + r"\(", line)]


def assert_honest(report) -> None:
    """A dry run's report says nothing was computed and states no loss: not in a rank's line (its
    reason is read from the log, where the no-op steps print "loss is 0"), not in a field."""
    from msinspect.dryrun import NOTHING_COMPUTED, format_summary

    summary = format_summary(report)
    assert "nothing was computed" in summary
    assert "loss" not in summary.replace(NOTHING_COMPUTED, "").lower()
    assert not [key for rank in report.to_dict()["ranks"] for key in rank if "loss" in key]
    assert report.to_dict()["ok"] is True
