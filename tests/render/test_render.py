"""``msinspect render``: pictures of the graph around an operator, on the real fixtures.

The DOT source is parsed back into nodes and edges, so the assertions are about what the picture
shows. The picture itself needs Graphviz's ``dot``: the tests that draw one are skipped only where
``dot`` is really absent, and the missing-``dot`` path is tested everywhere by emptying PATH.
"""
from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys

import pytest

import msinspect
from msinspect import render as render_mod
from msinspect.analysis.rank.context import RankContext
from msinspect.errors import MsInspectError
from msinspect.graph import node_id
from msinspect.render import DotNotFoundError, OutputExistsError, render, render_dump, write
from tests.conftest import FIXTURES

SHARDING = FIXTURES / "sharding_propagation_dryrun_8rank"
PIPELINE = FIXTURES / "recursive_pipeline_dryrun_8rank"
WORLD = RankContext(0, tuple(range(8)))
HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's 'dot' program is not installed")

_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')
_NODE = re.compile(r"^\s*(n\d+) \[(.*)\]\s*$")
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)(?: \[(.*)\])?\s*$")


def _attrs(text: str) -> dict[str, str]:
    found = {}
    for key, value in _ATTR.findall(text or ""):
        if value.startswith('"'):
            value = value[1:-1].replace('\\"', '"')
        found[key] = value.replace("\\n", "\n")
    return found


class Dot:
    """The nodes and edges of a DOT source as msinspect writes it."""

    def __init__(self, source: str):
        self.source = source
        self.nodes: dict[str, dict[str, str]] = {}
        self.edges: list[tuple[str, str, dict[str, str]]] = []
        for line in source.splitlines():
            edge = _EDGE.match(line)
            if edge:
                self.edges.append((edge.group(1), edge.group(2), _attrs(edge.group(3))))
                continue
            node = _NODE.match(line)
            if node:
                self.nodes[node.group(1)] = _attrs(node.group(2))

    def lines(self, ident: str) -> list[str]:
        return self.nodes[ident]["label"].split("\n")

    def named(self, first_line: str) -> list[str]:
        """Nodes whose label starts with that line."""
        return [i for i in self.nodes if self.lines(i)[0] == first_line]

    def one(self, first_line: str) -> str:
        found = self.named(first_line)
        assert len(found) == 1, (first_line, found)
        return found[0]

    def edge(self, source: str, target: str) -> dict[str, str]:
        found = [a for s, t, a in self.edges if s == source and t == target]
        assert found, f"no edge {self.lines(source)[0]} -> {self.lines(target)[0]}"
        return found[0]

    def ops(self) -> set[str]:
        return {self.lines(i)[0] for i in self.nodes}


@pytest.fixture(scope="module")
def validate0():
    return msinspect.load_dump(SHARDING).rank(0).load("validate")


@pytest.fixture(scope="module")
def around_matmul(validate0):
    return Dot(render(validate0, around="matmul", context=WORLD).source)


# ------------------------------------------------------------------ what the picture shows
def test_matmul_strategy_and_per_rank_shapes(around_matmul):
    dot = around_matmul
    matmul = dot.one("matmul")
    lines = dot.lines(matmul)
    assert "strategy ((2, 4), (4, 1)) (user)" in lines
    assert "in (8, 8), (8, 16)" in lines and "out (8, 16) per-rank" in lines
    assert "global out (16, 16)" in lines
    assert "bold" in dot.nodes[matmul]["style"]          # the selected operator stands out
    relu = dot.one("relu")
    assert "strategy ((2, 1)) (planner)" in dot.lines(relu)
    assert "bold" not in dot.nodes[relu]["style"]
    assert "(per-rank shapes)" in dot.source and "(global shapes)" not in dot.source


