"""Pictures of a parsed IR file with graphviz: the operators around a selected one (or a whole
subgraph), their strategies and shapes, and the communication the parallel pass inserted.

:func:`render` builds a :class:`graphviz.Digraph`; :func:`write` saves its ``.dot`` source and,
when graphviz's ``dot`` program is installed, the SVG or PNG picture.

What is drawn:

- real operators (boxes): name, op, strategy with who set it (user / planner), input and output
  shapes, marked *per-rank* or *global* by the file's stage; the selected operators in bold;
- communication and redistribution operators (red hexagons / orange boxes): op, kind
  (forward, redistribution, gradient ...), the ranks of their group, the tensor they move;
- parameters (small grey ellipses) with their shapes;
- edges labelled with the shape of the tensor they carry.

Plumbing (``Load``, ``Depend``, ``UpdateState``, ``MakeTuple``, ``TupleGetItem`` ...) is collapsed
into the edges unless asked for, and the gradient graph is left out unless asked for.
"""
from __future__ import annotations

import difflib
import re
import shutil
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import graphviz
import networkx as nx

from msinspect.analysis.comm import group_ranks, kind_of
from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.ops import COMM_OPS, as_shape, is_backward, is_comm, is_plumbing, matches
from msinspect.errors import MsInspectError
from msinspect.graph import node_id, to_networkx
from msinspect.model import Abstract, GraphRef, IRFile, Node

#: Picture formats :func:`write` asks ``dot`` for; ``dot`` alone writes only the source.
FORMATS = ("svg", "png", "dot")

INSTALL_HINT = (
    "install Graphviz, which provides it:\n"
    "  Debian/Ubuntu:  sudo apt-get install graphviz\n"
    "  macOS:          brew install graphviz\n"
    "  conda:          conda install graphviz\n"
    "(the Python package 'graphviz' alone is not enough: it calls the 'dot' program)"
)

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


class DotNotFoundError(MsInspectError):
    """Graphviz's ``dot`` program is not installed: the ``.dot`` source was written, no picture."""

    def __init__(self, dot_path: Path, fmt: str):
        self.dot_path = Path(dot_path)
        """Where the ``.dot`` source was written."""
        self.format = fmt
        """The picture format that could not be made."""
        super().__init__(
            f"the Graphviz program 'dot' was not found on PATH, so no {fmt.upper()} picture was made; "
            f"{INSTALL_HINT}\n"
            f"The graph source was written to {self.dot_path}; once 'dot' is installed, draw it with:\n"
            f"  dot -T{fmt} {self.dot_path} -o {self.dot_path.with_suffix('.' + fmt)}")


class OutputExistsError(MsInspectError):
    """An output file exists already and overwriting was not asked for."""


# ------------------------------------------------------------------ what is drawn
def _data_edge(graph: nx.MultiDiGraph, source: str, target: str, position: int | None) -> bool:
    """Whether the edge carries data rather than only ordering side effects (monads)."""
    target_op = graph.nodes[target].get("op")
    if target_op == "UpdateState" or graph.nodes[source].get("op") == "UpdateState":
        return False
    if target_op in ("Depend", "Load") and position != 0:
        return False
    return True


