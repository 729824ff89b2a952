"""Ranks read by what differs from a rank read in full (msinspect.analysis.engine.alike): the model is the
one a full parse makes, the answers are those of reading every rank in full, and a rank whose text
departs from the one before it beyond rank-specific values is read in full and flagged.
``bench/alike_identity.py`` runs the same comparison over every zoo run and UT port."""
from __future__ import annotations

import dataclasses
import gzip
import shutil

import pytest

from msinspect import load_dump
from msinspect.analysis.engine import alike
from msinspect.analysis.job import collect
from msinspect import parser_mode
from msinspect.graph import to_networkx
from msinspect.parser import parse_file
from msinspect.ranks_read import plan_reads
from msinspect.selection import world_of
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"

# a follower's changed nodes are read again by the fast reading's reader: under the reference
# reading every rank is read in full (test_the_reference_reading_reads_every_rank_in_full)
pytestmark = pytest.mark.skipif(parser_mode.current() == parser_mode.REFERENCE,
                                reason="reading ranks by what differs is the fast reading's")
#: What a rank read alike says of itself, not of its file.
_HOW_READ = ("read_by", "departure", "departed_from")


def _tasks(root) -> list[tuple]:
    """``analyse``'s task of every rank of a dump: file, reference, context, label."""
    dump = load_dump(root)
    return collect.rank_tasks(plan_reads(dump), world_of(dump))


def _answers(result) -> dict:
    """The result's fields but how it was read, compared by value (``==`` goes down the rows;
    ``dataclasses.asdict`` copied every row first: most of this file's time)."""
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.name not in _HOW_READ}


def _node_fields(ir) -> list[tuple]:
    return [tuple((f.name, getattr(n, f.name)) for f in dataclasses.fields(n) if f.name != "_strategy")
            for n in ir.nodes()]


@pytest.mark.parametrize("run, follower, pass_", [
    ("01_semi_auto_tp4dp2", "rank_1", "validate"),       # groups: names, rank lists, group_rank_ids tuples
    ("12_mf_llama_tp8", "rank_5", "validate"),           # constants: a slice's offsets, a vocabulary offset
    ("04_pipeline_hsdp_recompute", "rank_1", "validate"),  # stage 0 (ranks 0-3): Send / Receive peers, ref_key pointers
    # MindSpore prints a debug name's $-parts in no fixed order: rank 0 writes
    # CNode_3543$overflow$flag_sum$overflow$cond, rank 5 CNode_3543$flag_sum$overflow$cond$overflow
    ("12_mf_llama_tp8", "rank_5", "step_parallel_begin"),
    ("16_mf_llama_256", "rank_131", "validate"),         # 'Total number of nodes: 2219' on rank 0, 2222 here
])
def test_the_model_read_by_what_differs_is_the_model_of_a_full_parse(run, follower, pass_):
    exemplar_file = next((ZOO / run / "rank_0").glob(f"*{pass_}*"))
    follower_file = ZOO / run / follower / exemplar_file.name
    ir = parse_file(exemplar_file)
    exemplar = alike.Exemplar("rank_0", alike.lines_of(exemplar_file), ir, to_networkx(ir))
    before = _node_fields(ir)
    lines = alike.lines_of(follower_file)
    differ = exemplar.differing(lines)
    assert not isinstance(differ, alike.Departure), differ
    assert differ  # the two ranks' files do differ
    whole = parse_file(follower_file)
    with alike.patched(exemplar, lines, differ, str(follower_file)) as patched:
        assert not isinstance(patched, alike.Departure), patched
        assert _node_fields(patched) == _node_fields(whole)
        assert patched.params == whole.params and patched.path == whole.path
        assert patched.stated_nodes == whole.stated_nodes
        assert [(s.name, s.params, s.line) for s in patched.subgraphs] == \
               [(s.name, s.params, s.line) for s in whole.subgraphs]
    assert _node_fields(ir) == before  # the exemplar's nodes are put back
    assert exemplar.graph.nodes == to_networkx(ir).nodes  # and its graph's names


