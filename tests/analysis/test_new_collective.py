"""docs/contributing.md's "where to add" for a communication operator, as a developer does it: one
``CommOp`` line in msinspect/mindspore/vocabulary.py, nothing else, and the new primitive is listed,
counted, explained and drawn as the operator it behaves like.

The new primitive is a real one: ``InnerCommAllReduce``, the AllReduce of MindSpore's
``mint.distributed`` (``kNameInnerCommAllReduce`` in MindSpore's op names), which msinspect's
vocabulary does not hold. The dump is zoo 01's rank 0 (tensor parallel 4 x data parallel 2) with
every ``AllReduce`` call renamed to it. The package is a copy of this checkout with the one line
added, run as a user runs msinspect, beside this checkout on the dump as MindSpore wrote it."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT

NEW = "InnerCommAllReduce"
LINE = f'    CommOp("{NEW}", True, None, "allreduce", "the AllReduce of mint.distributed", like="AllReduce"),\n'
RANK0 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2" / "rank_0"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """(the checkout's package root, a copy of it with the one line, the dump as MindSpore wrote
    it, the dump with AllReduce renamed), each under one folder so that their paths differ by
    one name."""
    root = tmp_path_factory.mktemp("new-collective")
    package = root / "with_line"
    shutil.copytree(ROOT / "msinspect", package / "msinspect", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for linked in ("grammars", "csrc", "train_jobs"):  # msinspect/<name> links to ../<name>
        (package / linked).symlink_to(ROOT / linked)
    vocabulary = package / "msinspect" / "mindspore" / "vocabulary.py"
    text = vocabulary.read_text()
    anchor = next(line for line in text.splitlines(keepends=True) if line.startswith('    CommOp("AllReduce",'))
    vocabulary.write_text(text.replace(anchor, anchor + LINE, 1))
    for name, rename in (("orig", False), ("dump", True)):
        (root / name / "rank_0").mkdir(parents=True)
        for path in sorted(RANK0.glob("*.ir.gz")):
            ir = gzip.decompress(path.read_bytes()).decode()
            (root / name / "rank_0" / path.name[:-3]).write_text(ir.replace("= AllReduce(", f"= {NEW}(") if rename else ir)
    return root, package


def _run(world, package, *args) -> str:
    root, _ = world
    env = {**os.environ, "PYTHONPATH": str(package)}  # the parse cache keys the package's own sources
    done = subprocess.run([sys.executable, "-m", "msinspect.cli", *map(str, args)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _as_before(text: str) -> str:
    """The renamed dump's output read as the original's: the primitive's and the folder's names."""
    return text.replace(NEW, "AllReduce").replace("dump/rank_0", "orig/rank_0")


def test_the_copy_differs_by_the_one_line(world):
    _, package = world
    ours = (ROOT / "msinspect" / "mindspore" / "vocabulary.py").read_text().splitlines(keepends=True)
    theirs = (package / "msinspect" / "mindspore" / "vocabulary.py").read_text().splitlines(keepends=True)
    assert [line for line in theirs if line not in ours] == [LINE] and len(theirs) == len(ours) + 1


def test_without_the_line_the_primitive_is_not_communication(world):
    rows = json.loads(_run(world, ROOT, "comm", "dump", "--json"))
    assert rows and not [r for r in rows if r["op"] == NEW]


def test_comm_lists_it_with_the_bytes_worked_by_hand(world):
    _, package = world
    rows = json.loads(_run(world, package, "comm", "dump", "--json"))
    new = [r for r in rows if r["op"] == NEW]
    # by hand: zoo 01's attention output projection out_matmul is cut ((2, 4), (4, 1)): each rank
    # of a tensor group sums its partial (batch 8 x sequence 64 / dp 2, hidden 512) = (256, 512)
    # float32 output, 524,288 bytes, over ranks 0-3; a ring AllReduce over 4 ranks sends
    # 2 x 3/4 of it: 786,432 bytes. MindSpore writes it first at line 528 of rank 0's validate.
    first = next(r for r in new if r["line"] == 528)
    assert first["kind"] == "forward" and first["group_ranks"] == [0, 1, 2, 3]
    assert (first["tensor_bytes"], first["wire_bytes"]) == (524_288, 786_432)
    before = json.loads(_run(world, ROOT, "comm", "orig", "--json"))
    assert len(new) == sum(r["op"] == "AllReduce" for r in before) > 50
    assert json.loads(_as_before(json.dumps(rows))) == before


def test_cost_counts_it_as_the_allreduce_it_behaves_like(world):
    _, package = world
    command = ("cost", "--by", "axis,phase")
    assert _as_before(_run(world, package, *command, "dump", "--json")) == _run(world, ROOT, *command, "orig", "--json")


def test_explain_says_what_it_says_of_an_allreduce(world):
    _, package = world
    new = json.loads(_run(world, package, "explain", "dump", f"type:{NEW}", "--json"))
    before = json.loads(_run(world, ROOT, "explain", "orig", "type:AllReduce", "--json"))
    assert new and json.loads(_as_before(json.dumps(new))) == before
    # out_matmul's row-parallel output (see the bytes above) is a partial sum: the AllReduce's reason
    assert any("partial sum" in json.dumps(e) for e in new)


def _why_rows(page: str) -> list[str]:
    """The report's explanation rows (its pictures are laid out by the names' widths)."""
    return [line for line in page.splitlines() if 'class="why"' in line or 'class="why-detail"' in line]


def test_the_report_explains_it(world, tmp_path):
    _, package = world
    _run(world, package, "report", "dump", "-o", tmp_path / "new.html")
    _run(world, ROOT, "report", "orig", "-o", tmp_path / "before.html")
    new, before = (tmp_path / "new.html").read_text(), (tmp_path / "before.html").read_text()
    assert NEW in new and _why_rows(before)
    assert _why_rows(_as_before(new)) == _why_rows(before)
