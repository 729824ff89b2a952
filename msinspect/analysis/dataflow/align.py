"""Which operator of one graph is which of another, by what survives renames: op type, scope and
the operator's place among its data neighbours.

Later passes rename instances (MindSpore shares one primitive between operators of equal
attributes, so ``q_transpose``, ``k_transpose`` and ``v_transpose`` of one attention all print as
``v_transpose`` at ``validate``), and ranks or runs hash generated names differently. Names are
therefore never used. Each graph's real operators (neither plumbing nor communication: a
collective the parallel pass inserted sits *between* operators, :mod:`msinspect.analysis.dataflow.flow`)
and parameters get a colour that is refined, round after round, by the colours of the operators
feeding each input position and of the operators each output feeds (and at which position): a
Weisfeiler-Lehman refinement, run on both graphs with one shared palette so that colours compare.
Parameters start from their name (weights keep their names), operators from op type and scope
and, where asked (``shapes``: between ranks, which may hold different pipeline stages), from the
number of dimensions of each tensor input and of the output: what an operator is, not its sizes,
which a strategy changes. Without it the two stages' micro-batch ``StridedSlice`` (of the
images on one stage, of the labels on the other: one op, one scope, one input each) look alike.

Two operators are paired when, at some round, each is the only one of its colour in its graph:
nothing else in either graph looks the same that far. Repeats that nothing around them tells
apart (an operator's copies, one per micro-batch) may be paired in file order when both graphs
have as many of them under one name (``repeats``). Everything else is reported as not aligned,
never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Hashable, Iterable

from msinspect.analysis.dataflow.flow import first_input, is_data_edge, is_through
from msinspect.analysis.dataflow.node_facts import tensor_inputs
from msinspect.graph import is_cnode

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx

#: Refinement stops when no colour class splits any more, or after this many rounds.
MAX_ROUNDS = 12


@dataclass
class Alignment:
    """Operators of a later graph paired with their counterpart in a reference graph."""

    pairs: dict[str, str] = field(default_factory=dict)
    """Graph key in the later graph -> graph key in the reference."""
    unaligned: list[str] = field(default_factory=list)
    """Keys asked about (operators of the later graph) that found no counterpart, in file order."""

    def of(self, key: str) -> str | None:
        """The reference's counterpart of ``key``; None when it could not be told."""
        return self.pairs.get(key)


@dataclass
class _Neighbours:
    """The real operators around each real node: (position, producer) per input, and
    (position, consumer) per use."""

    nodes: list[str]
    inputs: dict[str, tuple[tuple[int, str], ...]]
    uses: dict[str, list[tuple[int, str]]]


def _real(graph: nx.MultiDiGraph, key: str) -> bool:
    data = graph.nodes[key]
    if data.get("kind") == "parameter":
        return True
    return is_cnode(data) and not is_through(data.get("node"))


def _neighbours(graph: nx.MultiDiGraph) -> _Neighbours:
    nodes = [k for k in graph.nodes if _real(graph, k)]
    real = set(nodes)
    upstream: dict[str, str | None] = {}  # a plumbing or communication node -> the real producer behind it

    def behind(key: str) -> str | None:
        trail = []
        while key is not None and key not in real and key not in upstream and key not in trail:
            trail.append(key)
            key = first_input(graph, key)
        found = key if key is None or key in real else upstream.get(key)
        for passed in trail:
            upstream[passed] = found
        return found

    inputs: dict[str, tuple[tuple[int, str], ...]] = {}
    uses: dict[str, list[tuple[int, str]]] = {k: [] for k in nodes}
    for key in nodes:
        found = []
        for source, _, edge, data in graph.in_edges(key, keys=True, data=True):
            if not is_data_edge(graph, source, key, edge):
                continue
            producer = behind(source)
            if producer is not None:
                found.append((data.get("position", -1), producer))
        inputs[key] = tuple(sorted(found))
        for position, producer in found:
            uses[producer].append((position, key))
    return _Neighbours(nodes, inputs, uses)


def shape_dims(inputs, output) -> tuple:
    """What shapes are less their sizes: the number of dimensions of each input shape and of the
    output shape (None where the file gives no shape)."""
    return tuple(None if s is None else len(s) for s in inputs), None if output is None else len(output)


def dims(node) -> tuple:
    """:func:`shape_dims` of an operator's tensor inputs and output."""
    return () if node is None else shape_dims([a.shape for a in tensor_inputs(node)], node.output_shape)


def _start(graph: nx.MultiDiGraph, key: str, shapes: bool = False) -> tuple:
    data = graph.nodes[key]
    if data.get("kind") == "parameter":
        # a reference to a node the file does not hold (an excerpt's %1) names nothing that lasts
        return ("param", data.get("name")) if "has_default" in data else ("dangling",)
    start = ("op", data.get("op"), data.get("scope") or "")
    return start + (dims(data.get("node")),) if shapes else start


