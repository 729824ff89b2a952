"""In msinspect's own processes a parse and a rank's analysis pause Python's cycle collector
(msinspect.collector): the collector must come back on after every parse and analysis, stay off
where the caller turned it off, and come back on at a parse's first error, so that a file of many
errors keeps no garbage of their parser states; an analysed rank leaves its graph to no collector
pass. In a host's process (a user's pytest session, a notebook) the collector is left alone."""
from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc

import pytest

from msinspect import collector, executors
from msinspect.analysis.job import collect
from msinspect.analysis.rank import passes
from msinspect.analysis.rank.context import RankContext
from msinspect.errors import IRParseError
from msinspect.parser import core
from tests.conftest import FIXTURES

HEADER = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
FOOTER = "  Return(%1)\n      : (<Tensor[Float32], (2)>)\n}\n\n\n"
GOOD = HEADER + "  %1(y) = PrimFunc_Foo(%para1_x)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n" + FOOTER


def _bad(errors: int) -> str:
    return HEADER + "".join(f"  %{i}(y) = PrimFunc_Foo(%para1_x, ]]] {i}\n" for i in range(1, errors + 1)) + FOOTER


@pytest.fixture(autouse=True)
def collector_on(monkeypatch):
    """The collector on, in a process msinspect owns (as the ``msinspect`` command's)."""
    monkeypatch.setattr(collector, "_owned", True)
    gc.enable()
    yield
    gc.enable()


def _watch_parse(monkeypatch) -> list:
    seen = []
    original = core.assemble  # the parse's last step

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(core, "assemble", watched)
    return seen


def test_the_collector_is_on_after_a_parse_that_succeeds_or_fails():
    core.parse_text(GOOD, "good.ir")
    assert gc.isenabled()
    with pytest.raises(IRParseError):
        core.parse_text(_bad(3), "bad.ir")
    assert gc.isenabled()
    assert len(core.parse_text(_bad(3), "bad.ir", lenient=True).diagnostics) >= 3
    assert gc.isenabled()


def test_the_collector_is_off_during_a_clean_parse_and_on_at_the_first_error(monkeypatch):
    seen = _watch_parse(monkeypatch)
    core.parse_text(GOOD, "good.ir")
    core.parse_text(_bad(2), "bad.ir", lenient=True)
    assert seen == [False, True]


def test_a_caller_that_turned_the_collector_off_keeps_it_off():
    gc.disable()
    core.parse_text(GOOD, "good.ir")
    core.parse_text(_bad(2), "bad.ir", lenient=True)
    assert not gc.isenabled()