@pytest.mark.parametrize("run", [
    ZOO / "01_semi_auto_tp4dp2",            # TP4 x DP2: every rank one program
    ZOO / "04_pipeline_hsdp_recompute",     # two stages: rank 4 departs (another program), 5-7 follow it
    ZOO / "06_control_flow_8",              # subgraphs and calls
    FIXTURES / "manual_parallel_8rank",     # a real training run on the CPU
    FIXTURES / "recursive_pipeline_dryrun_8rank",
])
def test_every_rank_read_alike_answers_as_read_in_full(run):
    """One batch of every rank of the run: its first rank read in full, the others against it."""
    tasks = _tasks(run)
    alike_ = collect._analyse_batch(tasks, alike=True)
    full = collect._analyse_batch(tasks, alike=False)
    assert [r.read_by for r in full] == [None] * len(tasks)
    followers = [r for r in alike_ if r.read_by]
    assert followers, "no rank was read by what differs"
    for a, f in zip(alike_, full):
        assert _answers(a) == _answers(f), a.label


def test_a_rank_that_departs_is_read_in_full_and_flagged(tmp_path):
    """Rank 1's file made to give one MatMul another strategy, line count kept: not a value that
    names the rank, so it is read in full and the line is named."""
    root = tmp_path / "run"
    for rank in ("rank_0", "rank_1"):
        shutil.copytree(ZOO / "01_semi_auto_tp4dp2" / rank, root / rank)
    target = next((root / "rank_1").glob("*validate*"))
    target.chmod(0o644)
    text = gzip.decompress(target.read_bytes()).decode()
    old = "{in_strategy: ((2, 1), (1, 4))"
    at = text.index(old)
    line = text.count("\n", 0, at) + 1
    target.write_bytes(gzip.compress(text.replace(old, "{in_strategy: ((1, 1), (1, 8))", 1).encode()))
    tasks = _tasks(root)
    got = collect._analyse_batch(tasks, alike=True)
    full = collect._analyse_batch(tasks, alike=False)
    assert got[1].read_by is None
    assert got[1].departure.startswith(f"read in full: line {line} differs from rank_0's beyond rank-specific values")
    assert [_answers(r) for r in got] == [_answers(r) for r in full]


def test_the_environment_reads_every_rank_in_full(monkeypatch):
    dump = load_dump(FIXTURES / "manual_parallel_8rank")
    assert any(r.read_by for r in collect.analyse(dump, jobs=1, cache=False).results)
    monkeypatch.setenv(collect.READ_EVERY_RANK_ENV, "1")
    assert not any(r.read_by for r in collect.analyse(dump, jobs=1, cache=False).results)


def test_a_comm_operator_whose_shared_values_differ_gets_its_own_row(tmp_path):
    """Rank 1's StridedSlice of line 168 made to say micro batch 1 (``micro: I64(0)`` there, a
    value: the rank is still read against rank 0): its comm row says 1, not rank 0's part of a
    row shared by the ranks whose operators agree (comm._shared_row), and every answer is the
    full reading's."""
    root = tmp_path / "run"
    for rank in ("rank_0", "rank_1"):
        shutil.copytree(ZOO / "04_pipeline_hsdp_recompute" / rank, root / rank)
    target = next((root / "rank_1").glob("*validate*"))
    target.chmod(0o644)
    lines = gzip.decompress(target.read_bytes()).decode().split("\n")
    assert lines[167].endswith("micro: I64(0)}") and "StridedSlice" in lines[167]
    lines[167] = lines[167][:-len("I64(0)}")] + "I64(1)}"
    target.write_bytes(gzip.compress("\n".join(lines).encode()))
    tasks = _tasks(root)
    got = collect._analyse_batch(tasks, alike=True)
    full = collect._analyse_batch(tasks, alike=False)
    assert got[1].read_by == "rank_0"
    assert [row["micro"] for row in got[1].comm if row["line"] == 168] == [1]
    assert [row["micro"] for row in got[0].comm if row["line"] == 168] == [0]
    assert [_answers(r) for r in got] == [_answers(r) for r in full]