def _singles(colours: dict[str, int]) -> dict[int, str | None]:
    """Each colour -> its one key, or None when several keys have it."""
    out: dict[int, str | None] = {}
    for key, colour in colours.items():
        out[colour] = key if colour not in out else None
    return out


def _refine(sides, wanted: list[str], uses: bool, shapes: bool = False, strict: bool = False) -> dict[str, str]:
    """Pairs found refining by inputs (and, with ``uses``, by uses too). ``strict``: refined until
    no colour class splits, and only pairs whose colours still agree then are kept."""
    palette: dict[tuple, int] = {}
    colours = [{k: palette.setdefault(_start(g, k, shapes), len(palette)) for k in n.nodes} for g, n in sides]
    pairs: dict[str, str] = {}
    count = -1
    for _ in range(MAX_ROUNDS):
        ref_single, later_single = _singles(colours[0]), _singles(colours[1])
        for key in wanted:
            if key not in pairs:
                colour = colours[1][key]
                if later_single[colour] is not None and ref_single.get(colour) is not None:
                    pairs[key] = ref_single[colour]
        classes = len(ref_single) + len(later_single)
        if classes == count or (len(pairs) == len(wanted) and not strict):
            break
        count = classes
        palette = {}
        refined = []
        for (_, near), old in zip(sides, colours):
            if uses:
                refined.append({k: palette.setdefault(
                    (old[k], tuple([(p, old[s]) for p, s in near.inputs[k]]),
                     tuple(sorted([(p, old[u]) for p, u in near.uses[k]]))), len(palette)) for k in near.nodes})
            else:
                refined.append({k: palette.setdefault(
                    (old[k], tuple([(p, old[s]) for p, s in near.inputs[k]])), len(palette)) for k in near.nodes})
        colours = refined
    if strict:
        pairs = {k: r for k, r in pairs.items() if colours[1][k] == colours[0][r]}
    return pairs


def align(reference: nx.MultiDiGraph, later: nx.MultiDiGraph, keys: Iterable[str] | None = None,
          repeats: Callable[[nx.MultiDiGraph, str], Hashable] | None = None, *, shapes: bool = False,
          strict: bool = False) -> Alignment:
    """Pair the operators ``keys`` of ``later`` (default: every real operator) with their
    counterparts in ``reference`` (both built by :func:`msinspect.graph.to_networkx`).

    Two refinements are run: by inputs only (what an operator computes from: robust where a later
    pass inlines the gradient graph, so that an operator gains uses) and by inputs and uses (which
    tells apart operators that compute from the same values). A pair found by either stands
    unless the other pairs either side differently: then neither is paired. ``shapes``: operators
    whose tensors have different numbers of dimensions are never paired (:func:`dims`).
    ``strict`` (graphs of different programs, such as two pipeline stages, where two operators
    alike for a few rounds may be different layers' copies): a pair stands only when the two
    still look the same once refinement has run its course (no colour class splits any more, or
    :data:`MAX_ROUNDS`), not merely at some round."""
    sides = [(reference, _neighbours(reference)), (later, _neighbours(later))]
    present = set(sides[1][1].nodes)
    wanted = [k for k in later.nodes if k in present and is_cnode(later.nodes[k])] \
        if keys is None else [k for k in keys if k in present]
    by_inputs = _refine(sides, wanted, False, shapes, strict)
    by_both = _refine(sides, wanted, True, shapes, strict)
    pairs = {}
    for key in wanted:
        partners = {p for p in (by_inputs.get(key), by_both.get(key)) if p is not None}
        if len(partners) == 1:
            pairs[key] = partners.pop()
    claimed: dict[str, int] = {}
    for ref in pairs.values():
        claimed[ref] = claimed.get(ref, 0) + 1
    pairs = {k: r for k, r in pairs.items() if claimed[r] == 1}
    if repeats is not None:
        pairs.update(_in_order(reference, later, [k for k in sides[0][1].nodes if k not in set(pairs.values())],
                               [k for k in wanted if k not in pairs], repeats))
    unaligned = sorted((k for k in wanted if k not in pairs), key=lambda k: later.nodes[k].get("line", 0))
    return Alignment(pairs, unaligned)


def _in_order(reference, later, free_ref: list[str], free_later: list[str], repeats) -> dict[str, str]:
    """Repeats that nothing around them tells apart (the copies of an operator, one per
    micro-batch): paired in file order when both graphs have as many left of one ``repeats``
    key."""
    groups: dict[Hashable, tuple[list[str], list[str]]] = {}
    for graph, keys, side in ((reference, free_ref, 0), (later, free_later, 1)):
        for key in keys:
            if is_cnode(graph.nodes[key]):
                groups.setdefault(repeats(graph, key), ([], []))[side].append(key)
    pairs = {}
    for ref_keys, later_keys in groups.values():
        if later_keys and len(ref_keys) == len(later_keys):
            by_line = [sorted(ks, key=lambda k, g=g: g.nodes[k].get("line", 0))
                       for ks, g in ((ref_keys, reference), (later_keys, later))]
            pairs.update(zip(by_line[1], by_line[0]))
    return pairs