def test_inserted_allreduce_highlighted_with_its_group(around_matmul, validate0):
    dot = around_matmul
    allreduce = dot.one("AllReduce (forward)")
    node = dot.nodes[allreduce]
    assert node["shape"] == "hexagon" and node["fillcolor"] == "#f8c4c4"
    assert "group ranks 0-3" in dot.lines(allreduce)
    # its instance name as the file gives it: the AllReduce fed by matmul (MindSpore numbers
    # forward_op_<n> anew each time the fixture is regenerated, so the name is read, not pinned)
    graph = msinspect.to_networkx(validate0)
    fed = [graph.nodes[k]["node"].name for k in graph.successors(node_id(validate0.node("matmul")))
           if graph.nodes[k].get("op") == "AllReduce"]
    assert len(fed) == 1 and fed[0].startswith("forward_op_")
    assert dot.lines(allreduce)[1] == fed[0]
    matmul, relu = dot.one("matmul"), dot.one("relu")
    assert dot.edge(matmul, allreduce)["label"] == "(8, 16)"
    assert dot.edge(allreduce, relu)["label"] == "(8, 16)"
    assert not [e for e in dot.edges if e[0] == matmul and e[1] == relu]   # the AllReduce sits between


def test_redistribution_chain_and_parameters(around_matmul):
    dot = around_matmul
    chain = [dot.one("inputs0"), dot.one("AllGather (redistribution)")]
    chain += dot.named("Reshape (local)")[:1] + [dot.one("StridedSlice (local)")]
    chain += dot.named("Reshape (local)")[1:] + [dot.one("matmul")]
    shapes = [dot.edge(a, b)["label"] for a, b in zip(chain, chain[1:])]
    assert shapes == ["(2, 32)", "(8, 32)", "(1, 8, 32)", "(1, 8, 8)", "(8, 8)"]
    assert dot.nodes[chain[2]]["fillcolor"] == "#fde0c5" and dot.nodes[chain[2]]["shape"] == "box"
    weight = dot.one("w")
    assert dot.nodes[weight]["shape"] == "ellipse" and dot.lines(weight) == ["w", "(8, 16) per-rank"]
    assert dot.edge(weight, dot.one("matmul"))["label"] == "(8, 16)"   # the Load is collapsed
    assert dot.edge(dot.one("w2"), dot.one("matmul2"))["label"] == "(16, 4)"


def test_plumbing_and_backward_left_out_unless_asked(validate0, around_matmul):
    assert not {"Load", "Depend", "UpdateState", "MakeTuple"} & around_matmul.ops()
    assert "ReluGrad-op0" not in around_matmul.ops()
    plumbing = Dot(render(validate0, around="matmul", include_plumbing=True).source)
    loads = plumbing.named("Load")
    assert len(loads) == 2
    weight, matmul = plumbing.one("w"), plumbing.one("matmul")
    load = next(i for i in loads if any(s == weight for s, t, _ in plumbing.edges if t == i))
    assert plumbing.edge(weight, load)["label"] == "(8, 16)"
    assert plumbing.edge(load, matmul)["label"] == "(8, 16)"
    backward = Dot(render(validate0, around="matmul", include_backward=True, context=WORLD).source)
    assert {"ReluGrad-op0", "AllReduce (backward)", "AllReduce (gradient)"} <= backward.ops()
    mirror = backward.one("AllReduce (gradient)")
    assert "group ranks 0, 4" in backward.lines(mirror)


@pytest.mark.parametrize("depth, present, absent", [
    (0, {"matmul", "AllReduce (forward)", "w"}, {"relu", "matmul2"}),
    (1, {"relu"}, {"matmul2"}),
    (2, {"relu", "matmul2", "w2"}, {"Sub-op0"}),
])
def test_depth_counts_real_operators_only(validate0, depth, present, absent):
    ops = Dot(render(validate0, around="matmul", depth=depth).source).ops()
    assert present <= ops and not absent & ops


def test_rank4_shows_its_own_group():
    picture = render_dump(SHARDING, around="matmul", rank=4)
    dot = Dot(picture.digraph.source)
    assert picture.rank == 4 and picture.stage == "validate"
    assert picture.default_name("svg") == "matmul-rank4-validate.svg"
    assert "group ranks 4-7" in dot.lines(dot.one("AllReduce (forward)"))
    assert "rank 4, validate (per-rank shapes)" in dot.source