class _View:
    """The file's graph as the picture sees it: which nodes are shown, which are walked through
    (collapsed plumbing), which are left out (the gradient graph unless asked)."""

    def __init__(self, graph: nx.MultiDiGraph, include_backward: bool, include_plumbing: bool):
        self.graph = graph
        self.include_backward = include_backward
        self.include_plumbing = include_plumbing

    def node(self, key: str) -> Node | None:
        return self.graph.nodes[key].get("node")

    def is_param(self, key: str) -> bool:
        return self.graph.nodes[key].get("kind") == "parameter"

    def excluded(self, key: str) -> bool:
        node = self.node(key)
        return node is not None and not self.include_backward and is_backward(node)

    def hidden(self, key: str) -> bool:
        """Collapsed into the edges: plumbing, unless plumbing is drawn."""
        node = self.node(key)
        return node is not None and not self.include_plumbing and is_plumbing(node)

    def free(self, key: str) -> bool:
        """Walking onto it costs no hop: communication sits between real operators, and parameters
        and (drawn) plumbing only carry values."""
        node = self.node(key)
        return node is None or is_comm(node) or is_plumbing(node)

    def inputs(self, key: str, *, data_only: bool = True) -> list[tuple[str, str, int]]:
        """Shown nodes feeding ``key`` through collapsed plumbing, as ``(source, first_hop_target,
        position)``: the last edge of the way, whose target input type names the tensor. Ordering
        edges (monads) are followed only when ``data_only`` is False and plumbing is drawn."""
        return self._walk(key, upstream=True, data_only=data_only or not self.include_plumbing)

    def outputs(self, key: str) -> list[str]:
        """Shown nodes fed with data by ``key`` through collapsed plumbing."""
        return [target for target, _, _ in self._walk(key, upstream=False, data_only=True)]

    def _walk(self, start: str, upstream: bool, data_only: bool) -> list[tuple[str, str, int]]:
        # Each queued node carries the element it stands for when it is a collapsed tuple
        # (MakeTuple, _VirtualDataset) reached through a TupleGetItem, so that only that element's
        # producer is followed upstream, and only that element's TupleGetItem downstream.
        found: dict[tuple[str, str, int], None] = {}
        seen = {(start, None)}
        queue: deque[tuple[str, int | None]] = deque([(start, None)])
        while queue:
            current, element = queue.popleft()
            edges = (self.graph.in_edges(current, data=True) if upstream
                     else self.graph.out_edges(current, data=True))
            for source, target, data in edges:
                other = source if upstream else target
                position = data.get("position")
                if element is not None and element != (position if upstream else _item_index(self.graph, target)):
                    continue
                if self.excluded(other) or (data_only and not _data_edge(self.graph, source, target, position)):
                    continue
                if not self.hidden(other):
                    found[(other, target, position)] = None
                    continue
                picked = None
                if _is_tuple_maker(self.graph, other):
                    picked = _item_index(self.graph, current) if upstream else position
                if (other, picked) not in seen:
                    seen.add((other, picked))
                    queue.append((other, picked))
        return list(found)


def _is_tuple_maker(graph: nx.MultiDiGraph, key: str) -> bool:
    return graph.nodes[key].get("op") in ("MakeTuple", "_VirtualDataset")


def _item_index(graph: nx.MultiDiGraph, key: str) -> int | None:
    """The constant index of a ``TupleGetItem``; None for any other node."""
    node = graph.nodes[key].get("node")
    if node is None or node.op != "TupleGetItem" or len(node.inputs) < 2:
        return None
    index = node.inputs[1]
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def _neighbourhood(view: _View, seeds: list[str], depth: int) -> set[str]:
    """The seeds and every shown node within ``depth`` real-operator hops upstream or downstream."""
    keep = set(seeds)
    for upstream in (True, False):
        best = {key: 0 for key in seeds}
        queue = deque((key, 0) for key in seeds)
        while queue:
            key, dist = queue.popleft()
            if dist > best.get(key, dist):
                continue
            step = ([source for source, _, _ in view.inputs(key)] if upstream else view.outputs(key))
            for other in step:
                cost = 0 if view.free(other) else 1
                if dist + cost > depth or best.get(other, depth + 1) <= dist + cost:
                    continue
                best[other] = dist + cost
                keep.add(other)
                if cost:
                    queue.append((other, dist + cost))
                else:
                    queue.appendleft((other, dist))
    return keep


def _with_parameters(view: _View, keys: set[str]) -> set[str]:
    """Add the parameters read by the drawn operators, with the ``Load`` reading them when
    plumbing is drawn."""
    extra: set[str] = set()
    for key in keys:
        for source, _, _ in view.inputs(key):
            node = view.node(source)
            if view.is_param(source):
                extra.add(source)
            elif node is not None and node.op == "Load" and source not in keys:
                params = [s for s, _, _ in view.inputs(source) if view.is_param(s)]
                if params:
                    extra.update([source, *params])
    return keys | extra