# The values as first written: each alternative led by an assertion (a word boundary, a
# look-behind), which keeps the regex engine from skipping to where one may begin.
_VALUE_AS_WRITTEN = (r'"(?:[^"\\\n]|\\.)*"|I64\(-?\d+\)|value=-?\d+|0x[0-9a-fA-F]{6,}|\b\d+-\d{8,}\b'
                     r'|(?:(?<=rank_list: )|(?<=group_rank_ids: ))\(\d+(?:, \d+)*\)')


@pytest.mark.parametrize("run", ["01_semi_auto_tp4dp2", "16_mf_llama_256", "04_pipeline_hsdp_recompute"])
def test_values_split_lines_as_the_regex_first_written(run):
    import re

    first = re.compile(_VALUE_AS_WRITTEN)
    lines = [line for path in sorted((ZOO / run).glob("rank_*/*.ir.gz"))[:3] for line in alike.lines_of(path)]
    lines += ["4-6301172352641561019 at the start", "x4-6301172352641561019", "_4-6301172352641561019 2-12345678",
              "rank_list: (0, 4)", "group_rank_ids: (1, 5)", "f(0, 4)", "rank_list: (", "9-12345678"]
    assert len(lines) > 10_000
    assert [alike.VALUE.split(line) for line in lines] == [first.split(line) for line in lines]


def test_a_text_compared_between_the_known_lines_gives_the_split_texts_answer():
    """Exemplar.differing_text against Exemplar.differing of the text's own lines: the same lines
    and differing lines whether the follower differs only where followers did before (compared
    in place between those lines), somewhere new (split, then known), or beyond values."""
    files = [next((ZOO / "01_semi_auto_tp4dp2" / f"rank_{r}").glob("*validate*")) for r in range(4)]
    ir = parse_file(files[0])
    exemplar = alike.Exemplar("rank_0", alike.lines_of(files[0]), ir)
    reference = alike.Exemplar("rank_0", alike.lines_of(files[0]), ir)  # compares line by line only

    def both(text):
        lines, differ = exemplar.differing_text(text)
        split = text.split("\n")
        assert lines == split
        return differ, reference.differing(split)

    first = alike.text_of(files[1])
    got, want = both(first)
    assert got == want and got and exemplar._known == tuple(got)  # learnt from the first follower
    for path in files[2:]:
        got, want = both(alike.text_of(path))
        assert got == want and set(got) <= set(exemplar._known)
    # a value where no follower differed before: split, the same answer, and known from then on
    lines = first.split("\n")
    new = next(i for i, line in enumerate(lines, 1) if "I64(0)" in line and i not in exemplar._known)
    lines[new - 1] = lines[new - 1].replace("I64(0)", "I64(9)", 1)
    got, want = both("\n".join(lines))
    assert got == want and new in got and new in exemplar._known
    # beyond values in a known line: the same departure
    known = next(i for i in exemplar._known if not lines[i - 1].startswith("compile_phase"))  # said whole
    lines[known - 1] += " extra"
    got, want = both("\n".join(lines))
    assert isinstance(got, alike.Departure) and got == want and got.line == known


@pytest.mark.parametrize("run", ["12_mf_llama_tp8", "16_mf_llama_256"])
def test_ranks_of_a_mindformers_job_are_read_alike(run):
    """Real MindFormers ranks differ beyond values: 12's rank 5 prints the $-parts of 21 debug
    names in another order than rank 0 (in step_parallel_begin, its reference), 16's ranks state
    2219, 2222 and 2221 nodes (validate's 'Total number of nodes'). Each is read against the
    rank before it, with the answers of reading it in full."""
    tasks = _tasks(ZOO / run)
    got = collect._analyse_batch(tasks, alike=True)
    full = collect._analyse_batch(tasks, alike=False)
    assert [r.read_by for r in got] == [None] + ["rank_0"] * (len(tasks) - 1)
    assert [r.departure for r in got] == [None] * len(tasks)
    assert [_answers(r) for r in got] == [_answers(r) for r in full]


def _reordered(text: str, order) -> str:
    """``text`` with every node's debug name's $-parts in ``order(parts)``."""
    import re

    return re.sub(r"(?<=\()([^()$\s]+)((?:\$[^()$\s]+)+)(?=\) = )",
                  lambda m: m[1] + "".join("$" + p for p in order(m[2].split("$")[1:])), text)


