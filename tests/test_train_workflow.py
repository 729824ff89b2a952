"""The train-then-check-then-sum-up workflow as an API (msinspect.train.workflow), on a real dump
of the sharding-propagation job and without starting any process: what the CLI prints, a notebook
gets."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from msinspect.cli import main
from msinspect.errors import MsInspectError
from msinspect.train import JOBS
from msinspect.train.launcher import JobResult, TrainError, TrainInterrupted
from msinspect.train.workflow import ALL_MODES, COLUMNS, check_run, modes_of, validate
from tests.conftest import FIXTURES

DUMP = FIXTURES / "sharding_propagation_dryrun_8rank"


def _dry_run(run_dir: Path, ok: bool = True) -> JobResult:
    return JobResult("sharding_propagation", run_dir, 8, real=False, device="CPU (dry run)", wall_seconds=12.4,
                     ok=ok, message="compiled")


def test_a_dry_run_of_the_job_is_checked_against_its_own_spec():
    trained = check_run("sharding_propagation", _dry_run(DUMP))
    assert trained.spec == JOBS["sharding_propagation"].spec
    # every entry of the spec is judged, and [job] (its ranks: the dump's world) too; the job's
    # own dump meets its own spec
    spec = tomllib.loads(trained.spec.read_text())
    entries = sum(len(v) for v in spec["expect"].values()) + ("ranks" in spec["job"])
    assert (len(trained.report.passed), len(trained.report.failed)) == (entries, 0)
    assert trained.ok
    assert trained.row() == {"mode": "sharding_propagation", "ranks": "8", "run": "dry run",
                             "loss first -> last": "n/a (nothing computed)", "wall": "12 s",
                             "expectations": f"{entries} passed, 0 failed"}
    assert tuple(trained.row()) == COLUMNS


def test_a_failed_run_is_not_checked_and_fails():
    trained = check_run("sharding_propagation", _dry_run(DUMP, ok=False))
    assert trained.report is None and not trained.ok
    assert trained.row()["expectations"] == "not checked (run failed)"


def test_no_check_asked_is_said():
    trained = check_run("sharding_propagation", _dry_run(DUMP), check=False)
    assert trained.report is None and trained.ok
    assert trained.row()["expectations"] == "not checked"


def test_a_dump_that_cannot_be_read_is_a_failed_check(tmp_path):
    trained = check_run("sharding_propagation", _dry_run(tmp_path))  # an empty run folder
    assert isinstance(trained.check_error, MsInspectError) and not trained.ok
    assert trained.row()["expectations"] == "check failed (see above)"


def test_modes_and_a_spec_are_validated_before_anything_runs(tmp_path):
    assert modes_of("all") == ALL_MODES and set(ALL_MODES) == set(JOBS)
    assert modes_of("manual_parallel") == ("manual_parallel",)
    with pytest.raises(TrainError):
        modes_of("tensor_parallel")
    with pytest.raises(TrainError):
        validate("all", JOBS["manual_parallel"].spec)
    bad = tmp_path / "bad.toml"
    bad.write_text("[job]\nranks = 'eight'\n")
    with pytest.raises(MsInspectError):
        validate("manual_parallel", bad)


# ---- how `msinspect train` ends when its run does not (the launchers' one handler, cli/exits.py)
@pytest.mark.parametrize("error, code, said", [
    (TrainInterrupted(Path("runs/x")), 130, "partial run in runs/x"),
    (TrainError("msrun is not installed"), 1, "error: msrun is not installed"),
])
def test_train_ends_with_the_tables_code(monkeypatch, tmp_path, error, code, said):
    def fail(*_args, **_kwargs):
        raise error

    monkeypatch.setattr("msinspect.train.run_job", fail)
    result = CliRunner().invoke(main, ["train", "sharding_propagation", "--out", str(tmp_path)])
    assert result.exit_code == code, result.output
    assert said in result.output
