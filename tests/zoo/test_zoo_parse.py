"""Every file the model zoo keeps (fixtures/zoo/<name>/, made by ``make zoo`` from real MindSpore
2.10 runs of fixtures/zoo/nets/) parses strictly: no diagnostic, and the subgraph and cnode
counts each file states hold (a strict parse raises otherwise)."""
from __future__ import annotations

import gzip

import pytest

from msinspect import parse_file
from tests.zoo.zoo_manifest import ZOO, kept_files, networks


def test_every_network_keeps_files():
    for net in networks():
        folder = ZOO / net["name"]
        assert folder.is_dir() and any(folder.rglob("*.ir.gz")), f"{folder}: nothing kept; run `make zoo`"


@pytest.mark.parametrize("path", kept_files(), ids=lambda p: str(p.relative_to(ZOO)))
def test_zoo_file_parses_strictly(path):
    ir = parse_file(path)
    assert ir.diagnostics == []
    if path.name.startswith("analyze_fail"):
        # zoo 08: type inference of a (16, 32) x (16, 16) MatMul failed; the file says why.
        assert ir.failure and "MatMul" in ir.failure
        assert ir.eval_stack
        return
    assert ir.status == "complete"
    assert ir.family == "2.10"
    if ir.stated_subgraphs is not None:
        assert len(ir.subgraphs) == ir.stated_subgraphs
    if ir.stated_cnodes is not None:
        assert ir.cnode_count == ir.stated_cnodes
    assert ir.cnode_count > 0


def test_the_cpu_run_keeps_a_unicode_kernel_graph():
    names = [p.name for p in (ZOO / "07_cpu_while_grad").iterdir()]
    assert any(not n.isascii() and n.startswith("hwopt_") for n in names), names


def test_the_large_dump_is_over_ten_megabytes():
    """Zoo 09 is the parser benchmark's large file: at least 10 MB of text once scrubbed."""
    (path,) = (ZOO / "09_large_gpt").rglob("*step_parallel_end*.ir.gz")
    assert len(gzip.decompress(path.read_bytes())) >= 10_000_000
