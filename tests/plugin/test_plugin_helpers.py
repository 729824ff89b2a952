"""The assertion helpers of msinspect.testing on the fixtures.

Passing cases assert facts known without msinspect: the seed document (seed 002, MindSpore 2.2)
sets matmul's shard ((2, 4), (4, 1)) and prints an AllReduce over ranks 0-1-2-3 right after it,
then a StridedSlice into relu, and relu straight into matmul2; the 2.10 dry run of the same net on
8 ranks cuts the batch in 2 and the contracted width in 4, so matmul's partial sums are reduced
over the 4 ranks sharing a batch slice, groups 0-1-2-3 and 4-5-6-7 (worked by hand in
train_jobs/sharding_propagation.toml); the manual-parallel job calls ops.AllReduce once, which
appears once forward and once as its gradient on every rank. Failing cases check that the message
names the operator, the expected and found values, and IR lines that really show it (read back
here with gzip, not with msinspect). An operator name that is not there gets the close ones.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from plugin_helpers import MANUAL, ROOT, SEED, SHARDING, ir_refs, raw_line

from msinspect.spec import load_spec
from tests.conftest import kept_record
from msinspect.testing import (DumpAssertions, ExpectationFailed, assert_comm_after, assert_comm_before,
                               assert_count, assert_no_redistribution, assert_shape, assert_spec,
                               assert_strategy)

BATCH_GROUPS = [[0, 1, 2, 3], [4, 5, 6, 7]]
MIRROR_GROUPS = [[0, 4], [1, 5], [2, 6], [3, 7]]


@pytest.fixture
def seed(load_msinspect_dump):
    return load_msinspect_dump(SEED)


@pytest.fixture
def sharding(load_msinspect_dump):
    return load_msinspect_dump(SHARDING)


def cited_lines(exc: pytest.ExceptionInfo) -> list[str]:
    refs = ir_refs(str(exc.value))
    assert refs, f"no file:line in the message:\n{exc.value}"
    return [raw_line(path, line) for path, line in refs]


# ---- facts that hold

@pytest.mark.parametrize("stage", [None, "step_parallel_begin"])
def test_seed_matmul_strategy_set_by_user(seed, stage):
    outcome = assert_strategy(seed, "matmul", ((2, 4), (4, 1)), set_by="user", stage=stage)
    # a helper that returns has passed; what it returns cites the IR line of matmul
    assert outcome.evidence and all("instance name: matmul" in ev.text for ev in outcome.evidence)


def test_the_helper_says_set_by_as_specs_and_json_do_and_still_takes_source(seed):
    """One name for who set a strategy: ``set_by`` in a spec, in ``strategies --json`` and in the
    helper; ``source`` (its older name) is still taken, and giving both is refused."""
    assert assert_strategy(seed, "matmul", ((2, 4), (4, 1)), source="user").passed
    with pytest.raises(ExpectationFailed):
        assert_strategy(seed, "matmul", ((2, 4), (4, 1)), source="planner")
    with pytest.raises(ValueError, match="one key"):
        assert_strategy(seed, "matmul", ((2, 4), (4, 1)), set_by="user", source="user")


def test_seed_allreduce_after_matmul(seed):
    assert_comm_after(seed, "AllReduce", "matmul", [[0, 1, 2, 3]])


def test_seed_matmul_per_rank_shapes(seed):
    # (16, 32) cut (2, 4) and (32, 16) cut (4, 1); the (8, 16) output is the partial sum
    assert_shape(seed, "matmul", inputs=((8, 8), (8, 16)), output=(8, 16))


def test_seed_relu_feeds_matmul2_directly(seed):
    assert_no_redistribution(seed, "relu", "matmul2")


def test_sharding_propagation_dryrun_facts(sharding):
    assert_strategy(sharding, "matmul", [[2, 4], [4, 1]], set_by="user", stage="step_parallel_end")
    assert_comm_after(sharding, "AllReduce", "matmul", BATCH_GROUPS, stage="step_parallel_end")
    assert_comm_before(sharding, "_MirrorOperator", "matmul", MIRROR_GROUPS, stage="step_parallel_end")
    assert_shape(sharding, "matmul", inputs=((8, 8), (8, 16)), stage="validate")


def test_ranks_limit_the_check(sharding):
    assert_comm_after(sharding, "AllReduce", "matmul", [[4, 5, 6, 7]], stage="step_parallel_end", ranks=[5, 6])


def test_manual_parallel_allreduce_count(load_msinspect_dump):
    dump = load_msinspect_dump(MANUAL)
    assert_count(dump, "AllReduce", ranks=range(8), min=2, max=2, stage="validate")
    with pytest.raises(ExpectationFailed) as exc:
        assert_count(dump, "AllReduce", ranks=[0, 3], min=3, stage="validate")
    message = str(exc.value)
    assert "expected: at least 3 AllReduce on each of rank" in message
    assert "rank 0: 2, rank 3: 2" in message
    assert all("AllReduce(" in text for text in cited_lines(exc))


def test_spec_file_holds(sharding):
    spec = ROOT / "train_jobs" / "sharding_propagation.toml"
    report = assert_spec(sharding, spec)
    # it returned, so every expectation passed: each entry of the spec, its [job] rank count, and
    # every weight against MindSpore's record where the rank folders keep one
    assert len(report.outcomes) == len(load_spec(spec).expectations) + 1 + kept_record(SHARDING)


def test_helpers_take_a_path():
    outcome = assert_strategy(str(SEED), "matmul", ((2, 4), (4, 1)))
    assert outcome.evidence and all(Path(ev.file).resolve().is_relative_to(SEED.resolve()) for ev in outcome.evidence)


def test_bound_helpers(seed):
    check = DumpAssertions(seed)
    check.strategy("matmul", ((2, 4), (4, 1)), set_by="user")
    check.comm_after("AllReduce", "matmul", [[0, 1, 2, 3]])
    with pytest.raises(AssertionError):
        check.no_redistribution("matmul", "relu")


def test_load_msinspect_dump_caches_by_path(load_msinspect_dump):
    assert load_msinspect_dump(SEED) is load_msinspect_dump(str(SEED.parent / "." / SEED.name))
    assert load_msinspect_dump(SEED) is not load_msinspect_dump(SHARDING)


# ---- facts that do not hold: readable failures

def test_wrong_strategy_names_operator_expected_found_and_line(sharding):
    with pytest.raises(AssertionError) as exc:
        assert_strategy(sharding, "matmul", ((4, 2), (2, 1)), stage="step_parallel_end")
    message = str(exc.value)
    assert message.splitlines()[0].startswith("msinspect: strategy matmul @ step_parallel_end")
    assert "expected: ((4, 2), (2, 1))" in message
    assert "found:    ((2, 4), (4, 1)), set by user on ranks 0-7" in message
    for text in cited_lines(exc):
        assert "{instance name: matmul}" in text and "in_strategy: ((2, 4), (4, 1))" in text


def test_wrong_set_by(seed):
    with pytest.raises(ExpectationFailed) as exc:
        assert_strategy(seed, "matmul", ((2, 4), (4, 1)), set_by="planner")
    assert "expected: ((2, 4), (4, 1)), set by planner" in str(exc.value)
    assert "found:    ((2, 4), (4, 1)), set by user" in str(exc.value)
    # the error carries the verdict on what was asserted (the planner as who set it)
    assert [o.expectation.values.get("set_by") for o in exc.value.outcomes] == ["planner"]


def test_wrong_groups_show_both_and_the_allreduce_lines(sharding):
    with pytest.raises(AssertionError) as exc:
        assert_comm_after(sharding, "AllReduce", "matmul", MIRROR_GROUPS, stage="step_parallel_end")
    message = str(exc.value)
    assert "expected: AllReduce after matmul in group(s) [(0, 4), (1, 5), (2, 6), (3, 7)]" in message
    assert "in group(s) [(0, 1, 2, 3), (4, 5, 6, 7)]" in message.split("found:", 1)[1]
    lines = cited_lines(exc)
    assert lines and all(" AllReduce(" in text for text in lines)
    assert all(any(f"group_ranks: \"{g}\"" in text for text in lines) for g in ("0-1-2-3", "4-5-6-7"))


def test_redistribution_between_is_named(seed):
    with pytest.raises(AssertionError) as exc:
        assert_no_redistribution(seed, "matmul", "relu")
    ops = {text.split("=", 1)[1].split("(", 1)[0].strip() for text in cited_lines(exc)}
    assert ops == {"AllReduce", "StridedSlice"}
    assert "expected: matmul feeds relu directly" in str(exc.value)


def test_missing_operator(seed):
    with pytest.raises(AssertionError, match="no operator matching 'matmul3'"):
        assert_shape(seed, "matmul3", inputs=((8, 8),))


# The seed's operators, read off the network script: MatMul instances matmul and matmul2, the ReLU
# relu. A name that matches none of them gets the close ones (difflib), never a bare "not found".
@pytest.mark.parametrize(("call", "found"), [
    (lambda d: assert_strategy(d, "matmull", ((2, 4), (4, 1))),
     "no operator matching 'matmull' has a strategy; did you mean matmul, matmul2?"),
    (lambda d: assert_shape(d, "Matmull2", inputs=((8, 8),)), "no operator matching 'Matmull2'; did you mean matmul2"),
    (lambda d: assert_comm_after(d, "AllReduce", "rleu", [[0, 1, 2, 3]]), "no operator matching 'rleu'; did you mean relu?"),
    # an op type where an instance is asked for: its instances
    (lambda d: assert_shape(d, "MatMul", inputs=((8, 8),)),
     "no operator matching 'MatMul'; MatMul is an op type: select its operators with type:MatMul or MatMul-0, "
     "or name an instance of it: matmul, matmul2"),
    (lambda d: assert_no_redistribution(d, "relu", "matmull2"), "no operator matching 'matmull2'; did you mean matmul2"),
])
def test_mistyped_operator_gets_did_you_mean(seed, call, found):
    with pytest.raises(ExpectationFailed) as exc:
        call(seed)
    assert f"found:    {found}" in str(exc.value)


def test_mistyped_or_absent_communication_kind_is_named(seed):
    """The seed inserts an AllReduce after matmul (above): a kind MindSpore does not have is refused
    before the dump is read, with the kind meant; a kind no rank has is said to be absent, with the
    kinds there are, never "0 found in group(s) []"."""
    with pytest.raises(ValueError, match="assert_comm_after: kind 'AllReduc' is not a communication operator "
                                         "MindSpore has; did you mean AllReduce"):
        assert_comm_after(seed, "AllReduc", "matmul", [[0, 1, 2, 3]])
    with pytest.raises(ExpectationFailed) as exc:
        assert_comm_after(seed, "Broadcast", "matmul", [[0, 1, 2, 3]])
    found = str(exc.value).split("found:    ", 1)[1].split("\n", 1)[0]
    assert found.startswith("no communication Broadcast in the ranks read (there: ") and "AllReduce" in found


def test_did_you_mean_on_the_zoo_transformer(load_msinspect_dump):
    # fixtures/zoo/nets/gpt.py names its MatMuls q_matmul, k_matmul, v_matmul, out_matmul, ... and
    # its two BatchMatMuls score_bmm and context_bmm (attributes of Attention)
    dump = load_msinspect_dump(ROOT / "fixtures" / "zoo" / "01_semi_auto_tp4dp2")
    with pytest.raises(ExpectationFailed) as exc:
        assert_strategy(dump, "q_matmull", ((2, 1), (1, 4)), stage="step_parallel_end")
    assert "has a strategy; did you mean q_matmul, " in str(exc.value)
    with pytest.raises(ExpectationFailed) as exc:
        assert_shape(dump, "BatchMatMul", inputs=((4, 2, 64, 64),), stage="step_parallel_end")
    assert ("BatchMatMul is an op type: select its operators with type:BatchMatMul or BatchMatMul-0, or name an "
            "instance of it: context_bmm, score_bmm") in str(exc.value)


def test_nothing_close_suggests_nothing(seed):
    with pytest.raises(ExpectationFailed) as exc:
        assert_shape(seed, "conv1", inputs=((8, 8),))
    assert str(exc.value).splitlines()[2] == "  found:    no operator matching 'conv1'"


def test_check_command_suggests_too(tmp_path):
    from click.testing import CliRunner

    from msinspect.cli import main

    spec = tmp_path / "typo.toml"
    spec.write_text('[[expect.comm]]\nkind = "AllReduce"\nafter = "matmu"\ngroups = [[0, 1, 2, 3]]\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(spec), str(SEED)])
    assert result.exit_code == 1, result.output
    assert "found:    no operator matching 'matmu'; did you mean matmul, matmul2?" in result.output


def test_spec_failure_lists_every_failed_expectation(sharding, tmp_path):
    spec = tmp_path / "wrong.toml"
    spec.write_text("""
