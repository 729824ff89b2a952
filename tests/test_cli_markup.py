"""No text read from an IR file, a spec or a path is ever read as Rich markup or an emoji code.

Each input below is one a user can have: an IR error on line 100 (``path:100:19`` holds the emoji
code ``:100:``), a folder named ``[`` holding a folder ``x]`` (its path holds the closing tag
``[/x]``), a spec whose unknown table is ``[[expect.nonsense]]``, an IR line holding
``[const vector]``. The expected text is the input itself, written out here."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

from tests.conftest import FIXTURES, ROOT
from tests.test_cli_parse import msinspect

SEED = FIXTURES / "seed_002" / "step_parallel_begin_0041.excerpt.ir"
SP = FIXTURES / "sharding_propagation_dryrun_8rank"


def _broken_on_line_100(path: Path) -> int:
    """The seed excerpt with 96 comment lines pushed in before relu's node, and relu's operand
    list broken by a `` ?``: the error is on line 100; returns its column (1-based, of the ``?``)."""
    lines = SEED.read_text().splitlines()
    relu = lines[3].replace("ReLU(%3)", "ReLU(%3 ?")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines[:3] + ["# c"] * 96 + [relu] + lines[4:]) + "\n")
    return relu.index("?") + 1


def test_line_100_is_not_an_emoji(tmp_path):
    ir = tmp_path / "step_parallel_begin_0001.ir"
    column = _broken_on_line_100(ir)
    run = msinspect("parse", ir, "--lenient")
    assert run.returncode == 1, run.stderr
    assert f"{ir}:100:{column}: unexpected '? '; skipped lines 100-102" in run.stdout
    assert "\N{HUNDRED POINTS SYMBOL}" not in run.stdout + run.stderr


def test_a_closing_tag_in_a_path_is_text(tmp_path):
    """``[/x]`` in a path made Rich raise MarkupError: an internal error instead of the answer."""
    ir = tmp_path / "[" / "x]" / "step_parallel_begin_0001.ir"
    column = _broken_on_line_100(ir)
    run = msinspect("parse", ir, "--lenient")
    assert run.returncode == 1 and "internal error" not in run.stderr, run.stderr
    assert f"{tmp_path}/[/x]/step_parallel_begin_0001.ir:100:{column}: unexpected" in run.stdout

    dump = tmp_path / "b[" / "x]"  # two ranks: the progress bar and the title both show the path
    for rank in ("rank_0", "rank_1"):
        shutil.copytree(SP / rank, dump / rank)
    run = msinspect("summary", dump, "--jobs", "2")
    assert run.returncode == 0 and "internal error" not in run.stderr, run.stderr
    assert f"summary of {dump}" in run.stdout.replace("\n", "")  # the title may wrap; its text stays


def test_a_spec_error_keeps_its_brackets(tmp_path):
    """``train --spec`` checks the spec before anything starts, and says what is wrong with it."""
    spec = tmp_path / "bad.toml"
    spec.write_text('[[expect.nonsense]]\nop = "x"\n')
    run = msinspect("train", "manual_parallel", "--spec", "bad.toml", cwd=tmp_path)
    assert run.returncode == 2
    assert "error: bad spec: bad.toml: unknown expectation [[expect.nonsense]] (known:" in run.stderr


def test_the_caret_line_keeps_const_vector(tmp_path):
    """A parse error printed by the CLI's console is the error's own text: ``[const vector]`` stays
    on the source line, and the caret stays under the column the parser names."""
    from msinspect.cli.output import console
    from msinspect.errors import IRParseError
    from msinspect.parser import parse_file

    lines = SEED.read_text().splitlines()
    lines[3] = lines[3].replace("ReLU(%3)", "ReLU(%3, [const vector] ?)")
    bad = tmp_path / "bad.ir"
    bad.write_text("\n".join(lines) + "\n")
    try:
        parse_file(bad)
    except IRParseError as error:
        caught = error
    else:
        raise AssertionError("the broken line parsed")
    # the grammar stops at 'vector': `[const` opens a list, `vector` is no element of one
    assert (caught.line, caught.column) == (4, lines[3].index("vector") + 1)
    out = console()
    with out.capture() as captured:
        out.print(str(caught))
    printed = captured.get().splitlines()
    assert printed == str(caught).splitlines()
    source, caret = printed[-2], printed[-1]
    assert "[const vector]" in source and source[caret.index("^")] == "v"


def test_every_cli_console_comes_from_the_factory():
    """The one console factory (``msinspect.cli.output.console``) turns markup and emoji off; a
    ``Console(...)`` made anywhere else in the CLI, or a ``[red]...[/]`` markup string, would
    bring them back."""
    made_elsewhere, markup = [], []
    for path in sorted((ROOT / "msinspect" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Console":
                if path.name != "output.py":
                    made_elsewhere.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "[/]" in node.value:
                markup.append(f"{path.name}:{node.lineno}")
    assert made_elsewhere == [] and markup == []


def test_dryrun_summary_prints_a_reason_as_it_is(tmp_path):
    """A rank's reason quotes the IR (``ir_verdict``: ``IR not readable by msinspect:
    file:line:col: message``); the summary ``dryrun`` prints must show it whole, markup and all
    (under the table, once for the ranks that failed alike, with the log)."""
    from rich.table import Table

    from msinspect.cli.dryrun_cmd import _print_summary
    from msinspect.cli.output import console
    from msinspect.dryrun.report import DryRunReport, RankState, SimulatedRank

    reason = "IR not readable by msinspect: rank_0/step_parallel_end_0001.ir:100:19: unexpected '[/x]'"
    log = tmp_path / "logs" / "rank_0.log"  # a rank that ran wrote its log (one never written is not named)
    log.parent.mkdir()
    log.write_text("the rank's output\n")
    ranks = [SimulatedRank(rank=0, state=RankState.FAILED, reason=reason, log=log)]
    report = DryRunReport(script=tmp_path / "net.py", run_dir=tmp_path, rank_size=1, ranks=ranks)
    out = console()
    out.width = 400  # one line per row
    with out.capture() as captured:
        _print_summary(out, report, Table, "nothing was computed")
    text = captured.get()
    assert f"rank 0 failed: {reason}\n" in text and "log: logs/rank_0.log" in text
