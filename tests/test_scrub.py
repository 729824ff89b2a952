"""scrub: neutral paths, idempotent, never touches the source."""
from __future__ import annotations

import pytest

from msinspect import MsInspectError, parse_file
from msinspect.scrub import scrub_text, scrub_tree
from tests.conftest import FIXTURES


def test_paths_become_neutral():
    text = ("      # In file /home/me/venv/lib/python3.11/site-packages/mindspore/nn/cell.py:12, 4~9/  x/\n"
            "      # In file /usr/lib/python3.11/contextlib.py:81/    return/\n"
            "      # In file /work/jobs/train.py(45)/        out = self.matmul(x, self.weight)/\n"
            "      # Fullname with scope: (Default/network-WithLossCell/_backbone-Net/MatMul-op0)\n")
    out = scrub_text(text)
    assert "<site-packages>/mindspore/nn/cell.py:12" in out
    assert "<python>/contextlib.py:81" in out
    assert "<src>/train.py(45)" in out
    assert "(Default/network-WithLossCell/_backbone-Net/MatMul-op0)" in out
    assert "/home/" not in out and "/work/" not in out and "/usr/" not in out
    assert scrub_text(out) == out


def test_a_jit_functions_phase_loses_its_path_and_relative_paths_stay():
    # MindSpore's phase of a jit function compile, as the dry run's layout record keeps it
    phase = '"phase": "__main__.train_one_step./work/jobs/net.py.1650.0"'
    assert scrub_text(phase) == '"phase": "__main__.train_one_step.<src>/net.py.1650.0"'
    for relative in ("nets/gpt.py", "./nets/gpt.py", "../nets/gpt.py", "a.b/c"):
        assert scrub_text(relative) == relative


def test_scrub_tree_keeps_the_ir_and_refuses_existing_dest(tmp_path):
    src = tmp_path / "src" / "rank_0"
    src.mkdir(parents=True)
    original = (FIXTURES / "seed_002" / "18_execute_0185.excerpt.ir").read_text()
    (src / "18_execute_0185.excerpt.ir").write_text(original)
    written = scrub_tree(tmp_path / "src", tmp_path / "out", compress=True)
    assert [p.relative_to(tmp_path / "out").as_posix() for p in written] == ["rank_0/18_execute_0185.excerpt.ir.gz"]
    assert (src / "18_execute_0185.excerpt.ir").read_text() == original
    scrubbed = parse_file(written[0])
    assert "/home/" not in "".join(s for n in scrubbed.nodes() for s in n.sources)
    assert scrubbed.node("matmul").strategy.in_strategy == ((2, 4), (4, 1))
    with pytest.raises(MsInspectError, match="already exists"):
        scrub_tree(tmp_path / "src", tmp_path / "out")
    with pytest.raises(MsInspectError, match="no IR files of stages"):
        scrub_tree(tmp_path / "src", tmp_path / "out2", stages=("step_parallel_end",))