def _seeds(ir: IRFile, view: _View, around: str | None, graph_name: str | None) -> list[Node]:
    nodes = [n for n in ir.nodes() if n.index is not None]
    if graph_name is not None:
        name = graph_name.lstrip("@")
        names = [g.name for g in ir.subgraphs]
        if name not in names:
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.3)
            hint = f"; did you mean {', '.join('@' + c for c in close)}?" if close else f" (it has {len(names)})"
            raise MsInspectError(f"{ir.path}: no subgraph @{name}{hint}")
        nodes = [n for n in nodes if n.graph == name]
    if around is None:
        return nodes
    found = [n for n in nodes if matches(n, around)]
    if not found:
        named = sorted({n.instance_name for n in nodes if n.instance_name})
        close = difflib.get_close_matches(around, named, n=5, cutoff=0.5)
        hint = f"; close names: {', '.join(close)}" if close else ""
        where = f" in subgraph @{graph_name.lstrip('@')}" if graph_name else ""
        raise MsInspectError(f"{ir.path}: no operator matching {around!r}{where}{hint}")
    shown = [n for n in found if not view.excluded(node_id(n))]
    if not shown:
        raise MsInspectError(
            f"{ir.path}: the {len(found)} operator(s) matching {around!r} are all in the gradient graph; "
            "draw it with include_backward=True (--backward)")
    return shown


# ------------------------------------------------------------------ labels
def _esc(text: object) -> str:
    """Text for a DOT label: backslashes doubled (lines are joined with DOT's ``\\n``)."""
    return str(text).replace("\\", "\\\\")


def _shape_text(abstract: Abstract | None) -> str | None:
    if abstract is None:
        return None
    if abstract.shape is not None and abstract.kind in ("Tensor", "Ref"):
        return str(abstract.shape)
    if abstract.elements:
        return "(" + ", ".join(str(s) for s in abstract.elements if s is not None) + ")"
    return None


def _shapes(abstracts) -> str:
    texts = [t for t in (_shape_text(a) for a in abstracts) if t]
    return ", ".join(texts)


def _strategy_text(node: Node) -> str | None:
    strategy = node.strategy
    if strategy is None or strategy.in_strategy is None:
        return None
    cuts = ", ".join("(" + ", ".join(str(d) for d in dims) + ")" for dims in strategy.in_strategy)
    return f"strategy ({cuts}) ({strategy.source})"


def _lines(*lines: str | None) -> str:
    return graphviz.nohtml("\\n".join(_esc(line) for line in lines if line))


def _op_label(node: Node, where: str) -> str:
    ins, outs = _shapes(node.input_types), _shapes(node.output_types)
    origin = as_shape(node.cnode_primal_attrs.get("origin_output_shape"))
    callee = node.callee.name if node.callee_kind in ("call", "graph") and isinstance(node.callee, GraphRef) else None
    return _lines(
        node.name,
        node.op if node.op != node.name else None,
        f"calls @{callee}" if callee else None,
        _strategy_text(node),
        f"in {ins}" if ins else None,
        f"out {outs} {where}" if outs else None,
        f"global out {origin}" if origin is not None and where == "per-rank" else None,
    )


def _comm_label(node: Node, kind: str, ranks: tuple[int, ...] | None, where: str) -> str:
    moved = _shapes(node.input_types[:1]) or _shapes(node.output_types)
    result = _shapes(node.output_types)
    peer = None
    if node.op == "Send" and isinstance(node.primitive_attrs.get("dest_rank"), int):
        peer = f"to rank {node.primitive_attrs['dest_rank']}"
    if node.op == "Receive" and isinstance(node.primitive_attrs.get("src_rank"), int):
        peer = f"from rank {node.primitive_attrs['src_rank']}"
    return _lines(
        f"{node.op} ({kind})",
        node.name if node.name != node.op else None,
        f"group ranks {ranks}" if ranks else None,
        peer,
        f"{moved} -> {result} {where}" if moved and result and moved != result else
        (f"{moved or result} {where}" if moved or result else None),
    )


