"""An operand that names nothing is reported by :func:`msinspect.graph.lint` and by ``msinspect
parse`` (a warning), and gets no edge and no made-up node in the graph."""
from __future__ import annotations

import json
import subprocess
import sys

from msinspect import parse_text, to_networkx
from msinspect.graph import lint
from msinspect.model import NodeKind

# A hand-written 2.10 file: line 8 takes %7, which @g does not have; line 10 takes %para9_w,
# a parameter neither the file nor @g declares; line 12 takes a free variable of a graph @h
# the file does not hold. Everything else names something.
DANGLING = """\
# IR entry: @g
# Total subgraphs: 1

subgraph attr:
subgraph @g(%para1_x) {
  %0(CNode_1) = ReLU(%para1_x)
      : (<Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
  %1(CNode_2) = Add(%0, %7)
      : (<Tensor[Float32], (4)>, <Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
  %2(CNode_3) = Mul(%1, %para9_w)
      : (<Tensor[Float32], (4)>, <Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
  %3(CNode_4) = Sub(%2, $(@h:para2_y))
      : (<Tensor[Float32], (4)>, <Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
  Return(%3)
      : (<Tensor[Float32], (4)>)
}

"""


def test_lint_names_each_operand_that_names_nothing():
    ir = parse_text(DANGLING, "dangling.ir")
    found = [(f.path, f.line, f.what) for f in lint(ir)]
    assert found == [
        ("dangling.ir", 8, "operand 1 of %1 Add (call_primitive) in @g: %7 names nothing in this file"),
        ("dangling.ir", 10, "operand 1 of %2 Mul (call_primitive) in @g: %para9_w names nothing in this file"),
        ("dangling.ir", 12, "operand 1 of %3 Sub (call_primitive) in @g: $(@h:para2_y) names nothing in this file"),
    ]


def test_the_graph_makes_up_no_node_for_them():
    g = to_networkx(parse_text(DANGLING, "dangling.ir"))
    # the subgraph's own parameter is a parameter node; nothing else is
    assert [k for k, d in g.nodes(data=True) if d["kind"] == NodeKind.PARAMETER] == ["param:para1_x"]
    assert set(g) == {"param:para1_x", "g/%0", "g/%1", "g/%2", "g/%3", "g/Return"}
    assert {(u, v, d["position"]) for u, v, d in g.edges(data=True)} == {
        ("param:para1_x", "g/%0", 0), ("g/%0", "g/%1", 0), ("g/%1", "g/%2", 0), ("g/%2", "g/%3", 0),
        ("g/%3", "g/Return", 0)}


def test_a_file_that_names_everything_has_no_finding():
    whole = DANGLING.replace("%7", "%0").replace("%para9_w", "%para1_x").replace("$(@h:para2_y)", "%1")
    assert lint(parse_text(whole, "whole.ir")) == []


def test_parse_warns_and_still_reads_the_file_whole(tmp_path):
    path = tmp_path / "dangling.ir"
    path.write_text(DANGLING, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "msinspect.cli", "parse", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr  # read whole: a warning, not a failure
    assert f"warning: {path}:8: operand 1 of %1 Add (call_primitive) in @g: %7 names nothing" in run.stderr
    assert run.stderr.count("warning:") == 3
    as_json = subprocess.run([sys.executable, "-m", "msinspect.cli", "parse", str(path), "--json"],
                             capture_output=True, text=True, timeout=300)
    (row,) = json.loads(as_json.stdout)
    assert [f["line"] for f in row["findings"]] == [8, 10, 12]
