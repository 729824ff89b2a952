"""``parse`` shows what an ``analyze_fail.ir`` records: the exception MindSpore caught and the
evaluation stack with each marked node's source line (issue 26, point 7).

Expected, from the zoo's network (fixtures/zoo/nets/08_analyze_fail.py): the second MatMul takes
x (16, 32) by w2 (16, 16), so inference fails with x1_col 32 against x2_row 16, and the innermost
frame is that call, from line 30 of the script, ``return self.second(x, self.w2)``."""
from __future__ import annotations

import json

from click.testing import CliRunner

from msinspect.cli import main
from tests.conftest import FIXTURES

DUMP = FIXTURES / "zoo" / "08_analyze_fail"


def test_parse_shows_the_exception_and_the_stack_with_source_lines():
    done = CliRunner().invoke(main, ["parse", str(DUMP)], terminal_width=200)
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    failed = [line for line in lines if "evaluation failed" in line]
    assert len(failed) == 1
    assert "For 'MatMul' the input dimensions must be equal" in failed[0] and "32" in failed[0] and "16" in failed[0]
    source = [line for line in lines if "08_analyze_fail.py:30" in line]
    assert len(source) == 1 and "return self.second(x, self.w2)" in source[0]
    assert lines.index(source[0]) > lines.index(failed[0])


def test_parse_json_gives_the_failure_and_each_frame():
    done = CliRunner().invoke(main, ["parse", str(DUMP), "--json"])
    [row] = json.loads(done.output)
    failure = row["failure"]
    assert failure["message"].startswith("For 'MatMul' the input dimensions must be equal")
    assert [frame["depth"] for frame in failure["stack"]] == [0, 1]      # two markers, outermost first
    innermost = failure["stack"][-1]
    assert innermost["source"].startswith("<src>/08_analyze_fail.py:30")
    assert "self.second(x, self.w2)" in innermost["source"]


def test_a_file_that_did_not_fail_has_no_failure():
    done = CliRunner().invoke(main, ["parse", str(FIXTURES / "manual_parallel_8rank" / "rank_0"), "--json"])
    assert all(row["failure"] is None for row in json.loads(done.output))


def test_summary_shows_it_too_and_its_json_carries_it():
    done = CliRunner().invoke(main, ["summary", str(DUMP)], terminal_width=200)
    assert done.exit_code == 0, done.output
    assert "MindSpore's evaluation failed: For 'MatMul' the input dimensions must be equal" in done.output
    assert "return self.second(x, self.w2)" in done.output
    done = CliRunner().invoke(main, ["summary", str(DUMP), "--json"])
    [row] = json.loads(done.stdout)
    assert row["failure"]["message"].startswith("For 'MatMul'") and len(row["failure"]["stack"]) == 2