def test_errors_leave_no_garbage_behind():
    """Each Lark error's parser state is collected as the parse goes on: a lenient parse of 300
    errors peaks at a few MB (about 10 MB where the collector stays off through the errors)."""
    text = _bad(300)
    core.parse_text(text, "bad.ir", lenient=True)  # fragments and templates known
    tracemalloc.start()
    try:
        ir = core.parse_text(text, "bad.ir", lenient=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(ir.diagnostics) >= 300
    assert peak < 4e6, f"the parse peaked at {peak / 1e6:.1f} MB"


RANK = FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz"


def test_a_clean_parse_makes_no_cyclic_garbage_and_its_model_goes_to_the_oldest_generation():
    """What a clean parse makes is the model it returns, which no young generation's pass needs
    to walk: it is moved to the oldest generation as the parse ends; a parse that met an error
    leaves what it made to the collector as usual."""
    from msinspect.parser.reading import read_text

    text = read_text(RANK)[0]
    core.parse_text(text, "rank.ir")  # fragments known
    gc.collect()
    ir = core.parse_text(text, "rank.ir")
    node = ir.subgraphs[0].nodes[0]
    assert any(o is node for o in gc.get_objects(generation=2))
    assert not any(o is node for o in gc.get_objects(generation=0) + gc.get_objects(generation=1))
    bad = core.parse_text(_bad(3), "bad.ir", lenient=True)
    assert any(o is bad for o in gc.get_objects(generation=0) + gc.get_objects(generation=1))
    # nothing a clean parse made is a cycle left for the collector (in a process of its own: other
    # tests leave threads behind that make garbage of their own)
    script = ("import gc, sys; from msinspect.parser import core; from msinspect.parser.reading import read_text\n"
              "text = read_text(sys.argv[1])[0]; core.parse_text(text, 'rank.ir'); gc.collect()\n"
              "ir = core.parse_text(text, 'rank.ir'); del ir; print(gc.collect())")
    found = subprocess.run([sys.executable, "-c", script, str(RANK)], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "0"


def test_a_rank_is_analysed_with_the_collector_paused_and_it_is_on_after(monkeypatch):
    seen = []
    original = passes.comm_rows  # what the comm pass calls: one analysis, after the parse and the graph

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(passes, "comm_rows", watched)
    result = collect._compute(str(RANK), None, RankContext(rank=0), "rank_0", False)
    assert seen == [False] and gc.isenabled() and result.comm

    def fails(*args, **kwargs):
        raise RuntimeError("an analysis that fails")

    monkeypatch.setattr(passes, "comm_rows", fails)
    with pytest.raises(RuntimeError):
        collect._compute(str(RANK), None, RankContext(rank=0), "rank_0", False)
    assert gc.isenabled()
    gc.disable()
    monkeypatch.setattr(passes, "comm_rows", original)
    collect._compute(str(RANK), None, RankContext(rank=0), "rank_0", False)
    assert not gc.isenabled()                        # the caller's off is kept


def test_an_analysed_rank_leaves_its_graph_to_no_collector_pass():
    """The graph is emptied before it is let go: what is left for the collector after a rank is a
    handful of objects, not the graph's nodes and edges (thousands here)."""
    collect._compute(str(RANK), None, RankContext(rank=0), "rank_0", False)  # fragments known
    gc.collect()
    gc.disable()
    collect._compute(str(RANK), None, RankContext(rank=0), "rank_0", False)
    assert gc.collect() < 200


def test_a_host_process_keeps_its_collector_as_it_set_it(monkeypatch):
    """Imported by another program (a user's pytest session through the plugin), msinspect
    neither turns the collector off nor moves the host's objects between generations."""
    monkeypatch.setattr(collector, "_owned", False)
    seen = _watch_parse(monkeypatch)
    ir = core.parse_text(GOOD, "good.ir")
    assert seen == [True] and gc.isenabled()
    assert any(o is ir for o in gc.get_objects(generation=0) + gc.get_objects(generation=1))
    watched = []
    original = passes.comm_rows
    monkeypatch.setattr(passes, "comm_rows", lambda *a, **k: watched.append(gc.isenabled()) or original(*a, **k))
    collect._compute(str(RANK), None, RankContext(rank=0), "rank_0", False)
    assert watched == [True]


def _owned_here() -> bool:
    return collector._owned


def test_the_command_and_its_pool_workers_are_msinspects_own_processes(monkeypatch):
    import configparser

    from msinspect import cli

    entry = configparser.ConfigParser()
    entry.read(FIXTURES.parent / "setup.cfg")
    assert "msinspect = msinspect.cli:run" in entry["options.entry_points"]["console_scripts"]
    script = ("from msinspect import collector; from msinspect import cli\n"
              "try:\n    cli.run()\nexcept SystemExit:\n    pass\nprint(collector._owned)")
    found = subprocess.run([sys.executable, "-c", script, "--version"], capture_output=True, text=True, check=True)
    assert found.stdout.strip().endswith("True")
    monkeypatch.setattr(collector, "_owned", False)  # a host that runs a pool: its workers are msinspect's
    results = [outcome for _, _, outcome in executors._in_pool(_owned_here, [(), ()], 2, str, {})]
    assert results == [True, True]
