"""Assembling the DOT graph: :func:`render` picks the view and draws its nodes (styled by what
they are), clusters per subgraph and the edges with the shapes they carry."""
from __future__ import annotations

from pathlib import Path

import graphviz
import networkx as nx

from msinspect.analysis.rank.comm import group_ranks, kind_of
from msinspect.mindspore.vocabulary import VOCABULARY, is_comm, planner_ran
from msinspect.analysis.rank.context import RankContext, shapes_are_global
from msinspect.analysis.dataflow.node_facts import is_plumbing
from msinspect.errors import MsInspectError
from msinspect.graph import lint, node_id, to_networkx
from msinspect.model import IRFile, Node, NodeKind, format_node
from msinspect.render.labels import comm_label, edge_label, esc, label_lines, op_label, param_label
from msinspect.render.view import View, neighbourhood, pick_seeds, with_parameters

_STYLE_REAL = {"shape": "box", "style": "rounded,filled", "fillcolor": "#e8eef7", "color": "#4a6fa5"}
_STYLE_SELECTED = {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#ffe9a8", "color": "#b8860b",
                   "penwidth": "2.5"}
_STYLE_COMM = {"shape": "hexagon", "style": "filled,bold", "fillcolor": "#f8c4c4", "color": "#c0392b",
               "penwidth": "2", "fontcolor": "#7b1d14"}
_STYLE_REDISTRIBUTION = {"shape": "box", "style": "filled,dashed,bold", "fillcolor": "#fde0c5",
                         "color": "#d35400", "penwidth": "2"}
_STYLE_PARAM = {"shape": "ellipse", "style": "filled", "fillcolor": "#eeeeee", "color": "#888888",
                "fontsize": "9"}
_STYLE_PLUMBING = {"shape": "box", "style": "dashed", "color": "#999999", "fontcolor": "#666666", "fontsize": "9"}
_STYLE_RETURN = {"shape": "doublecircle", "fontsize": "9", "color": "#666666"}


def render(ir: IRFile, *, around: str | None = None, depth: int = 2, graph_name: str | None = None,
           include_backward: bool = False, include_plumbing: bool = False,
           context: RankContext | None = None) -> graphviz.Digraph:
    """Draw the operators around those matching ``around`` (an instance name like ``matmul``, a
    scope-qualified one like ``layer1-Dense/matmul``, or a scope), up to ``depth`` real-operator
    hops upstream and downstream; without ``around``, the whole subgraph ``graph_name`` (default:
    the file's entry graph). ``context`` (the file's rank and the job's ranks) completes the group
    of world-group collectives and pipeline peers.

    Raises :class:`~msinspect.errors.MsInspectError` when nothing matches ``around`` or there is no
    such subgraph.
    """
    if depth < 0:
        raise MsInspectError(f"depth must be 0 or more, not {depth}")
    context = context or RankContext()
    graph = with_left_out(to_networkx(ir), ir)
    view = View(graph, include_backward, include_plumbing)
    if around is None and graph_name is None:
        graph_name = ir.entry or (ir.subgraphs[0].name if ir.subgraphs else None)
        if graph_name is None:
            raise MsInspectError(f"{ir.path}: no subgraph to draw")
    seeds = pick_seeds(ir, view, around, graph_name)
    seed_keys = [node_id(n) for n in seeds]
    if around is None:
        keys = {k for k in seed_keys if not view.excluded(k) and not view.hidden(k)}
    else:
        keys = neighbourhood(view, seed_keys, depth)
    keys = with_parameters(view, keys)
    return _draw(ir, graph, view, keys, set(seed_keys) if around is not None else set(), context,
                 _title(ir, around, graph_name, depth, context))


def with_left_out(graph: nx.MultiDiGraph, ir: IRFile) -> nx.MultiDiGraph:
    """The graph with what the file's operands name but the file leaves out (an excerpt's
    earlier nodes and undeclared weights, :func:`msinspect.graph.lint`'s findings) drawn as
    inputs: ``%1 (not in this file)``, or the weight's name. The picture's own copy: the graph
    itself makes up nothing."""
    findings = [f for f in lint(ir) if f.operand is not None]
    if not findings:
        return graph
    graph = graph.copy()
    for f in findings:
        if f.operand not in graph:
            graph.add_node(f.operand, kind=NodeKind.PARAMETER, name=f.operand.split("_", 1)[-1], op="Parameter",
                           graph=None, line=0, output_shapes=(), dtypes=(), left_out=True)
        graph.add_edge(f.operand, f.target, position=f.position)
    return graph