[job]
stage = "step_parallel_end"

[[expect.strategy]]
op = "matmul"
in_strategy = [[2, 4], [4, 1]]

[[expect.strategy]]
op = "matmul"
in_strategy = [[8, 1], [1, 1]]

[[expect.comm]]
kind = "AllReduce"
after = "matmul"
groups = [[0, 1, 2, 3, 4, 5, 6, 7]]
""", encoding="utf-8")
    with pytest.raises(ExpectationFailed) as exc:
        assert_spec(sharding, spec)
    message = str(exc.value)
    # 3 entries, and every weight against MindSpore's record where the rank folders keep one
    assert message.splitlines()[0].startswith(f"msinspect: 2 of {3 + kept_record(SHARDING)} expectation(s)")
    assert "FAIL expect.strategy[1] strategy matmul" in message
    assert "FAIL expect.comm[0] comm AllReduce after matmul" in message
    assert "expect.strategy[0]" not in message
    assert [o.expectation.label for o in exc.value.outcomes] == ["expect.strategy[1]", "expect.comm[0]"]
    assert len(ir_refs(message)) >= 2


@pytest.mark.parametrize("call", [
    lambda d: assert_strategy(d, "matmul", "2, 4"),
    lambda d: assert_shape(d, "matmul"),
    lambda d: assert_count(d, "AllReduce", ranks=[], min=1),
    lambda d: assert_count(d, "AllReduce", ranks=[0], min=-1),
    lambda d: assert_strategy(d, "matmul", ((2, 4), (4, 1)), set_by="someone"),
])
def test_malformed_arguments_are_not_assertion_failures(seed, call):
    with pytest.raises(ValueError) as exc:
        call(seed)
    assert not isinstance(exc.value, AssertionError)
    assert exc.value.args[0].startswith("assert_")