def test_pre_parallel_stage_says_global():
    picture = render_dump(SHARDING / "rank_0", around="matmul", stage="step_parallel_end", depth=0)
    dot = Dot(picture.digraph.source)
    assert "out (16, 16) global" in dot.lines(dot.one("matmul"))
    assert "step_parallel_end (global shapes)" in dot.source
    # the _VirtualDataset tuple is collapsed to the one element the AllGather reads
    gather = dot.one("AllGather (redistribution)")
    assert [dot.lines(s)[0] for s, t, _ in dot.edges if t == gather] == ["data"]
    excerpt = Dot(render(msinspect.parse_file(FIXTURES / "seed_002" / "step_parallel_begin_0041.excerpt.ir"),
                         around="matmul").source)
    assert "strategy ((2, 4), (4, 1)) (user)" in excerpt.lines(excerpt.one("matmul"))
    assert excerpt.named("%1") and excerpt.lines(excerpt.one("%1"))[1] == "(not in this file)"


def test_pipeline_send_shows_its_peer():
    dot = Dot(render_dump(PIPELINE, around="Send", rank=0, depth=0).digraph.source)
    sends = dot.named("Send (pipeline)")
    assert sends and all("to rank 4" in dot.lines(s) and "group ranks 0, 4" in dot.lines(s) for s in sends)


def test_whole_subgraph(validate0):
    dot = Dot(render(validate0).source)
    assert {"matmul", "relu", "matmul2", "reduce_mean", "inputs1", "learning_rate"} <= dot.ops()
    assert not {"Load", "ReluGrad-op0"} & dot.ops()
    assert not any("bold" in n["style"] and n["shape"] == "box" and "rounded" in n["style"]
                   for n in dot.nodes.values())                  # nothing selected
    with pytest.raises(MsInspectError, match="no subgraph @nope"):
        render(validate0, graph_name="nope")


def test_operators_of_several_subgraphs_in_clusters():
    ir = msinspect.parse_file(FIXTURES / "docs_2_0" / "04_abstract_specialize_0012.ir")
    source = render(ir, around="Default", depth=1).source      # a scope: every operator under it
    clusters = re.findall(r'subgraph (cluster_\d+) \{\s*color="#bbbbbb" label="@([^"]+)"', source)
    assert [name for _, name in clusters] == ["2_Default.23", "3_func.22", "1_Default_wrapper.24"]
    dot = Dot(source)
    assert "calls @3_func.22" in dot.lines(dot.one("[CNode]5"))
    assert {"sub", "add", "mul", "div", "Return"} <= dot.ops()


def test_selector_matching_nothing(validate0):
    with pytest.raises(MsInspectError, match="no operator matching 'matmull'.*close names: matmul"):
        render(validate0, around="matmull")
    scoped = Dot(render(validate0, around="_backbone-Net/matmul2", depth=0).source)
    assert "bold" in scoped.nodes[scoped.one("matmul2")]["style"]