def _param_label(key: str, data: dict, where: str) -> str:
    if not key.startswith("param:"):  # a node an excerpt refers to but does not hold
        return _lines(key.rsplit("/", 1)[-1], "(not in this file)")
    shapes = [s for s in data.get("output_shapes", ()) if s is not None]
    return _lines(data.get("name"), f"{shapes[0]} {where}" if shapes else None)


# ------------------------------------------------------------------ the picture
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
    graph = to_networkx(ir)
    view = _View(graph, include_backward, include_plumbing)
    if around is None and graph_name is None:
        graph_name = ir.entry or (ir.subgraphs[0].name if ir.subgraphs else None)
        if graph_name is None:
            raise MsInspectError(f"{ir.path}: no subgraph to draw")
    seeds = _seeds(ir, view, around, graph_name)
    seed_keys = [node_id(n) for n in seeds]
    if around is None:
        keys = {k for k in seed_keys if not view.excluded(k) and not view.hidden(k)}
    else:
        keys = _neighbourhood(view, seed_keys, depth)
    keys = _with_parameters(view, keys)
    return _draw(ir, graph, view, keys, set(seed_keys) if around is not None else set(), context,
                 _title(ir, around, graph_name, depth, context))


def _title(ir: IRFile, around: str | None, graph_name: str | None, depth: int, context: RankContext) -> str:
    what = f"around {around} (depth {depth})" if around is not None else f"subgraph @{graph_name}"
    if around is not None and graph_name is not None:
        what += f" in @{graph_name}"
    rank = f"rank {context.rank}, " if context.rank is not None else ""
    where = "global" if shapes_are_global(ir.path) else "per-rank"
    return f"{what}\\n{rank}{ir.stage} ({where} shapes)\\n{_esc(Path(ir.path).name)}"


def _draw(ir: IRFile, graph: nx.MultiDiGraph, view: _View, keys: set[str], selected: set[str],
          context: RankContext, title: str) -> graphviz.Digraph:
    where = "global" if shapes_are_global(ir.path) else "per-rank"
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
                sub.attr(label=graphviz.nohtml(_esc("@" + owner)), style="rounded", color="#bbbbbb")
                for key in members:
                    _add_node(sub, key, ids[key], graph, view, selected, context, where)
        else:
            for key in members:
                _add_node(dot, key, ids[key], graph, view, selected, context, where)

    for key in order:
        for source, hop_target, position in view.inputs(key, data_only=False):
            if source not in ids:
                continue
            ordering = not _data_edge(graph, source, hop_target, position)
            label = _edge_label(graph, source, hop_target, position)
            attrs = {"style": "dashed", "color": "#aaaaaa"} if ordering else {}
            dot.edge(ids[source], ids[key], label=graphviz.nohtml(_esc(label)) if label and not ordering else None,
                     **attrs)
    return dot


def _add_node(dot: graphviz.Digraph, key: str, ident: str, graph: nx.MultiDiGraph, view: _View,
              selected: set[str], context: RankContext, where: str) -> None:
    data = graph.nodes[key]
    node: Node | None = data.get("node")
    tooltip = graphviz.nohtml(_esc(f"{key} (line {data.get('line', 0)})"))
    if node is None:
        dot.node(ident, _param_label(key, data, where), tooltip=tooltip, **_STYLE_PARAM)
    elif node.index is None:
        dot.node(ident, _lines("Return", f"@{node.graph}"), tooltip=tooltip, **_STYLE_RETURN)
    elif is_comm(node):
        style = _STYLE_COMM if node.op in COMM_OPS else _STYLE_REDISTRIBUTION
        label = _comm_label(node, kind_of(node, graph, key), group_ranks(node, context), where)
        dot.node(ident, label, tooltip=tooltip, **style)
    elif is_plumbing(node):
        dot.node(ident, _lines(node.op, node.name if node.name != node.op else None), tooltip=tooltip,
                 **_STYLE_PLUMBING)
    else:
        style = _STYLE_SELECTED if key in selected else _STYLE_REAL
        dot.node(ident, _op_label(node, where), tooltip=tooltip, **style)