def test_ranks_whose_names_are_shuffled_answer_as_read_in_full(tmp_path):
    """Zoo 12's step_parallel_end of rank 0, and of rank 5 as ranks 1-3, each with its debug
    names' $-parts in another order (reversed, rotated by one, sorted) and one more digit of
    nodes stated: each is read against rank 0 and its answers are those of reading it in full,
    the operator rows' names (the 21 Partial nodes of the overflow check: no instance name, no
    fullname, so named by their debug names) in the rank's own order."""
    root = tmp_path / "run"
    name = "step_parallel_end_0020.ir.gz"
    (root / "rank_0").mkdir(parents=True)
    shutil.copyfile(ZOO / "12_mf_llama_tp8" / "rank_0" / name, root / "rank_0" / name)
    orders = {1: lambda p: p[::-1], 2: lambda p: p[1:] + p[:1], 3: sorted}
    for rank, order in orders.items():
        text = _reordered(gzip.decompress((ZOO / "12_mf_llama_tp8" / "rank_5" / name).read_bytes()).decode(), order)
        text = text.replace("Total number of nodes: ", "Total number of nodes: 1", 1)
        (root / f"rank_{rank}").mkdir()
        (root / f"rank_{rank}" / name).write_bytes(gzip.compress(text.encode()))
    tasks = _tasks(root)
    got = collect._analyse_batch(tasks, alike=True)
    full = collect._analyse_batch(tasks, alike=False)
    assert [r.read_by for r in got] == [None, "rank_0", "rank_0", "rank_0"]
    assert [_answers(r) for r in got] == [_answers(r) for r in full]
    # the names are the rank's own: rank 1's are rank 5's (CNode_3543$flag_sum$overflow$cond$overflow)
    # parts reversed, rank 0 has CNode_3543$overflow$flag_sum$overflow$cond
    names = {row["name"] for row in got[1].ops if "$" in str(row["name"])}
    assert "CNode_3543$overflow$cond$overflow$flag_sum" in names
    assert "CNode_3543$overflow$flag_sum$overflow$cond" not in names


def test_a_renamed_node_whose_name_a_kept_answer_holds_is_read_in_full():
    """A name the graph's kept answers hold (a communication row names its producer so) would
    keep the first rank's order for every rank: such a follower is read in full, unflagged."""
    from msinspect.analysis.dataflow.file_view import answer, remember

    files = [next((ZOO / "12_mf_llama_tp8" / r).glob("*step_parallel_begin*")) for r in ("rank_0", "rank_5")]
    ir = parse_file(files[0])
    graph = to_networkx(ir)
    remember(graph)
    exemplar = alike.Exemplar("rank_0", alike.lines_of(files[0]), ir, graph)
    lines = alike.lines_of(files[1])
    differ = exemplar.differing(lines)
    assert not isinstance(differ, alike.Departure), differ
    with alike.patched(exemplar, lines, differ, str(files[1])) as read:
        assert not isinstance(read, alike.Departure), read  # nothing kept reads the names yet
    renamed = next(n for n in ir.nodes() if n.debug_name == "CNode_3543$overflow$flag_sum$overflow$cond")
    answer(graph, ("a row naming its producer",), lambda: ("Partial", renamed.debug_name))
    with alike.patched(exemplar, lines, differ, str(files[1])) as read:
        assert isinstance(read, alike.Departure) and not read.departs
        assert read.line == renamed.line


def test_unordered_sorts_a_node_names_parts_only():
    line = "  %3(CNode_9$x$logits) = Add(%1, $(@g:b$a)) {instance name: y$b$a}"
    assert alike.unordered(line) == "  %3(CNode_9$logits$x) = Add(%1, $(@g:b$a)) {instance name: y$b$a}"
    assert alike.unordered("  %3(CNode_9$logits$x) = Add(%1)") == alike.unordered("  %3(CNode_9$x$logits) = Add(%1)")
    assert alike.unordered("  %3(CNode_9$x) = Add(%1)") != alike.unordered("  %3(CNode_9$y) = Add(%1)")
