"""``msinspect dryrun --env NAME=VALUE``: set in every rank, recorded, and shown by ``compare``."""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from dryrun_helpers import NETS
from msinspect.cli import main
from msinspect.dryrun.launcher import DryRunError, parse_env_options


def test_env_options_are_name_value_pairs():
    # The value is everything after the first "=", possibly empty.
    assert parse_env_options(["MP=2", "MS_DEV_X=a=b", "EMPTY="]) == {"MP": "2", "MS_DEV_X": "a=b", "EMPTY": ""}


@pytest.mark.parametrize("items, says", [
    (["MP"], "expected NAME=VALUE"),
    (["=2"], "expected NAME=VALUE"),
    (["2MP=1"], "expected NAME=VALUE"),
    (["M P=1"], "expected NAME=VALUE"),
    (["MP=1", "MP=2"], "MP is given twice"),
    (["RANK_ID=3"], "sets RANK_ID itself"),
    (["MS_DEV_SAVE_GRAPHS_PATH=/x"], "sets MS_DEV_SAVE_GRAPHS_PATH itself"),
])
def test_a_malformed_env_option_is_refused_with_why(items, says):
    with pytest.raises(DryRunError, match=says):
        parse_env_options(items)


def test_the_cli_refuses_a_malformed_env_option_without_a_traceback(tmp_path):
    result = CliRunner().invoke(main, ["dryrun", str(NETS / "matmul_strategy.py"), "--ranks", "2", "--out",
                                       str(tmp_path), "--env", "MATMUL_STRATEGY"])
    assert result.exit_code == 2, result.output
    assert "--env 'MATMUL_STRATEGY': expected NAME=VALUE" in result.output
    assert "Traceback" not in result.output and not list(tmp_path.iterdir())


def test_two_runs_that_differ_in_one_variable_differ_in_compare(dryrun_xdg, tmp_path):
    """matmul_strategy.py reads its MatMul's strategy from MATMUL_STRATEGY (its docstring). On 2 ranks
    ((1, 2), (2, 1)) cuts the contracted dimension of x (16, 64) @ w (64, 32): each rank multiplies
    (16, 32) by (32, 32) and the partial products are summed by a forward AllReduce over ranks 0-1;
    ((2, 1), (1, 1)) splits the batch only: no forward AllReduce. That the strategy changes shows
    the variable reached the worker. HCCL_BUFFSIZE comes from the caller's environment (one of the
    HCCL* variables MindSpore reads) and is recorded with its value."""
    runs = []
    for strategy, buffsize in (("1,2/2,1", "100"), ("2,1/1,1", "200")):
        out = tmp_path / strategy.replace("/", "_")
        result = CliRunner().invoke(main, ["dryrun", str(NETS / "matmul_strategy.py"), "--ranks", "2", "--only", "0",
                                           "--out", str(out), "--env", f"MATMUL_STRATEGY={strategy}"],
                                    env={"COLUMNS": "120", "HCCL_BUFFSIZE": buffsize})
        assert result.exit_code == 0, result.output
        # Semi-auto parallel has no strategy search, so MindSpore writes no step_auto_parallel_begin;
        # only the passes written are named.
        assert ("kept per rank: step_parallel_begin, step_parallel_end, validate (what msinspect's analyses read)"
                in " ".join(result.output.split()))
        (run,) = out.iterdir()
        record = json.loads((run / "config.json").read_text())
        assert record["environment"]["options"] == {"MATMUL_STRATEGY": strategy}
        assert record["environment"]["read"]["HCCL_BUFFSIZE"] == buffsize
        # the dry run's own variables are recorded too, with their values
        assert record["environment"]["read"]["MS_SIMULATION_LEVEL"] == "0"
        assert record["command"][-2:] == ["--env", f"MATMUL_STRATEGY={strategy}"]
        runs.append(str(run))

    text = CliRunner().invoke(main, ["compare", *runs], env={"COLUMNS": "120"})
    assert text.exit_code == 0, text.output
    settings = text.stdout.split("settings that differ (run records):\n", 1)[1].split("\n\n", 1)[0]
    assert settings.splitlines() == ["  $HCCL_BUFFSIZE: 100 -> 200", "  $MATMUL_STRATEGY: 1,2/2,1 -> 2,1/1,1"]

    data = json.loads(CliRunner().invoke(main, ["compare", *runs, "--json"]).stdout)
    (matmul,) = [r for r in data["strategies"] if r["op"] == "MatMul"]
    assert (matmul["left_strategy"], matmul["right_strategy"]) == ([[1, 2], [2, 1]], [[2, 1], [1, 1]])
    (allreduce,) = [r for r in data["comm"] if r["kind"] == "forward" and r["op"] == "AllReduce"]
    assert (allreduce["change"], allreduce["left_count"], allreduce["right_count"]) == ("removed", 1, 0)
    shutil.rmtree(tmp_path)