def _edge_label(graph: nx.MultiDiGraph, source: str, hop_target: str, position: int | None) -> str | None:
    """The tensor's shape: as the consuming input states it, else as the producer's output."""
    target = graph.nodes[hop_target].get("node")
    if target is not None and position is not None and position < len(target.input_types):
        text = _shape_text(target.input_types[position])
        if text:
            return text
    shapes = [s for s in graph.nodes[source].get("output_shapes", ()) if s is not None]
    return ", ".join(str(s) for s in shapes) or None


# ------------------------------------------------------------------ files
def dot_path_for(out_path: str | Path, fmt: str) -> Path:
    """Where the ``.dot`` source of a picture goes: beside it, same name, ``.dot`` suffix."""
    out_path = Path(out_path)
    return out_path if fmt == "dot" else out_path.with_suffix(".dot")


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on PATH."""
    return shutil.which("dot") is not None


def write(digraph: graphviz.Digraph, out_path: str | Path, fmt: str = "svg", *, overwrite: bool = False) -> Path:
    """Write ``digraph``'s ``.dot`` source (always) and, for ``svg`` / ``png``, the picture at
    ``out_path`` made by Graphviz's ``dot``. Returns the picture's path (the ``.dot`` for ``dot``).

    Raises :class:`OutputExistsError` when an output file exists and ``overwrite`` is False, before
    writing anything (a ``.dot`` holding the same source, as when drawing both SVG and PNG, is
    fine), and :class:`DotNotFoundError`, after writing the ``.dot``, when ``dot`` is not installed.
    """
    if fmt not in FORMATS:
        raise MsInspectError(f"unknown picture format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out_path = Path(out_path)
    source_path = dot_path_for(out_path, fmt)
    targets = [source_path] if fmt == "dot" else [source_path, out_path]
    # a .dot holding this very source (the SVG drawn, now the PNG) is no loss to rewrite
    folders = [str(p) for p in targets if p.is_dir()]
    if folders:  # --overwrite replaces files, never folders
        raise OutputExistsError(f"{', '.join(folders)}: is a folder, not a file; --overwrite replaces files "
                                f"only: name a picture file (e.g. -o {Path(folders[0]) / ('graph.' + fmt)})")
    existing = [str(p) for p in targets if p.exists() and not (p == source_path and _holds(p, digraph.source))]
    if existing and not overwrite:
        raise OutputExistsError(f"{', '.join(existing)}: exists already; not overwritten "
                                "(choose another output name, or overwrite=True / --overwrite)")
    if out_path.parent and not out_path.parent.is_dir():
        raise MsInspectError(f"{out_path.parent}: no such folder")
    _write_file(source_path, digraph.source.encode("utf-8"))
    if fmt == "dot":
        return source_path
    if not dot_available():
        raise DotNotFoundError(source_path, fmt)
    try:
        picture = graphviz.pipe("dot", fmt, digraph.source.encode("utf-8"))
    except graphviz.ExecutableNotFound as error:
        raise DotNotFoundError(source_path, fmt) from error
    except graphviz.CalledProcessError as error:
        stderr = error.stderr
        message = stderr.decode("utf-8", "replace").strip() if isinstance(stderr, bytes) else str(stderr or error)
        raise MsInspectError(f"dot failed on {source_path}: {message}") from error
    _write_file(out_path, picture)
    return out_path


def _write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``; an OS refusal (permissions, a full disk) is a
    :class:`MsInspectError` naming the path."""
    try:
        path.write_bytes(data)
    except OSError as error:
        raise MsInspectError(f"{path}: cannot be written: {error.strerror or error}") from None


