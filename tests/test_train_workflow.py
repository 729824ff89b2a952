"""The train-then-check-then-sum-up workflow as an API (msinspect.train.workflow), on a real dump
of the sharding-propagation job and without starting any process: what the CLI prints, a notebook
gets."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from msinspect.cli import main
from msinspect.errors import MsInspectError
from msinspect.train import JOBS
from msinspect.train.launcher import JobResult, TrainError, TrainInterrupted
from msinspect.train.workflow import ALL_MODES, COLUMNS, check_run, modes_of, validate
from tests.conftest import FIXTURES, kept_record

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
    entries = sum(len(v) for v in spec["expect"].values()) + ("ranks" in spec["job"]) + kept_record(DUMP)
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


def _train_cli(monkeypatch, result: JobResult, *args: str):
    """``msinspect train sharding_propagation ARGS`` with the job's run replaced by ``result`` (a
    run folder that exists: the fixture's dry-run dump); the check and the printing are real."""
    import msinspect.train

    monkeypatch.setattr(msinspect.train, "run_job", lambda mode, **job: result)
    return CliRunner().invoke(main, ["train", "sharding_propagation", *args])


def test_train_json_is_the_run_and_its_check_in_the_schema(monkeypatch):
    """A dry run has no losses (null, never 0); its check is check --json's report; every key is
    the schema's, with its type."""
    from msinspect.schema import BY_NAME
    from tests.test_cli_schema import _matches

    run = _train_cli(monkeypatch, _dry_run(DUMP), "--json")
    assert run.exit_code == 0, run.output
    (data,) = json.loads(run.stdout)
    spec = tomllib.loads(JOBS["sharding_propagation"].spec.read_text())
    entries = sum(len(v) for v in spec["expect"].values()) + ("ranks" in spec["job"]) + kept_record(DUMP)
    assert (data["mode"], data["run"], data["rank_size"], data["ok"]) == ("sharding_propagation", "dry_run", 8, True)
    assert data["loss_first"] is None and data["loss_last"] is None and data["losses_identical"] is None
    assert data["checked"] is True and data["check_error"] is None
    assert (data["check"]["passed_count"], data["check"]["failed_count"]) == (entries, 0)
    assert data["check"]["dump"] == str(DUMP) and data["run_dir"] == str(DUMP)
    assert "they have no losses" in run.stderr and "msinspect train" not in run.stdout  # no table on stdout
    check_keys = {k: v for k, v in data["check"].items() if k != "ranks_read"}  # its own row documents it
    wrong = {(k, repr(v)[:40]) for obj in (data, check_keys) for k, v in obj.items()
             if k not in BY_NAME or not _matches(v, BY_NAME[k].type)}
    assert not wrong, sorted(wrong)


def test_train_json_of_a_failed_run_and_of_no_check(monkeypatch):
    failed = json.loads(_train_cli(monkeypatch, _dry_run(DUMP, ok=False), "--json").stdout)[0]
    assert failed["ok"] is False and failed["checked"] is True and failed["check"] is None
    unchecked = json.loads(_train_cli(monkeypatch, _dry_run(DUMP), "--json", "--no-check").stdout)[0]
    assert unchecked["ok"] is True and unchecked["checked"] is False and unchecked["check"] is None


def test_train_prints_its_table_without_json(monkeypatch):
    run = _train_cli(monkeypatch, _dry_run(DUMP))
    assert run.exit_code == 0, run.output
    assert "msinspect train" in run.stdout and "n/a (nothing computed)" in run.stdout
    assert "they have no losses" in run.stdout
