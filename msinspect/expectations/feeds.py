"""``[[expect.feeds]]``: operator A feeds operator B: directly, or through only the kinds of node
``through`` allows (the graph structure MindSpore's tests check with
``ParallelValidator.check_graph_structure``). Nodes that only carry a value (``Load``,
``Depend``, ``TupleGetItem`` ...) are always passed; ``through`` names what else may sit between:
``comm`` (any communication), ``redistribution`` (the parallel pass's layout changes),
``virtual`` (``_Virtual...`` operators) or primitive names (``AllReduce``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import Evidence, no_match, nodes_of, rank_cells_text, select_in

if TYPE_CHECKING:
    from msinspect.analysis.dataflow.file_view import FileView
    from msinspect.model import Node

CATEGORIES = ("comm", "redistribution", "virtual")


@register
class Feeds(ExpectationKind):
    name = "feeds"
    required = frozenset({"from", "to"})
    optional = frozenset({"through"})
    text_keys = ("from", "to")

    def validate(self, values):
        through = values.get("through", [])
        if not isinstance(through, list) or not all(isinstance(t, str) and t for t in through):
            raise ValueError(f"through must be a list of node kinds ({', '.join(CATEGORIES)}) or primitive names")
        values["through"] = tuple(through)
        return values

    def target(self, values):
        return f"{values['from']} -> {values['to']}"

    def operators(self, values):
        return (str(values["from"]), str(values["to"]))

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        from msinspect.analysis.dataflow.flow import path_between
        from msinspect.analysis.dataflow.node_facts import is_plumbing
        from msinspect.graph import node_id

        v = e.values
        through = v["through"]
        want = f"{v['from']} feeds {v['to']} " + (f"through only {', '.join(through)}" if through else "directly")
        analysis = checker.analysis(e)
        ops = analysis.operators()
        sources, targets = (select_in(analysis, ops, v[k], e.ranks, e.graph) for k in ("from", "to"))
        for end, rows in ((v["from"], sources), (v["to"], targets)):
            if rows.empty:
                return Outcome(e, False, want, no_match(ops, end))
        by_file: dict[str, list] = {}
        for row, _, node in nodes_of(sources):
            by_file.setdefault(str(row.file), []).append(node)
        fed, wrong, evidence, missing = [], [], [], []
        for row, view, target in nodes_of(targets):
            sources_here = by_file.get(str(row.file), [])
            made = view.input_nodes(target)
            direct = [s for s in sources_here if any(m is s for m in made)]
            trails = [[]] if direct else [path_between(view.graph, node_id(s), node_id(target)) for s in sources_here]
            trails = [t for t in trails if t is not None]
            if not trails and through:  # through operators that compute (a mask's Mul): walk past those too
                trails = [t for t in (_trail(view, node_id(s), node_id(target), through) for s in sources_here)
                          if t is not None]
            if not trails:
                missing.append(row.rank)
                continue
            trail = min(trails, key=len)
            between = [view.node(k) for k in trail]
            between = [n for n in between if n is not None and not is_plumbing(n)]
            names = [view.type_name(n) for n in between]
            fed.append(row.rank)
            if not all(_allowed(n, through) for n in between):
                wrong.append(f"rank {row.rank}: through {', '.join(names)}")
                evidence += [Evidence.of_node(row.rank, str(row.file), n) for n in between[:2]]
            elif not evidence:
                evidence.append(Evidence.of_node(row.rank, str(row.file), target))
        found_text = []
        if fed:
            found_text.append(f"feeds on {rank_cells_text(fed)}" + (f" ({'; '.join(wrong)})" if wrong else ""))
        if missing:
            found_text.append(f"{v['from']} does not reach {v['to']} on {rank_cells_text(missing)}")
        return Outcome(e, bool(fed) and not wrong and not missing, want, "; ".join(found_text), evidence)


def _trail(view: FileView, source: str, target: str, through: tuple[str, ...]) -> list[str] | None:
    """The keys between ``source`` and ``target`` (as :func:`~msinspect.analysis.dataflow.flow.path_between`
    gives them), walking back along data edges from ``target`` through what carries data
    (:func:`~msinspect.analysis.dataflow.flow.passes_through`) and the operators ``through`` allows; None
    where ``source`` is not reached so."""
    from msinspect.analysis.dataflow.flow import trail_between

    def allowed(key: str) -> bool:
        node = view.node(key)
        return node is not None and _allowed(node, through)

    return trail_between(view.graph, source, target, also=allowed)


def _allowed(node: Node, through: tuple[str, ...]) -> bool:
    from msinspect.mindspore.vocabulary import is_comm, is_redistribution_step

    for kind in through:
        if kind == "comm" and is_comm(node):
            return True
        if kind == "redistribution" and is_redistribution_step(node):
            return True
        if kind == "virtual" and str(node.op).startswith("_Virtual"):
            return True
        if kind.casefold() == str(node.op).casefold():
            return True
    return False