@dataclass
class Picture:
    """A rendered graph and what it was drawn from."""

    digraph: graphviz.Digraph
    """The graph, ready for :func:`write`."""
    file: Path
    """The IR file drawn."""
    rank: int | None
    """The rank that wrote it, when its folder says (``rank_N``)."""
    stage: str
    """The file's stage."""
    what: str
    """The selector, or the subgraph's name, for file names."""
    diagnostics: list = field(default_factory=list)
    """Under ``lenient``: what was skipped in the file (empty when it was read whole)."""
    unreadable: list = field(default_factory=list)
    """IR files of the rank that could not be read (:class:`~msinspect.dumps.Unreadable`): a
    stage drawn may stand in for one of them."""

    def default_name(self, fmt: str) -> str:
        """``matmul-rank0-validate.svg``."""
        return default_name(self.what, self.rank, self.stage, fmt)


def render_dump(path: str | Path, *, around: str | None = None, graph_name: str | None = None,
                rank: int | None = None, stage: str | None = None, depth: int = 2,
                include_backward: bool = False, include_plumbing: bool = False, lenient: bool = False,
                on_skipped=None) -> Picture:
    """Render from a dump root (``rank`` picks the rank, default the first), a rank folder or one
    file; ``stage`` picks the file (default: the one analyses read, see
    :func:`~msinspect.analysis.collect.pick_file`). The job's ranks, when the dump tells them,
    complete the groups of world-group collectives."""
    from msinspect.analysis.collect import pick_file, world_of
    from msinspect.dumps import load_dump
    from msinspect.parser import parse_file

    dump = load_dump(path)
    rank_dump = dump.rank(rank) if rank is not None else dump.ranks[0]
    file = pick_file(rank_dump, stage)
    ir = parse_file(file, lenient=lenient)
    if on_skipped is not None and ir.diagnostics:  # under lenient: told before drawing can fail
        on_skipped(ir)
    context = RankContext(rank_dump.rank, world_of(dump))
    digraph = render(ir, around=around, depth=depth, graph_name=graph_name, include_backward=include_backward,
                     include_plumbing=include_plumbing, context=context)
    what = around if around is not None else (graph_name or ir.entry or "graph").lstrip("@")
    return Picture(digraph, Path(file), rank_dump.rank, ir.stage, what, list(ir.diagnostics),
                   list(rank_dump.unreadable))


def output_path(out: str | Path | None, fmt: str | None, default: Picture) -> tuple[Path, str]:
    """The picture's path and format from what the user gave: the format named, else the one
    ``out``'s suffix names, else SVG; ``out`` defaults to :meth:`Picture.default_name` in the
    current folder, and gets the format's suffix when it has none of :data:`FORMATS`."""
    suffix = Path(out).suffix.lower().lstrip(".") if out is not None else ""
    if fmt is None:
        fmt = suffix if suffix in FORMATS else "svg"
    if fmt not in FORMATS:
        raise MsInspectError(f"unknown picture format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if out is None:
        return Path(default.default_name(fmt)), fmt
    if suffix in FORMATS and suffix != fmt:
        raise MsInspectError(f"{out}: the name says .{suffix} but the format asked for is {fmt}")
    out = Path(out)
    return (out if suffix == fmt else out.with_name(out.name + "." + fmt)), fmt


def _holds(path: Path, text: str) -> bool:
    try:
        return path.is_file() and path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_name(what: str, rank: int | None, stage: str, fmt: str) -> str:
    """``matmul-rank0-validate.svg``: the picture's default file name (unsafe characters, such as
    the ``/`` of a scope selector, become ``_``)."""
    parts = [_UNSAFE.sub("_", what).strip("_") or "graph"]
    if rank is not None:
        parts.append(f"rank{rank}")
    parts.append(_UNSAFE.sub("_", stage))
    return "-".join(parts) + "." + fmt
