"""``Node.strategy`` is the one definition of an operator's strategy: wherever MindSpore wrote it
(trailing braces, the primitive's ``in_strategy``, ``cnode_attrs``), ``()`` kept as no input.

By hand from the scripts: the recursive-pipeline job's dataset GetNext takes no tensor input, so
its ``{in_strategy: ()}`` cuts nothing (no input), not one empty input; zoo 01 (gpt.py, dp 2)
shards every LayerNorm ((dp, 1), (1,), (1,)) with ``shard()``, which ``step_parallel_begin``
writes only in ``primitive_attrs``."""
from __future__ import annotations

from msinspect.parser import parse_file
from tests.conftest import FIXTURES


def _file(folder, stage):
    return str(next(folder.glob(f"*{stage}*")))


def test_get_next_with_no_input_has_the_empty_strategy():
    ir = parse_file(_file(FIXTURES / "recursive_pipeline_dryrun_8rank" / "rank_0", "step_parallel_begin"))
    get_next = next(n for n in ir.nodes() if n.op == "GetNext")
    assert get_next.strategy.in_strategy == ()


def test_the_users_strategy_in_primitive_attrs_is_seen():
    ir = parse_file(_file(FIXTURES / "zoo" / "01_semi_auto_tp4dp2" / "rank_0", "step_parallel_begin"))
    ln1 = [n for n in ir.nodes() if n.instance_name == "ln1"]
    assert len(ln1) == 4  # one per block
    assert not any(n.trailing_attrs for n in ln1)  # only primitive_attrs hold it here
    assert {n.strategy.in_strategy for n in ln1} == {((2, 1), (1,), (1,))}
    assert {n.strategy.source for n in ln1} == {"user"}


def test_strategy_is_read_once():
    ir = parse_file(_file(FIXTURES / "zoo" / "01_semi_auto_tp4dp2" / "rank_0", "step_parallel_end"))
    node = next(n for n in ir.nodes() if n.trailing_attrs.get("in_strategy"))
    assert node.strategy is not None and node.strategy is node.strategy
