"""Expectation specs: the jobs' specs pass on the fixtures they describe, a broken expectation
fails naming the operator with the IR line, and a bad spec is refused with where it is wrong."""
from __future__ import annotations

import re
import shutil

import pytest

from msinspect.check import check
from msinspect.spec import SpecError, load_spec
from tests.conftest import FIXTURES, ROOT

JOBS = ROOT / "train_jobs"
PAIRS = [("sharding_propagation", "sharding_propagation_dryrun_8rank"),
         ("recursive_pipeline", "recursive_pipeline_dryrun_8rank"),
         ("manual_parallel", "manual_parallel_8rank")]


@pytest.mark.parametrize("job,fixture", PAIRS)
def test_job_spec_passes_on_its_dump(job, fixture):
    report = check(JOBS / f"{job}.toml", FIXTURES / fixture)
    assert report.ok, report.format(only_failed=True)
    # + the rank count, + every weight against MindSpore's record where the rank folders keep one
    kept = any(f.name.startswith("parameter_layout_") for f in (FIXTURES / fixture).glob("rank_*/*"))
    assert len(report.passed) == len(load_spec(JOBS / f"{job}.toml").expectations) + 1 + kept


def _spec(tmp_path, text: str):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


def test_wrong_strategy_fails_naming_operator_and_ir_line(tmp_path):
    spec = _spec(tmp_path, '[[expect.strategy]]\nop = "matmul"\nin_strategy = [[4, 2], [2, 1]]\n')
    report = check(spec, FIXTURES / "sharding_propagation_dryrun_8rank")
    assert not report.ok
    text = report.format()
    assert "FAIL expect.strategy[0] strategy matmul" in text
    assert "expected: ((4, 2), (2, 1))" in text
    assert "found:    ((2, 4), (4, 1)), set by user" in text
    # every rank's file holds the operator at the same line: one evidence line for the 8 ranks
    where = re.search(r"rank 0 \(and ranks 1-7, the same line\): (\S+\.ir\.gz):(\d+): (.*)", text)
    assert where and "instance name: matmul" in where.group(3)


def test_communication_between_fails_no_redistribution(tmp_path):
    spec = _spec(tmp_path, '[[expect.no_redistribution]]\nbetween = ["matmul", "relu"]\n')
    report = check(spec, FIXTURES / "sharding_propagation_dryrun_8rank")
    assert not report.ok
    assert "forward_op_" in report.failed[0].found
    assert all("AllReduce" in ev.text for ev in report.failed[0].evidence)


def test_wrong_group_and_count_fail(tmp_path):
    spec = _spec(tmp_path, '[job]\nstage = "validate"\n'
                           '[[expect.comm]]\nkind = "AllReduce"\nafter = "matmul"\ngroups = [[0, 1, 2, 3, 4, 5, 6, 7]]\n'
                           '[[expect.count]]\nkind = "AllGather"\nranks = [0]\nmin = 3\n')
    report = check(spec, FIXTURES / "sharding_propagation_dryrun_8rank")
    report.outcomes = [o for o in report.outcomes if o.expectation.kind != "record"]  # MindSpore's record, if kept
    assert [o.passed for o in report.outcomes] == [False, False]
    assert "(0, 1, 2, 3), (4, 5, 6, 7)" in report.outcomes[0].found
    assert report.outcomes[1].found == "rank 0: 2"


def test_more_ranks_expected_than_dumped(tmp_path):
    spec = _spec(tmp_path, '[job]\nranks = 16\n[[expect.strategy]]\nop = "matmul"\nin_strategy = [[2, 4], [4, 1]]\n')
    report = check(spec, FIXTURES / "sharding_propagation_dryrun_8rank")
    assert not report.outcomes[0].passed and report.outcomes[1].passed


def test_missing_operator_fails_clearly(tmp_path):
    spec = _spec(tmp_path, '[[expect.shape]]\nop = "conv1"\ninputs = [[1, 2]]\n')
    report = check(spec, FIXTURES / "seed_002")
    assert report.failed[0].found == "no operator matching 'conv1'"


@pytest.mark.parametrize("text,message", [
    ('[[expect.strategy]]\nop = "matmul"\n', "expect.strategy[0]: missing key(s) in_strategy"),
    ('[[expect.strategy]]\nop = "matmul"\nin_strategy = [[2, 4]]\ncolour = 1\n', "unknown key(s) colour"),
    ('[[expect.comm]]\nkind = "AllReduce"\ngroups = [[0]]\n', "give exactly one of after, before"),
    ('[[expect.wish]]\nop = "x"\n', "unknown expectation [[expect.wish]]"),
    ('[[expect.strategy]\n', "not valid TOML"),
    ('[job]\nname = "x"\n', "no [[expect.KIND]] entries"),
])
def test_bad_spec_names_the_file_and_entry(tmp_path, text, message):
    spec = _spec(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert message in str(info.value)
    assert str(spec) in str(info.value)


def test_toml_error_gives_line_and_column(tmp_path):
    spec = _spec(tmp_path, '[job]\nname = "x"\nranks = = 8\n')
    with pytest.raises(SpecError, match=r"line 3, column"):
        load_spec(spec)


def test_check_reads_a_copied_run_folder_without_writing(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "sharding_propagation_dryrun_8rank", run)
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    assert check(JOBS / "sharding_propagation.toml", run).ok
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before
