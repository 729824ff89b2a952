"""One output schema for --json and --csv across commands (msinspect/schema.py, docs/schema.md):
every key a command writes is documented with its type and holds a value of that type; CSV gives
the same facts as JSON, with lists as JSON text, ints as ints and missing as an empty cell; the
same fact has the same name in every command.

The facts checked come from the jobs' scripts (train_jobs/): sharding_propagation shards only
``matmul`` by hand, ((2, 4), (4, 1)), on 8 devices, so its input x (16, 32) is (8, 8) on every
rank and rank 6's forward AllReduce is over its row of the (2, 4) device grid, ranks 4-7;
recursive_pipeline has 2 pipeline stages on 8 devices: ranks 0-3 and 4-7."""
from __future__ import annotations

import csv
import functools
import io
import json
import re

import pytest

from msinspect.schema import BY_NAME, csv_cell, markdown_table
from tests.conftest import FIXTURES, ROOT
from tests.test_cli_parse import msinspect

SP = FIXTURES / "sharding_propagation_dryrun_8rank"
RP = FIXTURES / "recursive_pipeline_dryrun_8rank"
SPEC = ROOT / "train_jobs" / "sharding_propagation.toml"
ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"

#: Every table command, as a user types it, on the 8 ranks of the sharding propagation job.
COMMANDS = {
    "summary": ("summary", SP),
    "strategies": ("strategies", SP),
    "comm": ("comm", SP),
    "comm (pipeline)": ("comm", RP),  # Send / Receive: peer, micro
    "comm --by kind": ("comm", SP, "--by", "kind"),
    "comm --by group": ("comm", SP, "--by", "group"),
    "shapes": ("shapes", SP),
    "shapes --params": ("shapes", SP, "--params"),
    "check": ("check", SPEC, SP),
    "parse": ("parse", SP / "rank_0"),
}


def _matches(value, kind: str) -> bool:
    """Whether a JSON value is of a schema type (``int|null``, ``list[list[int]]``, ``dict`` ...)."""
    depth, options, start = 0, [], 0
    for i, ch in enumerate(kind):  # split on the top-level '|'
        depth += ch == "["
        depth -= ch == "]"
        if ch == "|" and depth == 0:
            options.append(kind[start:i])
            start = i + 1
    options.append(kind[start:])
    for option in options:
        if option == "null" and value is None:
            return True
        if option == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if option == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if option == "str" and isinstance(value, str):
            return True
        if option == "bool" and isinstance(value, bool):
            return True
        if option == "dict" and isinstance(value, dict):
            return True
        if option.startswith("list[") and isinstance(value, list) and all(_matches(v, option[5:-1]) for v in value):
            return True
    return False


@functools.lru_cache(maxsize=None)  # read-only to the tests; both tests of a command read one run
def _json(command: str):
    run = msinspect(*COMMANDS[command], "--json", "--jobs", "2")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _rows(command: str, data) -> list[dict]:
    return data["outcomes"] if command == "check" else data


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_field_is_documented_with_its_type(command):
    data = _json(command)
    objects = [data] if isinstance(data, dict) else list(data)
    if command == "check":
        objects += data["outcomes"] + [e for o in data["outcomes"] for e in o["evidence"]]
        objects += data["ranks_read"]
    assert objects
    wrong = set()
    for obj in objects:
        for key, value in obj.items():
            if key in ("ranks_read", "read_count", "not_read_count", "other_stage_count", "ranks", "folder",
                       "read") and command == "check":
                continue  # ranks_read's own keys, documented in its row of the table
            if key not in BY_NAME or not _matches(value, BY_NAME[key].type):
                wrong.add((key, repr(value)[:40]))
    assert not wrong, sorted(wrong)