# ------------------------------------------------------------------ files
def test_missing_dot_writes_source_and_says_how_to_install(validate0, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    digraph = render(validate0, around="matmul")
    with pytest.raises(DotNotFoundError) as caught:
        write(digraph, tmp_path / "m.svg", "svg")
    message = str(caught.value)
    assert "'dot' was not found" in message
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install graphviz"):
        assert hint in message
    assert caught.value.dot_path == tmp_path / "m.dot" and str(tmp_path / "m.dot") in message
    assert (tmp_path / "m.dot").read_text() == digraph.source
    assert not (tmp_path / "m.svg").exists()
    # graphviz's own lookup failing (dot seen by which, gone when called) reads the same
    monkeypatch.setattr(render_mod.files, "dot_available", lambda: True)
    with pytest.raises(DotNotFoundError):
        write(digraph, tmp_path / "n.png", "png")
    assert (tmp_path / "n.dot").is_file()


def test_dot_format_needs_no_program(validate0, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    digraph = render(validate0, around="matmul")
    assert write(digraph, tmp_path / "m.dot", "dot") == tmp_path / "m.dot"
    assert Dot((tmp_path / "m.dot").read_text()).one("matmul")


def test_never_overwrites_unless_asked(validate0, tmp_path):
    digraph = render(validate0, around="matmul")
    (tmp_path / "m.dot").write_text("mine")
    with pytest.raises(OutputExistsError, match="m.dot"):
        write(digraph, tmp_path / "m.svg", "svg")
    assert (tmp_path / "m.dot").read_text() == "mine" and not (tmp_path / "m.svg").exists()
    write(digraph, tmp_path / "m.dot", "dot", overwrite=True)
    assert (tmp_path / "m.dot").read_text() == digraph.source


@needs_dot
def test_svg_and_png_pictures(validate0, tmp_path):
    digraph = render(validate0, around="matmul", context=WORLD)
    svg = write(digraph, tmp_path / "m.svg", "svg")
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    shown = html.unescape(text)  # Graphviz writes a label's "-" as "&#45;"
    assert "group ranks 0-3" in shown and "strategy ((2, 4), (4, 1)) (user)" in shown
    png = write(digraph, tmp_path / "m.png", "png")   # beside the SVG: same m.dot, same source
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(OutputExistsError, match="m.svg"):
        write(digraph, tmp_path / "m.svg", "svg")


# ------------------------------------------------------------------ the command
def msinspect_cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "msinspect.cli", "render", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_cli_default_name_and_picture(tmp_path):
    run = msinspect_cli(SHARDING, "--op", "matmul", "--rank", "4", cwd=tmp_path)
    dot_file = tmp_path / "matmul-rank4-validate.dot"
    assert dot_file.is_file(), run.stderr
    assert "group ranks 4-7" in dot_file.read_text()
    if HAVE_DOT:
        assert run.returncode == 0, run.stderr
        assert "<svg" in (tmp_path / "matmul-rank4-validate.svg").read_text()
    else:
        assert run.returncode == 3 and "apt-get install graphviz" in run.stderr


def test_cli_missing_dot_exit_3(tmp_path):
    env = {"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path)}
    run = msinspect_cli(SHARDING / "rank_0", "--op", "relu", "-o", "pic.png", cwd=tmp_path, env=env)
    assert run.returncode == 3, run.stderr
    assert "'dot' was not found" in run.stderr and "brew install graphviz" in run.stderr
    assert "pic.dot" in run.stderr and (tmp_path / "pic.dot").is_file()
    assert not (tmp_path / "pic.png").exists()


def test_cli_bad_input_exit_2(tmp_path):
    run = msinspect_cli(tmp_path / "nowhere", "--op", "matmul", cwd=tmp_path)
    assert run.returncode == 2 and "no such file or folder" in run.stderr
    run = msinspect_cli(SHARDING, "--op", "no_such_op", "--format", "dot", cwd=tmp_path)
    assert run.returncode == 2 and "no operator matching 'no_such_op'" in run.stderr
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "matmul-rank0-validate.dot").write_text("mine")
    run = msinspect_cli(SHARDING, "--op", "matmul", "--format", "dot", cwd=tmp_path)
    assert run.returncode == 2 and "exists already" in run.stderr
    assert (tmp_path / "matmul-rank0-validate.dot").read_text() == "mine"
    run = msinspect_cli(SHARDING, "--op", "matmul", "--format", "dot", "--overwrite", cwd=tmp_path)
    assert run.returncode == 0 and "matmul" in (tmp_path / "matmul-rank0-validate.dot").read_text()


def test_cli_help_documents_exit_codes(tmp_path):
    run = msinspect_cli("--help", cwd=tmp_path)
    assert run.returncode == 0
    assert "3 Graphviz's 'dot' program is missing" in " ".join(run.stdout.split())