def render_around(ir: IRFile, seeds: list[Node], *, depth: int = 2, include_backward: bool = False,
                  include_plumbing: bool = False, context: RankContext | None = None,
                  graph: nx.MultiDiGraph | None = None, what: str | None = None) -> graphviz.Digraph:
    """Draw the operators within ``depth`` hops of the given nodes of ``ir`` (already chosen, as
    the report does for one collective among many of the same name); ``graph``: ``ir``'s networkx
    graph when the caller holds it; ``what``: the title's name for the seeds."""
    if depth < 0:
        raise MsInspectError(f"depth must be 0 or more, not {depth}")
    if not seeds:
        raise MsInspectError(f"{ir.path}: no operator to draw around")
    context = context or RankContext()
    graph = graph if graph is not None else with_left_out(to_networkx(ir), ir)
    view = View(graph, include_backward, include_plumbing)
    seed_keys = [node_id(n) for n in seeds]
    keys = with_parameters(view, neighbourhood(view, seed_keys, depth))
    title = _title(ir, what or ", ".join(dict.fromkeys(n.name for n in seeds)), None, depth, context)
    return _draw(ir, graph, view, keys, set(seed_keys), context, title)


def _title(ir: IRFile, around: str | None, graph_name: str | None, depth: int, context: RankContext) -> str:
    what = f"around {around} (depth {depth})" if around is not None else f"subgraph @{graph_name}"
    if around is not None and graph_name is not None:
        what += f" in @{graph_name}"
    rank = f"rank {context.rank}, " if context.rank is not None else ""
    where = "global" if shapes_are_global(ir.path) else "per-rank"
    return f"{what}\\n{rank}{ir.stage} ({where} shapes)\\n{esc(Path(ir.path).name)}"


def _draw(ir: IRFile, graph: nx.MultiDiGraph, view: View, keys: set[str], selected: set[str],
          context: RankContext, title: str) -> graphviz.Digraph:
    where = "global" if shapes_are_global(ir.path) else "per-rank"
    planner = planner_ran(ir.stage, ir.attrs)  # a collective's kind as the comm table tells it
    order = sorted(keys, key=lambda k: (not view.is_param(k), graph.nodes[k].get("line", 0), k))
    ids = {key: f"n{i}" for i, key in enumerate(order)}
    dot = graphviz.Digraph(name="msinspect", comment=f"msinspect render of {ir.path}")
    dot.attr(label=graphviz.nohtml(title), labelloc="t", fontsize="12", fontname="Helvetica", rankdir="TB")
    dot.attr("node", fontname="Helvetica", fontsize="10")
    dot.attr("edge", fontname="Helvetica", fontsize="9", color="#555555")

    by_graph: dict[str | None, list[str]] = {}
    for key in order:
        by_graph.setdefault(graph.nodes[key].get("graph"), []).append(key)
    clustered = len([g for g in by_graph if g is not None]) > 1
    for i, (owner, members) in enumerate(by_graph.items()):
        if clustered and owner is not None:
            with dot.subgraph(name=f"cluster_{i}") as sub:
                sub.attr(label=graphviz.nohtml(esc("@" + owner)), style="rounded", color="#bbbbbb")
                for key in members:
                    _add_node(sub, key, ids[key], graph, view, selected, context, where, planner)
        else:
            for key in members:
                _add_node(dot, key, ids[key], graph, view, selected, context, where, planner)

    for key in order:
        for source, hop_target, position in view.inputs(key, data_only=False):
            if source not in ids:
                continue
            ordering = not view.carries_data(source, hop_target, position)
            label = edge_label(graph, source, hop_target, position)
            attrs = {"style": "dashed", "color": "#aaaaaa"} if ordering else {}
            dot.edge(ids[source], ids[key], label=graphviz.nohtml(esc(label)) if label and not ordering else None,
                     **attrs)
    return dot


def _add_node(dot: graphviz.Digraph, key: str, ident: str, graph: nx.MultiDiGraph, view: View,
              selected: set[str], context: RankContext, where: str, planner: bool | None = None) -> None:
    data = graph.nodes[key]
    node: Node | None = data.get("node")
    # a node as every message names it (where, then what); a parameter by its key and line
    tooltip = graphviz.nohtml(esc(format_node(node) if node is not None else f"{key} (line {data.get('line', 0)})"))
    if node is None:
        dot.node(ident, param_label(key, data, where), tooltip=tooltip, **_STYLE_PARAM)
    elif node.index is None:
        dot.node(ident, label_lines("Return", f"@{node.graph}"), tooltip=tooltip, **_STYLE_RETURN)
    elif is_comm(node):
        style = _STYLE_COMM if node.op in VOCABULARY else _STYLE_REDISTRIBUTION
        if key in selected:  # the operator drawn around: a double border (the SVG's class "focus")
            style = {**style, "peripheries": "2", "class": "focus"}
        label = comm_label(node, kind_of(node, graph, key, planner), group_ranks(node, context), where)
        dot.node(ident, label, tooltip=tooltip, **style)
    elif is_plumbing(node):
        dot.node(ident, label_lines(node.op, node.name if node.name != node.op else None), tooltip=tooltip,
                 **_STYLE_PLUMBING)
    else:
        style = {**_STYLE_SELECTED, "class": "focus"} if key in selected else _STYLE_REAL
        dot.node(ident, op_label(node, where), tooltip=tooltip, **style)