def test_diff_follows_the_schema():
    """``diff`` of ranks 0 and 4 of the TP 4 x DP 2 zoo net (fixtures/zoo/nets/01_*): every key,
    the sections' rows included, documented with its type; ``--csv`` puts every section's rows in
    one table with a ``section`` column, each cell the JSON value as the schema writes it. By
    hand: rank 0's tensor-parallel AllReduces are over ranks 0-3, rank 4's over 4-7."""
    sides = ("diff", ZOO01 / "rank_0", ZOO01 / "rank_4")
    run = msinspect(*sides, "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    rows = [dict(r, section=section) for section, got in data["differences"].items() for r in got]
    wrong = {(k, repr(v)[:40]) for obj in [data, *rows] for k, v in obj.items()
             if k not in BY_NAME or not _matches(v, BY_NAME[k].type)}
    assert not wrong, sorted(wrong)
    comm = [r for r in rows if r["section"] == "comm"]
    assert comm and {tuple(r["left_group"]) for r in comm if r["kind"] == "forward"} == {(0, 1, 2, 3)}
    run = msinspect(*sides, "--csv")
    assert run.returncode == 0, run.stderr
    table = list(csv.DictReader(io.StringIO(run.stdout)))
    assert len(table) == len(rows)
    order = {s: i for i, s in enumerate(data["differences"])}
    for want, got in zip(sorted(rows, key=lambda r: order[r["section"]]), table):
        assert {k: got[k] for k in want} == {k: csv_cell(v) for k, v in want.items()}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_csv_says_what_json_says(command):
    """Same columns, same rows; each cell is the JSON value written as the schema says (lists and
    dicts as JSON text, true / false, empty for null), so ints never read 4096.0 and no cell
    holds a Python repr."""
    rows = _rows(command, _json(command))
    run = msinspect(*COMMANDS[command], "--csv", "--jobs", "2")
    assert run.returncode == 0, run.stderr
    table = list(csv.DictReader(io.StringIO(run.stdout)))
    assert len(table) == len(rows) > 0
    assert list(table[0]) == [k for k in rows[0] if command != "check" or k in table[0]]
    for want, got in zip(rows, table):
        assert {k: got[k] for k in got} == {k: csv_cell(want[k]) for k in got}
    text = run.stdout
    assert not re.search(r"\b\d+\.0\b", text), "an int written as a float"
    assert "(" not in "".join(got.get("group_ranks", "") + got.get("in_strategy", "") for got in table)
    assert "True" not in text.replace("\n", ",").split(",") and "nan" not in text.lower().split(",")


def test_rank_is_an_int_and_its_label_is_beside_it():
    rows = _json("summary")
    assert [(r["rank"], r["rank_label"]) for r in rows] == [(n, f"rank_{n}") for n in range(8)]
    assert {r["set_by_user"] for r in rows} == {1}  # matmul only
    assert all(r["stage_ranks"] == "0-7" for r in rows)  # no pipeline: one stage of 8
    run = msinspect("summary", RP, "--json", "--jobs", "2")
    stages = {r["rank"]: r["stage_ranks"] for r in json.loads(run.stdout)}
    assert stages == {n: "0-3" if n < 4 else "4-7" for n in range(8)}


def test_the_per_rank_shape_has_one_name():
    """matmul's input x, (16, 32) cut (2, 4): (8, 8) on each rank, in strategies and shapes alike."""
    matmul = [r for r in _json("strategies") if r["rank"] == 0 and r["name"] == "matmul"]
    assert [(r["set_by"], r["rank_inputs"][0], r["expected_rank_inputs"][0]) for r in matmul] == \
        [("user", [8, 8], [8, 8])]
    x = [r for r in _json("shapes") if r["rank"] == 0 and r["name"] == "matmul" and r["input"] == 0]
    assert [(r["global_shape"], r["strategy"], r["expected_rank_shape"], r["rank_shape"], r["ok"]) for r in x] == \
        [([16, 32], [2, 4], [8, 8], [8, 8], True)]


def test_ints_stay_ints():
    """rank 6's forward AllReduce over its row of the device grid: a group of 4, as an int."""
    forward = [r for r in _json("comm") if r["rank"] == 6 and r["kind"] == "forward" and r["producer"] == "matmul"]
    assert [(r["group_ranks"], r["group_size"]) for r in forward] == [([4, 5, 6, 7], 4)]
    assert isinstance(forward[0]["group_size"], int)


def test_check_csv_one_row_per_expectation():
    data = _json("check")
    run = msinspect(*COMMANDS["check"], "--csv", "--jobs", "2")
    table = list(csv.DictReader(io.StringIO(run.stdout)))
    assert [r["entry"] for r in table] == [o["entry"] for o in data["outcomes"]]
    assert {r["passed"] for r in table} == {"true"} and data["failed_count"] == 0 and data["ok"] is True
    assert all(isinstance(json.loads(r["evidence"]), list) for r in table)


def test_docs_document_the_schema():
    schema_doc = (ROOT / "docs" / "schema.md").read_text()
    assert markdown_table() in schema_doc, "docs/schema.md's table is stale: paste `python -m msinspect.schema`"


def test_dryrun_json_follows_the_schema(tmp_path):
    """``dryrun --json`` prints ``DryRunReport.to_dict()`` through the schema's converter: paths as
    text, the rank's state as its word, ints as ints (a report of one failed and one finished rank,
    as run_dryrun makes them; running it needs MindSpore, in tests/dryrun)."""
    from msinspect.dryrun.report import DryRunReport, RankState, SimulatedRank
    from msinspect.schema import to_json

    end = tmp_path / "rank_0" / "step_parallel_end_0133.ir"
    ranks = [SimulatedRank(rank=0, state=RankState.OK, ir_dir=tmp_path / "rank_0", log=tmp_path / "rank_0.log",
                        step_parallel_end=[end], exit_code=0, wall_seconds=12.5, peak_rss_bytes=700 * 2**20,
                        pids=[4242]),
             SimulatedRank(rank=1, state=RankState.TIMED_OUT, reason="no IR after 600 s", wall_seconds=600.0)]
    data = json.loads(to_json(DryRunReport(script=tmp_path / "net.py", run_dir=tmp_path, rank_size=2,
                                           ranks=ranks, wall_seconds=612.0).to_dict()))
    assert data["ok"] is False and data["rank_size"] == 2
    assert [(r["rank"], r["state"], r["step_parallel_end"]) for r in data["ranks"]] == \
        [(0, "ok", [str(end)]), (1, "timed out", [])]
    wrong = {(k, repr(v)) for obj in [data, *data["ranks"]] for k, v in obj.items()
             if k not in BY_NAME or not _matches(v, BY_NAME[k].type)}
    assert not wrong, sorted(wrong)


def test_a_spec_says_who_set_a_strategy_with_set_by(tmp_path):
    """The spec names the fact as the output does (`set_by`); `source`, its older name, is still
    read; both at once is a bad spec. sharding_propagation's matmul is sharded by the user."""
    def spec(extra: str):
        path = tmp_path / "s.toml"
        path.write_text(f'[[expect.strategy]]\nop = "matmul"\nin_strategy = [[2, 4], [4, 1]]\n{extra}\n')
        return msinspect("check", path, SP, "--json", "--jobs", "2")

    assert spec('set_by = "user"').returncode == 0
    run = spec('set_by = "planner"')
    (outcome,) = [o for o in json.loads(run.stdout)["outcomes"] if o["kind"] != "record"]  # MindSpore's, if kept
    assert run.returncode == 1 and outcome["found"].startswith("((2, 4), (4, 1)), set by user")
    assert spec('source = "planner"').returncode == 1
    run = spec('set_by = "user"\nsource = "user"')
    assert run.returncode == 2 and "set_by and source are one key" in run.stderr
