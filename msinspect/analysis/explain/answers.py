"""Why an operator has its strategy, and why a collective or redistribution step is where it is:
``msinspect explain DUMP OP`` (docs/explain.md).

For a strategy: set by the user (``shard()``: the primitive carries the user's attribute; the IR
records where the network calls it, not the ``shard()`` line); else, under ``auto_parallel``, the
nearest user-set operator whose layout reaches it with no redistribution on the way (a networkx
shortest path over data edges of the forward graph, communication operators left out): a
*reconstruction*, since the IR records neither the propagation nor the search mode; else "cannot
tell". Under ``semi_auto_parallel`` an operator without ``shard()`` has MindSpore's default.

For a communication or redistribution operator: the layout its producer gives (its in_strategy
through MindSpore's rule for the operator: :mod:`msinspect.analysis.explain.layouts`), the layout
its consumer needs (the consumer's in_strategy for that input), the step between them (which
dimension is summed, gathered, split or exchanged, in how many parts) and over which ranks (the
group the comm rows resolved); the ranks the producer's device matrix predicts are set beside
them. A mirror operator: the replicas of its weight. A collective of the gradient graph: the
forward collective whose bprop it is (MindSpore records its ``unique_id`` on it), and what that
bprop does to the gradient (:data:`BPROP`). What the IR does not say is labelled
``reconstruction`` or ``cannot tell: <reason>``.

The file as explain reads it and the answer: :mod:`msinspect.analysis.explain.rank_file`; the step of a
redistribution between producer and consumer: :mod:`msinspect.analysis.explain.steps`.
"""
from __future__ import annotations

import re
from dataclasses import asdict, replace
from math import prod
from pathlib import Path

from msinspect.analysis.explain.rank_file import Explanation, RankFile, dims_text, node_is, shape_text, strategy_text
from msinspect.analysis.explain.layouts import COMBINED_BY, OutputLayout, input_layout, output_layout, reduced_parts
from msinspect.analysis.explain.steps import (after_steps, before_steps, by_definition, compare_group, input_position,
                                              made_whole, own_step, rank_input, redistribution_step, strategy_index,
                                              whole_shapes)
from msinspect.analysis.dataflow.flow import (around_collective, consumers, first_input, input_at, input_past_plumbing,
                                              is_source, passes_through, path_between, producer)
from msinspect.analysis.dataflow.node_facts import is_backward, is_plumbing
from msinspect.mindspore.vocabulary import (GLOBAL_NORM_PREFIX, MIRROR_OPS, PIPELINE_OPS, acting_as, int_attr, is_comm,
                                            is_redistribution_step, moves_data, stands_in, stated_size)
from msinspect.mindspore.naming import stable_name
from msinspect.graph import node_id
from msinspect.mindspore.layouts import BATCH_MATMUL_OPS, LAYOUT_KEEPING, MATMUL_OPS, call_of, layout_of, map_axes
from msinspect.model import Node, NodeKind, carries_user_attribute
from msinspect.ranks_text import ranks_text


def _source(node: Node) -> str | None:
    """``gpt.py:123: q = self.reshape(...)`` from the node's innermost ``# In file`` line."""
    text = node.source_line
    if not text:
        return None
    text = text.split("/<~~", 1)[0]  # MindSpore's note that the line may serve several nodes
    found = re.match(r"^(?P<file>.+?):(?P<line>\d+)(?:~\d+)?(?:, [\d~]+)?/(?P<code>.*?)/?$", text)
    if not found:
        return text
    return f"{Path(found['file']).name}:{found['line']}: {found['code'].strip()}"


# ------------------------------------------------------------------ strategies
def _explain_strategy(f: RankFile, node: Node, row: dict) -> Explanation:
    key = node_id(node)
    strategy, set_by = row["in_strategy"], row.get("set_by")
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "strategy", "cannot tell", "",
                    in_strategy=strategy, set_by=set_by, source=_source(node))
    shapes = row.get("global_inputs") or ()
    for i, part in enumerate(strategy or ()):
        g = shapes[i] if i < len(shapes) else None
        expected = (row.get("expected_rank_inputs") or ())
        r = expected[i] if i < len(expected) else None
        if g is not None:
            e.facts.append(f"input {i}: {shape_text(g)} cut {shape_text(part)}"
                           + (f" -> {shape_text(r)} per rank" if r is not None else ""))
    where = f" (the network calls it at {e.source}; the shard() line itself is not in the IR)" if e.source else ""
    if set_by == "user":
        e.verdict = "user"
        e.headline = f"{node.name}: {strategy_text(strategy)} set by the user with shard(){where}"
        e.facts.insert(0, "the primitive carries the user's in_strategy attribute")
        return e
    if set_by != "planner":
        e.headline = f"{node.name}: {strategy_text(strategy)}, set by whom the file cannot tell"
        e.cannot_tell.append(f"the {f.ir.stage} file does not keep the user's shard() attribute; "
                             "read step_parallel_end (--stage)")
        return e
    if node.op.startswith("_Virtual"):
        e.verdict = "planner"
        e.headline = f"{node.name}: {strategy_text(strategy)}, set by the planner: the parallel pass's own operator"
        return e
    if not f.auto:
        e.verdict = "default"
        e.headline = (f"{node.name}: {strategy_text(strategy)}, set by the planner: no shard() on it, so "
                      "semi_auto_parallel's default for such an operator")
        e.reconstruction.append("under semi_auto_parallel MindSpore gives an operator without shard() a strategy of "
                                "its own (step_parallel.cc, GenerateBatchParallelStrategy: the batch dimension cut "
                                "over the devices where it divides, or the operator's own rule)")
        return e
    e.verdict = "planner"
    origin = _origin(f, key)
    if origin is None:
        if f.user_keys:
            e.headline = f"{node.name}: {strategy_text(strategy)}, set by the planner: chosen by its search"
            e.cannot_tell.append("no user-set operator reaches it without a redistribution on the way: which "
                                 "cost drove the choice is not in the IR")
        else:
            e.headline = (f"{node.name}: {strategy_text(strategy)}, set by the planner: chosen by its search (no "
                          "shard() in the graph: the recursive search or sharding propagation's cost model)")
            e.cannot_tell.append("which cost drove it: the IR records the result only")
        return e
    user, path, also = origin
    e.verdict = "propagated"
    e.origin = f.label(user)
    e.path = tuple(_path_name(f, k) for k in path)
    user_node = f.node(user)
    e.headline = (f"{node.name}: {strategy_text(strategy)}, set by the planner: reached from the user's {e.origin} "
                  f"{strategy_text(f.strategy_of(user))} by sharding propagation (reconstruction)")
    e.reconstruction.append(f"path {' -> '.join(e.path)}: no communication and no change of cut on the way (a "
                            "per-rank Reshape at most), so each operator takes its input as its neighbour gives it")
    if user_node is not None and _source(user_node):
        e.reconstruction.append(f"{e.origin} is called at {_source(user_node)}")
    if also:
        e.reconstruction.append(f"as near: {', '.join(also)}")
    e.cannot_tell.append("the IR records neither the propagation nor the search mode (sharding_propagation or "
                         "recursive_programming): the path is the nearest user-set operator that agrees")
    return e


def _real(f: RankFile, key: str) -> bool:
    """An operator a path counts: not plumbing, not a bound call; a per-rank Reshape counts."""
    node = f.node(key)
    if node is None or is_plumbing(node):
        return False
    return node.op == "Reshape" or not passes_through(f.graph, key)


def _path_name(f: RankFile, key: str) -> str:
    """An operator on a propagation path by its instance name; a redistribution step (the per-rank
    Reshape MindSpore puts in place of the network's) by its op."""
    node = f.node(key)
    if node is not None and is_comm(node):
        return node.op
    return f.label(key)


def _origin(f: RankFile, key: str):
    """(user-set operator, path of real operators from it to ``key``, others as near) or None."""
    import networkx as nx

    links = f.links()
    if key not in links or not f.user_keys:
        return None

    def cost(u, v, d):  # count real operators only: plumbing and bound calls are free
        return 1 if _real(f, v) else 0

    lengths, paths = nx.single_source_dijkstra(links, key, weight=cost)
    here = f.node(key).line
    found = sorted(((lengths[u], f.node(u).line > here, abs(f.node(u).line - here), u)
                    for u in f.user_keys if u in lengths and u != key))
    if not found:
        return None
    best = found[0][0]
    user = found[0][3]
    path = [k for k in reversed(paths[user]) if _real(f, k)]
    also = [f.label(u) for length, _, _, u in found[1:] if length == best]
    return user, path, list(dict.fromkeys(a for a in also if a != f.label(user)))


# ------------------------------------------------------------------ communication
def _producer(f: RankFile, key: str) -> str | None:
    """The real operator or parameter whose value reaches ``key``'s first input
    (:func:`~msinspect.analysis.dataflow.flow.producer`), where a ``TupleGetItem`` of a ``_VirtualDataset``
    or ``MakeTuple`` is followed to the input it picks (the labels, not the ids)."""
    graph, seen = f.graph, {key}
    current = first_input(graph, key)
    while current is not None and current not in seen:
        seen.add(current)
        node = f.node(current)
        if node is not None and node.op == "TupleGetItem" and len(node.inputs) > 1 and isinstance(node.inputs[1], int):
            tuple_key = first_input(graph, current)
            made = f.node(tuple_key)
            if made is not None and made.op in ("_VirtualDataset", "MakeTuple"):
                picked = input_at(graph, tuple_key, node.inputs[1])
                if picked is not None:
                    current = picked
                    if not passes_through(graph, current):
                        return current
                    current = first_input(graph, current)
                    continue
        if not passes_through(graph, current):
            return current
        current = first_input(graph, current)
    return producer(graph, key) if current is None else None


def _last_reshape(f: RankFile, lines) -> tuple | None:
    """The shape the last Reshape among the step's ``lines`` gives (its constant shape operand);
    None where the step has none, or its shape is no constant."""
    last = next((f.by_line[line] for line in sorted(lines, reverse=True) if line in f.by_line
                 and f.by_line[line].op == "Reshape"), None)
    shape = last.inputs[1] if last is not None and len(last.inputs) > 1 else None
    return shape if isinstance(shape, tuple) and shape and all(type(v) is int for v in shape) else None


def _unmatched(f: RankFile, key: str | None) -> str:
    """Why a hash-named operator of a replacement graph (:meth:`RankFile.replaced`) is not matched
    to the operator it stands for, or a graph's ``Return`` says no cut, in words after a colon; ""
    for any other operator."""
    node = f.node(key)
    if node is not None and node.kind == NodeKind.RETURN:
        return (": it is the graph's output, whose cut the parallel pass's _VirtualOutput states; no _VirtualOutput "
                "with a strategy is in this file (a later pass drops it: step_parallel_end holds it)")
    if not stands_in(node):
        return ""
    if not f.result.reference:
        return (": it is of the graph MindSpore put in place of another operator, and no step_parallel_begin file "
                "is read")
    return (": it is of the graph MindSpore put in place of another operator, and which one this file does not tell "
            "(at validate the operators of such graphs that share a primitive print one name; step_parallel_end "
            "tells)")


def _virtual_output(f: RankFile, key: str) -> str | None:
    """The ``_VirtualOutput`` with a strategy that ``key``'s value reaches through plumbing and
    communication: the parallel pass's marker of the graph's output, whose strategy is the cut the
    output must have (``virtual_output_info.cc``); None where there is none."""
    from msinspect.analysis.dataflow.flow import data_view

    data, todo, seen = data_view(f.graph), [key], {key}
    while todo:
        for user in data.successors(todo.pop()):
            node = f.node(user)
            if user in seen or node is None:
                continue
            seen.add(user)
            if node.op == "_VirtualOutput" and f.strategy_of(user) is not None:
                return user
            if passes_through(f.graph, user) and not is_backward(node):
                todo.append(user)
    return None


def _producer_layout(f: RankFile, key: str | None) -> tuple[OutputLayout | None, str]:
    """How the producer gives its output, and in words where that comes from."""
    data = f.graph.nodes[key] if key is not None else {}
    node = data.get("node")
    if key is None:
        return None, "no producer found"
    if node is None:
        shapes = data.get("output_shapes") or ()
        dataset = _dataset_cut(f, key)
        if dataset is not None:
            cut, vd = dataset
            found = input_layout(cut, f.devices)
            text = f"the dataset input {data.get('name')} cut {shape_text(cut)} by {vd.name} " \
                   f"{strategy_text(f.strategy_of(node_id(vd)))}"
            return found or OutputLayout(tuple(cut), (), tuple(None for _ in cut), rule="the dataset's cut"), text
        if data.get("kind") == NodeKind.PARAMETER and shapes and shapes[0] is not None and not data.get("has_default"):
            shape = shapes[0]
            return OutputLayout(tuple(1 for _ in shape), (), tuple(None for _ in shape),
                                rule="a graph input: the rank holds it as the file shows it"), \
                f"the graph input {data.get('name')} {shape_text(shape)}, held whole as the rank reads it"
        if data.get("has_default"):
            return _weight_layout(f, key)
        if data.get("bound") and data.get("kind") == NodeKind.PARAMETER:
            return _argument_layout(f, key)
        return None, f"{f.label(key)} is a weight or a subgraph's parameter: its cut is not its consumer's"
    if node.op == "Receive":
        return _received_layout(f, node)
    strategy = f.strategy_of(key)
    row = f.strategies.get(node.line)
    out = row.get("out_strategy") if row else None
    found = output_layout(node, strategy, f.devices) if strategy is not None else None
    if out:
        # out_strategy says how the output leaves the operator once its own communication ran;
        # the in_strategy's rule still says which axes hold partial sums before it
        first = tuple(out[0])
        said = f"{node.name} ({node.op}) in_strategy {strategy_text(strategy)}, out_strategy {strategy_text(out)}"
        if found is not None and found.factors == first:
            return replace(found, rule=f"{found.rule}; its out_strategy the same"), said
        return OutputLayout(first, found.matrix if found else (), tuple(None for _ in first),
                            found.partial if found else (), rule="its out_strategy"), said
    if strategy is None and node.op in LAYOUT_KEEPING:
        # the parallel pass gave it no operator info: redistribution takes the layout of the
        # nearest operator before it that has one (step_parallel.cc, FindPrevLayout)
        inner = _producer(f, key)
        before, said = _producer_layout(f, inner)
        summed = _after_lookup(f, inner, key) if before is None and inner is not None else None
        if summed is not None:
            before, said = summed
        if before is not None:
            return before, f"{said}, through {node.name} ({node.op}, no strategy: its input's layout)"
        return None, f"{node.name} ({node.op}) carries no strategy and passes its input's layout on: {said}"
    if strategy is None:
        original = f.replaced(key)
        if original is not None:  # an operator of another's replacement graph: that one's output
            strategy = original.strategy.in_strategy
            found = output_layout(original, strategy, f.devices)
            said = (f"{node.name} ({node.op}) is of the graph MindSpore put in place of {original.name} "
                    f"({original.op}) {strategy_text(strategy)} (read in the rank's "
                    "step_parallel_begin file)")
            if found is not None:
                return found, said
            return None, f"{said}, and no rule here gives that operator's output for this strategy"
        return None, f"{node.name} ({node.op}) carries no strategy{_unmatched(f, key)}"
    if found is None and f.devices is None and strategy and all(set(s) <= {1} for s in strategy):
        # every input whole on every rank: so is the output, whatever the stage's devices
        found = output_layout(node, strategy, 1)
        if found is not None:
            found = replace(found, rule=f"{found.rule}; every input whole, so the output is, on any number of "
                                        "devices (the stage's are not told)")
    if found is None and f.devices is None:
        return None, (f"how {node.op} {strategy_text(strategy)} cuts its output over the stage: the stage's "
                      "devices are not known (a pipeline whose stages the files read do not tell)")
    if found is None:
        return None, f"no rule for how {node.op} cuts its output (in_strategy {strategy_text(strategy)})"
    return found, f"{node.name} ({node.op}) in_strategy {strategy_text(strategy)}"


def _weight_layout(f: RankFile, key: str) -> tuple[OutputLayout | None, str]:
    """How a weight is cut at the rank: its layout (device matrix, tensor map) as the analysis
    states it (:meth:`RankFile.weight`), each dimension in as many parts as the matrix axes its map
    names make (the slice the rank holds). A weight the optimizer shard cuts again is not taken:
    the rank holds a part of its slice, which MindSpore gathers before any other step."""
    name = f.label(key)
    row = f.weight(key)
    if row is None or row.get("device_matrix") is None or row.get("tensor_map") is None:
        return None, (f"{name} is a weight whose layout the files read do not state (no operator with a "
                      "strategy reads it, and its shapes do not tell its cut)")
    if row.get("opt_shard_group"):
        return None, (f"{name} is a weight the optimizer shard cuts again over {row['opt_shard_group']}: the rank "
                      "holds a part of its layout's slice")
    matrix, tensor_map = tuple(row["device_matrix"]), tuple(row["tensor_map"])
    width = len(matrix)
    factors, axes = [], []
    for entry in tensor_map:
        named = [width - 1 - a for a in map_axes(entry)]
        parts = prod(matrix[a] for a in named)
        factors.append(parts)
        axes.append(named[0] if len(named) == 1 and parts > 1 else None)
    said = (f"the weight {name} {shape_text(row['global_shape'])}, laid out by device matrix {shape_text(matrix)}, "
            f"tensor map {shape_text(tensor_map)}"
            + (f" (as {row['consumer']} ({row['op']}) reads it)" if row.get("consumer") else
               f" (its shape at the rank, {shape_text(row['rank_shape'])}, is its cut)"))
    return OutputLayout(tuple(factors), matrix, tuple(axes), rule="the weight's layout"), said


def _received_layout(f: RankFile, node: Node) -> tuple[OutputLayout | None, str]:
    """How a pipeline Receive's output is cut: as the sender's Send sends it, the output of the
    operator before that Send in the sender rank's file (MindSpore gives the Receive that
    operator's strategy, ``pipeline_transformer.cc``, but not its kind, so the strategy alone
    does not tell the cut). The Send is the one of the peer's file sending to this rank with the
    same ``sr_tag``; where that file is not read, the reason names the rank."""
    peer = (f.comm.get(node.line) or {}).get("peer")
    strategy = f.strategy_of(node_id(node))
    carried = f" (it carries the sender's strategy {strategy_text(strategy)})" if strategy else ""
    if peer is None:
        return None, (f"the Receive's data comes from another rank's Send{carried}, and which rank the file "
                      "does not tell")
    if f.remote:  # one hop only: a sender's own Receive is not followed further
        return None, (f"the Receive's data is what rank {peer}'s Send sends{carried}, itself received in rank "
                      f"{f.ctx.rank}'s file from rank {peer}: not followed a second hop")
    other = f.peer(peer) if peer != f.ctx.rank else None
    if other is None:
        held = peer in {r.rank for r in f.analysis.dump.ranks}
        return None, (f"the Receive's data is what rank {peer}'s Send sends{carried}: the operator before that Send "
                      f"is in rank {peer}'s file, "
                      + ("which could not be read" if held else "which the dump does not hold"))
    tag = node.primitive_attrs.get("sr_tag")
    sends = [n for n in other.by_line.values() if n.op == "Send" and n.primitive_attrs.get("sr_tag") == tag
             and (other.comm.get(n.line) or {}).get("peer") == f.ctx.rank]
    if len(sends) != 1:
        return None, (f"the Receive's data is what rank {peer}'s Send sends{carried}: rank {peer}'s file holds "
                      f"{len(sends)} Sends to rank {f.ctx.rank} with sr_tag {tag}, not one")
    layout, said = _producer_layout(other, _producer(other, node_id(sends[0])))
    where = f"rank {peer}'s Send ({Path(other.result.file).name} line {sends[0].line}, sr_tag {tag}) sends it"
    return layout, f"{where}: {said}"


def _argument_layout(f: RankFile, key: str) -> tuple[OutputLayout | None, str]:
    """How a subgraph's parameter bound at several calls (one per micro-batch under a pipeline)
    is cut: as the argument each call passes is, where they are all cut alike; None where one is
    not told or they differ."""
    name = f.label(key)
    args = [u for u in f.graph.predecessors(key) if u != key]
    found = [_producer_layout(f, u) if f.node(u) is not None else (None, "") for u in args]
    cuts = {layout.factors for layout, _ in found if layout is not None}
    if not args or len(cuts) != 1 or any(layout is None for layout, _ in found):
        said = "; ".join(dict.fromkeys(why for layout, why in found if layout is None and why))
        return None, (f"{name} is a subgraph's parameter bound at {len(args)} calls, whose arguments are not told "
                      f"cut alike" + (f" ({said})" if said else ""))
    layout, said = found[0]
    names = ", ".join(dict.fromkeys(f.label(u) for u in args))
    return layout, (f"{name}, the subgraph's parameter, is what each of its {len(args)} calls passes ({names}), "
                    f"each cut alike: {said}")


def _dataset_cut(f: RankFile, key: str):
    """(cut, the _VirtualDataset node) of a graph input the parallel pass's ``_VirtualDataset``
    takes: its strategy for that input (how the dataset gives each rank its part); None elsewhere."""
    for vd_key, data in f.graph.nodes(data=True):
        vd = data.get("node")
        if vd is None or vd.op != "_VirtualDataset":
            continue
        strategy = f.strategy_of(vd_key) or (vd.strategy.in_strategy if vd.strategy else None)
        for source, edges in f.graph.pred[vd_key].items():
            for edge in edges.values():
                position, current, seen = edge.get("position"), source, set()
                while current is not None and current not in seen and current != key:
                    seen.add(current)
                    current = first_input(f.graph, current) if f.graph.nodes[current].get("bound") else None
                if current == key and strategy and position is not None and position < len(strategy):
                    return tuple(strategy[position]), vd
    return None


def _explain_comm(f: RankFile, node: Node, row: dict) -> Explanation:
    key = node_id(node)
    kind = row.get("kind")
    group = tuple(row["group_ranks"]) if row.get("group_ranks") else None
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "communication", kind or "unknown", "",
                    kind=kind, group_ranks=group)
    over = f"over {ranks_text(group, word=True)}" if group else ("on the rank's own data" if not row.get("moves_data")
                                                               else "over ranks the file does not tell")
    if group is None and row.get("moves_data"):
        e.cannot_tell.append("the group's ranks: the file names the group by a name it gives no ranks for")
    # a Receive's data comes from another rank's Send: its input only orders it (a parameter or
    # the monad MindSpore hangs it on), never its producer
    source = None if is_source(node) else _producer(f, key)
    users = consumers(f.graph, key)
    forward = [u for u in users if not is_backward(f.node(u) or node)] if not is_backward(node) else users
    users = forward or users
    with_strategy = [u for u in users if f.strategy_of(u) is not None]
    target = (with_strategy or users or [None])[0]
    if not with_strategy and not is_backward(node):  # the graph's output: its _VirtualOutput tells the cut
        target = _virtual_output(f, key) or target
    # a mirror's or an optimizer gather's weight layout is read at the Cast itself (_mirror); the
    # parallel pass's bookkeeping (virtual) has no step
    step_kind = kind not in ("gradient", "optimizer", "virtual") and not _mirror_gradient(node)
    reshape = _plain_reshape(f, target, casts=step_kind) if not is_backward(node) else None
    if reshape is not None:  # a Reshape or a Cast with no strategy: the operator beyond it says what it needs
        target = reshape
        reshape = (with_strategy or users)[0]
    before = before_steps(f, source) if source is not None and not is_backward(node) else None
    after = after_steps(f, target) if target is not None and reshape is None and not is_backward(node) else None
    ends = (source, target)
    if before is not None:  # the redistribution's own operators, renamed and given no strategy
        source = before[0]
    if after is not None:
        target = after[1]
    e.producer, e.consumer = f.label(source), f.label(target)
    if before is not None or after is not None:
        passed = [*(before[1] if before else ()), *(after[0] if after else ())]
        names = ", ".join(dict.fromkeys(f.label(k) for k in passed))
        e.facts.append(f"between {e.producer} and {e.consumer} through {names}: local steps and plumbing with no "
                       "strategy (at validate comm reuse renames a redistribution's own)")
    if len(users) > 1:
        e.facts.append(f"feeds {', '.join(f.label(u) for u in users)}")
    if reshape is not None:
        passed = f.node(reshape).op
        e.facts.append(f"reaches {e.consumer} through {f.label(reshape)} (a Reshape the file gives no strategy)"
                       if passed == "Reshape" else f"reaches {e.consumer} through {f.label(reshape)} ({passed}, no "
                       "strategy: it passes its input's layout on, step_parallel.cc FindNextLayout)")
    trail = path_between(f.graph, source, target) if source is not None and target is not None else None
    if trail is not None and key not in trail:  # another way round it (a weight read twice): the one through it
        ahead, beyond = path_between(f.graph, source, key), path_between(f.graph, key, target)
        trail = [*ahead, key, *beyond] if ahead is not None and beyond is not None else trail
    if before is not None or after is not None:
        middle = path_between(f.graph, *ends) if None not in ends else None
        trail = [*(before[1] if before else ()), *(middle if middle is not None else [key]),
                 *(after[0] if after else ())]
    chain_keys = sorted((k for k in (trail or [key]) if node_is(is_comm, f.node(k)) or k == key),
                        key=lambda k: f.node(k).line)
    e.chain = tuple(f.node(k).op for k in chain_keys)
    e.chain_lines = tuple(f.node(k).line for k in chain_keys)
    e.chain_groups = tuple(tuple(f.comm[ln]["group_ranks"]) for ln in e.chain_lines
                           if ln in f.comm and f.comm[ln].get("moves_data") and f.comm[ln].get("group_ranks"))
    if len(chain_keys) > 1:
        e.facts.append(f"one step of {' -> '.join(e.chain)} between {e.producer or 'no producer found'} and "
                       f"{e.consumer or 'no consumer found'}")
    if node.op in PIPELINE_OPS:
        return _pipeline(f, node, row, e)
    if kind == "gradient" or _mirror_gradient(node):
        return _mirror(f, node, row, e, target)
    ahead, fop = _forward_of(f, node) if kind not in ("optimizer", "virtual") else (None, None)
    if fop is not None:
        return _bprop(f, node, e, ahead, fop, over)
    if kind == "local" and is_backward(node) and node.cnode_primal_attrs.get("forward_node_name"):
        return _in_gradient(f, node, e)
    if kind == "optimizer":
        return _optimizer(f, node, e, over)
    lookup = _masked_lookup(f, source) if kind == "unknown" and acting_as(node.op) in ("AllReduce", "ReduceScatter") else None
    if lookup is not None:  # renamed (comm reuse), yet it follows the Gather's replacement graph
        e.facts.append(f"its name ({node.instance_name}) does not say who inserted it; it adds what the graph "
                       "MindSpore puts in place of the Gather gives, so it is that graph's")
        return _lookup_sum(f, node, e, *lookup, over)
    if kind == "loss-scale":
        return _loss_scale(node, e, over)
    if kind in ("virtual", "user", "unknown"):
        e.headline = {"virtual": f"{node.op}: the parallel pass's bookkeeping operator; nothing on the wire",
                      "user": f"{node.op} {over}: the job's own collective (in the graph before the parallel pass)",
                      "unknown": f"{node.op} {over}: who inserted it is not recorded"}[kind]
        if kind == "unknown":
            e.cannot_tell.append("nothing in the file tells whether the parallel pass or the job put it there")
        return e
    layout, said = _producer_layout(f, source)
    summed = _after_lookup(f, source, key) if layout is None and source is not None else None
    shaped = source  # whose whole output the step reads: a summed lookup's is its Gather's
    if summed is not None:
        layout, said = summed
        shaped = _masked_lookup(f, source)[0]
    position = input_position(f, trail or [], key, target) if target is not None else None
    if reshape is not None:
        position = input_position(f, path_between(f.graph, reshape, target) or [], reshape, target)
    position = strategy_index(f.node(target), position)  # the operand's entry in the consumer's strategy
    need = f.strategy_of(target)
    wanted = tuple(need[position]) if need is not None and position is not None and position < len(need) else None
    original = f.replaced(target) if need is None and target is not None else None
    # the redistribution is a Reshape's own (ReshapeInfo replaces it by one): with no layout after
    # it, MindSpore gives its output its default, whole on every device of the stage
    shape = (_last_reshape(f, [*e.chain_lines, *(f.node(k).line for k in (after[0] if after else ()))])
             if need is None and original is None and target is not None and reshape is None else None)
    whole_out = shape is not None and made_whole(f, target)
    if whole_out:
        wanted = (1,) * len(shape)
    if original is not None and original.op in _PRODUCTS:
        # the graph MindSpore put in place of a matrix product takes its activation, input 0, from
        # outside (its weight is a parameter): cut as the replaced product's in_strategy says
        need, position = original.strategy.in_strategy, 0
        wanted = tuple(need[0])
        e.facts.append(f"{e.consumer} is of the graph MindSpore put in place of {original.name} ({original.op}) "
                       f"{strategy_text(need)} (read in the rank's step_parallel_begin file): it takes "
                       f"{original.name}'s input 0 cut {shape_text(wanted)}")
    e.producer_layout = layout.factors if layout is not None else None
    e.consumer_layout = wanted
    if layout is not None:
        e.facts.append(f"producer: {said}")
        if layout.matrix:
            e.reconstruction.append(f"{e.producer} gives its output cut {shape_text(layout.factors)} ({layout.rule})")
    else:
        e.cannot_tell.append(f"how the producer gives its output: {said}")
    if whole_out:
        e.facts.append(f"consumer: {e.consumer} ({f.node(target).op}) has no strategy, nor does an operator after it: "
                       f"the Reshape this step stands for takes MindSpore's default output layout, whole on every "
                       f"device, {shape_text(wanted)} (step_parallel.cc FindNextLayout finds no layout after it; "
                       "reshape_info.cc InferDefaultLayout)")
    elif wanted is not None and original is None:
        e.facts.append(f"consumer: {e.consumer} ({f.node(target).op}) in_strategy {strategy_text(need)}: "
                       f"input {position} cut {shape_text(wanted)}")
    elif target is not None and wanted is None:
        why = (f"is of the graph MindSpore put in place of {original.name} ({original.op}), and which of its inputs "
               "it takes the file does not tell" if original is not None
               else f"carries no strategy for that input{_unmatched(f, target)}")
        e.cannot_tell.append(f"what the consumer needs: {e.consumer} {why}")
    if layout is not None and layout.partial and acting_as(node.op) in ("AllReduce", "ReduceScatter"):
        return _partial_sum(f, node, e, _need_not_matter(node, e, layout), over)
    made = f.node(source)
    combined = reduced_parts(made, f.strategy_of(source), f.devices) if made is not None else None
    if combined is not None and combined.partial and acting_as(node.op) == "AllReduce":
        return _partial_sum(f, node, e, _need_not_matter(node, e, combined), over,
                            COMBINED_BY[made.op])
    if kind == "forward" and str(node.instance_name or "").startswith(GLOBAL_NORM_PREFIX):
        return _global_norm(node, e, over)
    lookup = _masked_lookup(f, source) if kind == "forward" and acting_as(node.op) in ("AllReduce", "ReduceScatter") else None
    if lookup is not None:
        return _lookup_sum(f, node, e, *lookup, over)
    if kind == "forward" and acting_as(node.op) in ("AllReduce", "ReduceScatter", "AllGather"):
        e.headline = f"{node.op} {over}: {e.producer}'s own communication (its replacement graph or its rule)"
        own = own_step(f, node)
        defined = by_definition(f, node) if own is None else None
        if defined is not None:  # no shapes printed: what MindSpore's collective does by definition
            e.action = "gather" if acting_as(node.op) == "AllGather" else node.primitive_attrs.get("op", "sum")
            e.dims, e.parts = defined[0], defined[1]
            did = "gathered" if acting_as(node.op) == "AllGather" else f"combined ({e.action}) and scattered"
            e.headline += f": {dims_text(e.dims)} of the tensor as it reaches it is {did} ({e.parts} parts)"
            e.facts.append(defined[2])
            return e
        if own is None:
            e.cannot_tell.append(f"which dimension: no rule here for {f.node(source).op if f.node(source) else '?'}, "
                                 "and the file prints no shapes for it")
            return e
        # no rule says what the operator's own graph needs; the collective's shapes say what it does
        e.action = "gather" if acting_as(node.op) == "AllGather" else node.primitive_attrs.get("op", "sum")
        e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
        did = "gathered" if acting_as(node.op) == "AllGather" else f"combined ({e.action}) and scattered"
        e.headline += f": {dims_text(e.dims)} of the tensor as it reaches it is {did} ({e.parts} parts)"
        e.facts.append(f"its own shapes, {own[2]}: MindSpore's {node.op} works on dimension 0"
                       + (", the Split and Concat after it move the parts" if e.dims != (0,) else ""))
        return e
    needed = rank_input(f, target, position)
    whole = whole_shapes(f, shaped, target, position, wanted, e)
    return redistribution_step(f, node, e, layout, wanted, over, needed, whole)


def _need_not_matter(node: Node, e: Explanation, layout: OutputLayout | None = None) -> OutputLayout | None:
    """An AllReduce of partial sums gives every rank the whole sum whatever its consumer's cut:
    where the consumer carries no strategy (a ReduceMean's own RealDiv), that is no gap.
    Returns ``layout`` (for the caller's convenience)."""
    if acting_as(node.op) == "AllReduce":
        e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith("what the consumer needs")]
    return layout


def _global_norm(node: Node, e: Explanation, over: str) -> Explanation:
    """The AllReduce MindSpore's parallel pass adds to gradient clipping's global norm
    (``ClipByGlobalNorm`` / MindFormers' ``ClipGradNorm``): each rank's sum of the squares of the
    gradient slices it holds, a scalar, summed over the stage (``_IN_STAGES``) or over the ranks at
    one place of every pipeline stage (``_BETWEEN_STAGES``), before the square root."""
    between = "BETWEEN_STAGES" in str(node.instance_name)
    e.action, e.dims = "sum", ()
    e.parts = len(e.group_ranks) if e.group_ranks else None
    where = "the pipeline stages (the ranks at this place of each)" if between else "the ranks of the stage"
    e.headline = (f"{node.op} {over}: gradient clipping's global norm: {e.producer or 'the rank'} sums the squares "
                  f"of the gradient slices the rank holds (a scalar); the parallel pass adds them over {where} "
                  f"before {e.consumer or 'the square root'}")
    e.facts.append(f"MindSpore's parallel pass names it {node.instance_name}")
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith(("how the producer", "what the consumer"))]
    return e


def _loss_scale(node: Node, e: Explanation, over: str) -> Explanation:
    """The AllReduce of a loss-scaled training step's overflow check
    (:func:`~msinspect.mindspore.vocabulary.loss_scale_check`: ``self.allreduce(flag_sum)`` in
    MindSpore's ``nn/wrap/loss_scale.py``): each rank's overflow flag, the sum of its own
    gradients' overflow status, added over the group, so that every rank skips the update or none
    does. A flag per rank, no tensor layout: its producer's and consumer's cuts do not apply."""
    e.action, e.dims = "sum", ()
    e.parts = len(e.group_ranks) if e.group_ranks else None
    e.headline = (f"{node.op} {over}: the loss-scaled step's overflow check: each rank's overflow flag "
                  f"({e.producer or 'its own'}) summed over the ranks, so that all skip the update or all take it")
    e.facts.append(f"called at {_source(node)} (MindSpore's loss-scale cells, nn/wrap/loss_scale.py)")
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith(("how the producer", "what the consumer"))]
    return e


def _masked_lookup(f: RankFile, source: str | None):
    """(the Gather, its layout) where ``source`` is the last operator of the graph MindSpore puts
    in place of a Gather that cuts its table along the gathered axis (``gather_info.cc``: each
    rank looks up the ids its part of the table holds and masks the rest to zero; a Mul by the
    mask, operators with no strategy, between); None elsewhere."""
    current, hops = source, 0
    while current is not None and hops < 4 and f.strategy_of(current) is None:
        node = f.node(current)
        if node is None or is_comm(node):
            return None
        current, hops = first_input(f.graph, current), hops + 1
    node, strategy = f.node(current), f.strategy_of(current)
    if node is None or strategy is None or node.op not in ("Gather", "GatherV2"):
        return None
    call = call_of(node, strategy)
    axis = next((v for v in call.operands[2:3] if isinstance(v, int) and not isinstance(v, bool)), None)
    layout = layout_of(call, f.devices)
    table = strategy[0] if strategy else ()
    if axis is None or layout is None or not table or table[axis % len(table)] == 1:
        return None
    width = len(layout.device_matrix)
    partial = tuple(width - 1 - v for v in map_axes(layout.tensor_maps[0][axis % len(table)]))
    return current, OutputLayout((), layout.device_matrix, (), partial, layout.rule)


def _after_lookup(f: RankFile, source: str, upto: str) -> tuple[OutputLayout, str] | None:
    """How a masked lookup's output (``source``: the last operator of the graph MindSpore puts in
    place of a Gather that cuts its table along the axis it gathers, :func:`_masked_lookup`) is cut
    once the one collective between it and ``upto`` has added the ranks' parts: as a Gather's
    output, ``table[:axis] + indices + table[axis + 1:]``, the gathered axis summed away; a
    ReduceScatter also cuts dimension 0 by its group. None where ``source`` is no such operator or
    not one summing collective lies between."""
    found = _masked_lookup(f, source)
    if found is None:
        return None
    sums = [f.node(k) for k in path_between(f.graph, source, upto) or []
            if node_is(lambda n: acting_as(n.op) in ("AllReduce", "ReduceScatter") and not is_backward(n), f.node(k))]
    if len(sums) != 1:
        return None
    gather, strategy = found[0], f.strategy_of(found[0])
    call = call_of(f.node(gather), strategy)
    axis = call.operands[2] % len(strategy[0])
    table, indices = tuple(strategy[0]), tuple(strategy[1])
    factors = [*table[:axis], *indices, *table[axis + 1:]]
    added, how = sums[0], "adds the ranks' parts"
    if acting_as(added.op) == "ReduceScatter":
        size = len((f.comm.get(added.line) or {}).get("group_ranks") or ()) or stated_size(added)
        if not size or not factors:
            return None
        factors[0] *= size
        how += f" and leaves each its part of dimension 0 ({size} parts)"
    said = (f"the masked lookup of {f.label(gather)} ({f.node(gather).op}) "
            f"{strategy_text(strategy)}, whose {added.op} (line {added.line}) {how}: a Gather's output, its "
            "indices' cut then the table's other dimensions'")
    return OutputLayout(tuple(factors), (), tuple(None for _ in factors), rule="the summed lookup"), said


def _lookup_sum(f: RankFile, node: Node, e: Explanation, gather: str, layout: OutputLayout, over: str) -> Explanation:
    """The collective that adds the masked lookups of a Gather whose table is cut along the axis
    it gathers: a ReduceScatter also leaves each rank its part of dimension 0."""
    e.action = "sum"
    e.parts = prod(layout.matrix[a] for a in layout.partial)
    e.predicted_group = f.group(layout.matrix, layout.partial)
    name, strategy = f.label(gather), f.strategy_of(gather)
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith("how the producer")]
    _need_not_matter(node, e)
    e.facts.append(f"the lookup: {name} ({f.node(gather).op}) in_strategy {strategy_text(strategy)}, "
                   f"{e.producer} after it in the graph MindSpore puts in its place")
    e.headline = (f"{node.op} {over}: the {f.node(gather).op} {name} cuts its table along "
                  f"the axis it gathers {e.parts} ways: each rank "
                  "looks up only the ids its part holds, the rest masked to zero, so each holds a partial sum; "
                  "the ranks add them")
    own = own_step(f, node) if acting_as(node.op) == "ReduceScatter" else None
    if own is not None:
        e.dims, e.own_shapes = own[0], own[3]
        e.headline += f", each keeping its part of {dims_text(e.dims)} ({own[2]})"
    elif acting_as(node.op) == "ReduceScatter":  # no shapes in the file: MindSpore's ReduceScatter scatters dimension 0
        e.dims = (0,)
        e.headline += ", each keeping its part of dimension 0 (a ReduceScatter's; the file prints no shapes here)"
    e.reconstruction.append(f"{layout.rule}: MindSpore's GatherInfo replaces the lookup with a masked one and "
                            "adds the parts (gather_info.cc)")
    compare_group(e, layout)
    return e


def _plain_reshape(f: RankFile, key: str | None, casts: bool = True) -> str | None:
    """The first forward operator with a strategy that reads the Reshape ``key`` the file gives
    no strategy (at validate the parallel pass's per-rank Reshape is one such), or the Cast or
    TensorMove ``key`` with none, which passes its input's layout on (MindSpore's redistribution
    looks past it for the next operator with one); None where ``key`` is not one, or nothing with
    a strategy reads it; ``casts`` False: a Reshape only."""
    node = f.node(key)
    op = node.op if node is not None else None
    if op not in ("Reshape", *(LAYOUT_KEEPING if casts else ())) or f.strategy_of(key) is not None:
        return None
    beyond = [u for u in consumers(f.graph, key)
              if f.strategy_of(u) is not None and not node_is(is_backward, f.node(u))]
    return beyond[0] if beyond else None


def _partial_sum(f: RankFile, node: Node, e: Explanation, layout: OutputLayout, over: str,
                 combine: str = "sum") -> Explanation:
    """The collective that combines each rank's partial result over the matrix axes
    ``layout.partial``: a sum, or (``combine``) the max, min or product of a reduction that does
    not sum."""
    e.action = combine
    e.parts = 1
    for axis in layout.partial:
        e.parts *= layout.matrix[axis]
    e.predicted_group = f.group(layout.matrix, layout.partial)
    made = f.node(producer(f.graph, node_id(node)))
    what = "its contracted dimension" if made is not None and "MatMul" in made.op else "the dimension it reduces"
    held = "a partial sum" if combine == "sum" else f"the {combine} of its part only"
    whole = "the whole sum" if combine == "sum" else f"the {combine} over every part"
    e.headline = (f"{node.op} {over}: {e.producer} cuts {what} {e.parts} ways, so each rank holds {held}; "
                  f"{e.consumer or 'its consumer'} needs {whole}")
    if combine != "sum":
        told = node.primitive_attrs.get("op")
        if told is not None and told != combine:
            e.cannot_tell.append(f"the AllReduce's op is {told!r}, not the {combine!r} {made.op} needs: "
                                 "the reconstruction is off here")
    rule = output_layout(made, f.strategy_of(node_id(made)), f.devices) if made is not None else None
    if acting_as(node.op) == "ReduceScatter" and rule is not None and len(rule.factors) == len(layout.factors):
        # the sum leaves cut where the out_strategy cuts further than the in_strategy's rule
        e.dims = tuple(i for i, (a, b) in enumerate(zip(rule.factors, layout.factors)) if b > a)
        if e.dims:
            cuts = ", ".join(f"dimension {i} {layout.factors[i] // rule.factors[i]} ways" for i in e.dims)
            e.headline = (f"{node.op} {over}: {e.producer} cuts {what} {e.parts} ways, so each rank holds a partial "
                          f"sum; the ranks add them and each keeps its part of the sum ({cuts}: its out_strategy "
                          f"{shape_text(layout.factors)})")
    compare_group(e, layout)
    return e


def _weight_user(f: RankFile, weight: str) -> tuple[str, int] | None:
    """(forward operator, input position) where the weight named ``weight`` is read with a
    strategy: the first in file order; None where no such operator is in the file."""
    keys = [k for k, d in f.graph.nodes(data=True) if d.get("node") is None and d.get("name") == weight]
    for key in keys:
        for user in consumers(f.graph, key):
            node = f.node(user)
            if node is None or is_backward(node):
                continue
            if f.strategy_of(user) is None and node.op in LAYOUT_KEEPING:
                # a Cast the parallel pass gave no strategy (MindFormers' fp16 compute of a fp32
                # weight) passes the weight's layout on: its reader with a strategy tells it
                later = [u for u in consumers(f.graph, user) if f.strategy_of(u) is not None
                         and not is_backward(f.node(u))]
                user, key = (later[0], user) if later else (user, key)
            if f.strategy_of(user) is not None:
                position = input_position(f, path_between(f.graph, key, user) or [], key, user)
                if position is not None:
                    return user, position
    return None


def _mirror(f: RankFile, node: Node, row: dict, e: Explanation, target: str | None) -> Explanation:
    # the weight MindSpore names: on a mirror operator (step_parallel_end) its primitive, on the
    # gradient's AllReduce it becomes (validate) the node's primal attributes; its producer there
    # is the gradient's own operator (Grad_MatMul's MatMul-op2), not the weight
    weight = (node.primitive_attrs.get("mirror_user_id") or node.cnode_primal_attrs.get("mirror_user_id")
              or e.producer)
    over = f"over {ranks_text(e.group_ranks, word=True)}" if e.group_ranks else "over ranks the file does not tell"
    e.action = "replicas"
    e.headline = (f"{node.op} {over}: the ranks holding the same slice of {weight} (its replicas); its gradient "
                  "is summed over them in the backward pass")
    position = None
    if is_backward(node):  # the gradient's AllReduce: the weight's layout is its forward reader's
        found = _weight_user(f, weight) if weight else None
        if found is not None:
            target, position = found
            e.consumer = f.label(target)
    cast = f.node(target)
    if not is_backward(node) and f.strategy_of(target) is None \
            and node_is(lambda n: n.op in LAYOUT_KEEPING, cast):
        # a Cast the parallel pass gave no strategy (MindFormers' fp16 compute of a fp32 weight)
        # passes the weight's layout on: its reader with a strategy tells it
        later = [u for u in consumers(f.graph, target) if f.strategy_of(u) is not None
                 and not node_is(is_backward, f.node(u))]
        if later:
            position = input_position(f, path_between(f.graph, target, later[0]) or [], target, later[0])
            e.facts.append(f"{weight} reaches {f.label(later[0])} through {cast.name} ({cast.op}, no strategy: it "
                           "passes its input's layout on)")
            target = later[0]
            e.consumer = f.label(target)
    consumer = f.node(target)
    strategy = f.strategy_of(target)
    if consumer is None or strategy is None:
        laid = f.user_layout(weight) if weight else None
        if laid is not None:  # the user's Layout of the weight (an expert weight read by a Morph)
            matrix, tensor_map, said = laid
            e.facts.append(said)
            return _replicas(f, e, weight, matrix, tensor_map)
        why = (f"no operator of the file that reads {weight} carries a strategy" if is_backward(node)
               else "its consumer carries no strategy")
        e.cannot_tell.append(f"the weight's layout: {why}, and no Layout of the user's lays it out (in this file "
                             "or the rank's step_parallel_end)")
        return e
    if position is None:
        trail = path_between(f.graph, node_id(node), target) or []
        position = input_position(f, trail, node_id(node), target)
    devices = f.devices
    layout = layout_of(call_of(consumer, strategy), devices)
    if layout is None or position is None or position >= len(layout.tensor_maps):
        laid = f.user_layout(weight) if weight else None
        if laid is not None:  # no rule for the reader (a Morph): the user's Layout of the weight
            e.facts.append(laid[2])
            return _replicas(f, e, weight, laid[0], laid[1])
        why = ("the stage's devices are not known (a pipeline whose stages the files read do not tell)"
               if devices is None else f"which input of {e.consumer} it is, the file does not tell"
               if layout is not None else f"no layout rule for {consumer.op} here")
        e.cannot_tell.append(f"the weight's device matrix: {why}")
        return e
    e.facts.append(f"{weight} is input {position} of {e.consumer} {strategy_text(strategy)}")
    return _replicas(f, e, weight, layout.device_matrix, layout.tensor_maps[position])


def _replicas(f: RankFile, e: Explanation, weight: str, matrix: tuple[int, ...], tensor_map: tuple) -> Explanation:
    """The ranks holding the same slice of ``weight`` laid out by ``tensor_map`` (entries count
    the axes of ``matrix`` from the right) over ``matrix``: those differing from the rank only
    along the axes that cut none of its dimensions."""
    width = len(matrix)
    used = {width - 1 - v for entry in tensor_map for v in map_axes(entry)}
    free = [i for i in range(width) if i not in used and matrix[i] > 1]
    e.reconstruction.append(f"device matrix {shape_text(matrix)}, tensor map {shape_text(tensor_map)}: "
                            f"axes {', '.join(map(str, free)) or 'none'} leave {weight} whole")
    e.predicted_group = f.group(matrix, free) if free else (f.ctx.rank,)
    e.parts = len(e.predicted_group) if e.predicted_group else None
    if e.predicted_group is not None:
        said = f"replicas by that layout: {ranks_text(e.predicted_group, word=True)}"
        if e.group_ranks is not None and tuple(e.group_ranks) != tuple(e.predicted_group):
            said += f", not the {ranks_text(e.group_ranks, word=True)} MindSpore wrote: the reconstruction is off here"
        e.reconstruction.append(said)
    return e


def _optimizer(f: RankFile, node: Node, e: Explanation, over: str) -> Explanation:
    """Optimizer parallel: a weight kept cut along dimension 0 over the ranks holding the same
    slice of it, gathered whole before use; its gradient's bprop, a ReduceScatter(sum) over the
    same ranks, sums the gradient and leaves each rank the part it updates. The weight is the one
    MindSpore records (``mirror_user_id``), else the producer (a gradient's is not the weight)."""
    weight = (node.primitive_attrs.get("mirror_user_id") or node.cnode_primal_attrs.get("mirror_user_id")
              or (None if is_backward(node) else e.producer))
    called = weight or "whose weight the file does not tell"
    e.parts = len(e.group_ranks) if e.group_ranks else stated_size(node)
    if "Gather" in node.op:
        e.action, e.dims = "gather", (0,)
        e.headline = (f"{node.op} {over}: optimizer parallel: the weight {called} is kept cut along dimension 0 over "
                      "these ranks and gathered whole before use (its gradient scattered back)")
    elif acting_as(node.op) == "ReduceScatter" and is_backward(node):
        e.action, e.dims = "sum", (0,)
        e.headline = (f"{node.op} {over}: optimizer parallel: the gradient of the weight {called} is summed over "
                      "the ranks that keep it cut, each keeping the part of dimension 0 it updates")
    else:
        e.headline = f"{node.op} {over}: optimizer parallel, for the weight {called}"
        e.cannot_tell.append(f"what a {node.op} does for optimizer parallel: no rule here")
    if weight is None:
        e.cannot_tell.append("the weight: the gradient's collective records no mirror_user_id")
    else:
        e.facts.append("optimizer parallel cuts a weight's slice again along its first dimension over the ranks "
                       "holding that slice")
    return e


# ------------------------------------------------------------------ a collective's gradient
#: MindSpore's bprop of each collective (``mindspore/ops/_grad_experimental/grad_comm_ops.py``):
#: the collective the gradient graph runs for it over the same group, and what that does.
#: AllReduce(sum) -> AllReduce(sum) of the output's gradient (``get_bprop_all_reduce``; max and
#: min mask it with ``x == out`` after); AllGather -> ReduceScatter(sum) (``get_bprop_all_gather``);
#: ReduceScatter -> AllGather; AlltoAll -> AlltoAll with split_dim and concat_dim swapped;
#: AlltoAllV -> AlltoAllV with the send and receive counts swapped.
BPROP = {"AllReduce": ("AllReduce", "sum"), "AllGather": ("ReduceScatter", "sum"),
         "ReduceScatter": ("AllGather", "gather"), "AlltoAll": ("AlltoAll", "exchange"),
         "AllToAll": ("AllToAll", "exchange"), "AlltoAllV": ("AlltoAllV", "exchange")}
#: The bprops of the per-rank operators a redistribution uses (``grad_array_ops.py``), nothing
#: on the wire: a Reshape's is a Reshape of the gradient back to its input's shape
#: (``get_bprop_reshape``), a Split's the Concat of its parts' gradients on its axis
#: (``get_bprop_split``), a Concat's a Slice of the gradient per part (``get_bprop_concat``).
LOCAL_BPROP = {"Reshape": ("Reshape", "the gradient reshaped back to the shape the forward Reshape read"),
               "Split": ("Concat", "the gradients of the parts concatenated on the axis the forward Split cut"),
               "Concat": ("Slice", "the gradient sliced into the parts the forward Concat joined, one a Slice")}
#: Matrix products, whose input gradient dX = dY . W^T a column cut of W leaves partial.
_PRODUCTS = MATMUL_OPS | BATCH_MATMUL_OPS


def _forward_of(f: RankFile, node: Node) -> tuple[Node | None, str | None]:
    """(the forward collective whose bprop ``node`` is, its primitive): the one whose
    ``unique_id`` the gradient collective carries as ``forward_unique_id``; where the file lacks
    it (MindSpore dropped it after building the gradient), None and the primitive its
    ``forward_node_name`` (``AllGather_3308``) says, if one of :data:`BPROP`; (None, None) for
    any other node."""
    attrs = node.cnode_primal_attrs if is_backward(node) else {}
    found = f.by_unique_id.get(str(attrs.get("forward_unique_id")))
    if found is not None:
        return found, found.op
    named = str(attrs.get("forward_node_name", "")).rsplit("_", 1)[0]
    local = LOCAL_BPROP.get(named, (None,))[0] == node.op
    return None, (named if acting_as(named) in BPROP or local else None)


def _bprop(f: RankFile, node: Node, e: Explanation, ahead: Node | None, fop: str, over: str) -> Explanation:
    """A collective of the gradient graph that is MindSpore's bprop of the forward collective
    ``ahead`` (a ``fop``; None: not in the file) (:data:`BPROP`): what it does to the gradient
    follows from what ``ahead`` did to the data, explained as the forward is."""
    op = node.op
    row = f.comm.get(ahead.line) if ahead is not None else None
    before = _explain_comm(f, ahead, row) if row is not None else None
    after = f" after {before.producer}" if before is not None and before.producer else ""
    local = LOCAL_BPROP.get(fop, (None,))[0] == op
    if ahead is None:
        e.forward = f"the {fop} {node.cnode_primal_attrs['forward_node_name']}"
        e.facts.append(f"MindSpore records on it forward_node_name {node.cnode_primal_attrs['forward_node_name']}: "
                       f"the forward {'step' if local else 'collective'} whose gradient it carries, no longer in this "
                       "file")
        if not local:  # a local bprop undoes the forward step on the rank's own data, whatever it was
            e.cannot_tell.append(f"what the forward {fop} did: it is not in this file (MindSpore dropped it after "
                                 "building the gradient)")
    else:
        e.forward = f"the {fop}{after} (line {ahead.line})"
        e.facts.append(f"MindSpore records on it forward_unique_id {ahead.cnode_primal_attrs['unique_id']}: the "
                       f"unique_id of {e.forward}, whose gradient it carries")
    if before is not None:
        e.facts.append(f"forward: {before.headline}")
    if local:
        e.action = "none"
        e.headline = f"{op} on the rank's own data: the backward of {e.forward}: {LOCAL_BPROP[fop][1]}"
        return e
    expected, action = BPROP.get(fop) or BPROP.get(acting_as(fop), (None, None))
    if expected not in (op, acting_as(op)):
        e.headline = f"{op} {over}: in the gradient of {e.forward}; the step cannot be told"
        e.cannot_tell.append(f"what it does: MindSpore's bprop of {fop} is {expected or 'not one msinspect knows'}"
                             f", not {op}")
        return e
    e.action = action
    if before is not None:
        e.dims, e.parts, e.own_shapes = before.dims, before.parts, before.own_shapes
        have, want = before.producer_layout, before.consumer_layout
        same_rank = bool(have) and bool(want) and len(have) == len(want)
        gathered = tuple(i for i in range(len(have)) if have[i] > want[i]) if same_rank else ()
        if acting_as(fop) == "AllGather" and before.action == "exchange" and same_rank:
            e.dims = gathered  # the AllGather of an exchange gathers; the StridedSlice after it cuts the rest
        told = before.predicted_group is not None and before.group_ranks is not None \
            and tuple(before.predicted_group) == tuple(before.group_ranks)
        if len(before.chain_groups) > 1 and acting_as(fop) == "AllGather" and _parts_of_one(f, before, gathered):
            # one dimension gathered by several AllGathers whose groups multiply to its parts:
            # each gathers part of it
            e.parts = len(before.group_ranks)
        elif len(before.chain_groups) > 1 and not told and acting_as(fop) != "AllReduce":
            # the forward's step takes several collectives: which of its dimensions this one moved
            # is not told by the step as a whole; its own shapes (or an AlltoAll's attributes) tell it
            e.dims, e.parts = (), None
            own = own_step(f, ahead)
            if own is not None:
                e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
                e.facts.append(f"the forward {fop} is one of {len(before.chain_groups)} collectives of one "
                               f"redistribution; its own shapes, {own[2]}, say what it moved: "
                               f"{dims_text(e.dims)} of the tensor as it reaches it, {e.parts} parts")
            elif not (fop in ("AlltoAll", "AllToAll") and "split_dim" in node.primitive_attrs):
                e.cannot_tell.append(f"which dimension: the forward {fop} is one of {len(before.chain_groups)} "
                                     "collectives of one redistribution, and neither the step nor its own "
                                     "shapes tell which part of it this one does")
    if not e.dims and acting_as(fop) in ("AllGather", "ReduceScatter") \
            and not any(t.startswith("which dimension") for t in e.cannot_tell):
        # the forward's explanation does not tell it (or the forward is gone): the shapes of the
        # forward collective, else of this one, tell what moved in the tensor as it reaches it
        own = next((found for found in (own_step(f, n) for n in (ahead, node) if n is not None) if found), None)
        if own is not None:
            e.dims, e.parts, e.own_shapes = own[0], e.parts or own[1], own[3]
            whose = f"the forward {fop}'s" if ahead is not None and own_step(f, ahead) else "its"
            e.facts.append(f"{whose} own shapes, {own[2]}: {dims_text(e.dims)} of the tensor as it reaches it, "
                           f"{own[1]} parts")
    dims = e.dims
    if acting_as(fop) == "AllReduce":
        combine = ahead.primitive_attrs.get("op", "sum") if ahead is not None else "sum"
        e.headline = (f"{op} {over}: the backward of {e.forward}: the gradient of a sum over ranks is summed over "
                      "the same ranks, so each rank's partial result gets the whole gradient")
        if combine in ("max", "min"):
            e.headline = (f"{op} {over}: the backward of {e.forward}, a {combine} over ranks: the gradient is summed "
                          f"over the same ranks and kept where the rank's own part gave the {combine} (x == out)")
        elif combine == "prod":
            e.headline = (f"{op} {over}: the backward of {e.forward}, a product over ranks: the gradient times the "
                          "product is summed over the same ranks, then divided by the rank's own part")
        e.parts = e.parts or (len(e.group_ranks) if e.group_ranks else None)
        if combine == "sum" and ahead is not None:
            _column_cut_readers(f, ahead, e)
    elif acting_as(fop) == "AllGather":
        keeps = f" of {dims_text(dims)}" if dims else ""
        which = f", which gathered {dims_text(dims)}" if dims else ""
        e.headline = (f"{op} {over}: the backward of {e.forward}{which}: the gradient of the whole is summed over "
                      f"the same ranks and each keeps its own part{keeps}")
        if dims and dims != (0,):
            e.facts.append(f"ReduceScatter scatters dimension 0: the bprops of the Split and Concat after the "
                           f"AllGather move the parts from {dims_text(dims)}")
        if ahead is not None and ahead.primitive_attrs.get("mean_flag") is True:
            e.facts.append("the AllGather's mean_flag: the bprop scales the gradient by 1 / the group's size")
    elif acting_as(fop) == "ReduceScatter":
        e.headline = (f"{op} {over}: the backward of {e.forward}: each rank's part of the gradient"
                      f"{' (' + dims_text(dims) + ')' if dims else ''} is gathered whole over the same ranks")
    elif fop == "AlltoAllV":
        counts = [_operand(f, node_id(n), i) for n in (node, ahead) for i in (1, 2)] if ahead is not None else [None]
        swapped = None not in counts and counts[:2] == counts[:1:-1]
        e.headline = (f"{op} {over}: the backward of {e.forward}: the gradient goes back the way the data came, "
                      "each rank sending back what it received")
        if swapped:
            e.facts.append("its send and receive counts are the forward's, swapped")
        else:
            e.cannot_tell.append("whether its send and receive counts are the forward's swapped: the file does not "
                                 "show them coming from the same values")
    else:  # AlltoAll
        a, b = ahead.primitive_attrs if ahead is not None else {}, node.primitive_attrs
        e.headline = (f"{op} {over}: the backward of {e.forward}: the gradient goes back the way the data came, "
                      "split where the forward concatenated and concatenated where it split")
        if "split_dim" in a and "split_dim" in b:
            said = (f"forward split_dim {a['split_dim']}, concat_dim {a.get('concat_dim')}; this one split_dim "
                    f"{b['split_dim']}, concat_dim {b.get('concat_dim')}")
            if (b["split_dim"], b.get("concat_dim")) == (a.get("concat_dim"), a["split_dim"]):
                e.facts.append(said + ": swapped")
            else:
                e.cannot_tell.append(said + ": not swapped, the reconstruction is off here")
        split, concat = int_attr(node, "split_dim"), int_attr(node, "concat_dim")
        if not dims and split is not None and concat is not None:
            # the forward's step in its producer's terms is not told: the AlltoAll's own
            # attributes say it in the terms of the tensor it exchanges
            dims = e.dims = tuple(dict.fromkeys((concat, split)))
            e.parts = e.parts or int_attr(node, "split_count")
    if acting_as(fop) != "AllReduce" and fop != "AlltoAllV" and not dims and ahead is not None and not e.cannot_tell:
        # (an AlltoAllV moves blocks, not a dimension)
        e.cannot_tell.append(f"which dimension: the forward {fop}'s own explanation does not tell it")
    if ahead is not None:
        _same_group(f, e, ahead)
    return e


def _in_gradient(f: RankFile, node: Node, e: Explanation) -> Explanation:
    """A local step of the gradient graph that MindSpore records as part of a forward operator's
    gradient (``forward_node_name``), not of a collective's: a step of that operator's bprop on
    the rank's own data (``Grad_ReduceMean``'s Reshape of the output's gradient to the kept
    dimensions before its Tile), nothing on the wire. The gradient graph's operators carry no
    strategies: the cut it works on is the forward operator's."""
    attrs = node.cnode_primal_attrs
    named = str(attrs["forward_node_name"])
    found = next((n for n in f.by_line.values() if not is_backward(n) and "unique_id" in n.cnode_primal_attrs
                  and str(n.cnode_primal_attrs["unique_id"]) == str(attrs.get("forward_unique_id"))), None)
    e.forward = (f"{found.name} ({found.op}, line {found.line})" if found is not None
                 else f"{named}, no longer in this file")
    e.action, e.dims = "none", ()
    e.headline = (f"{node.op} on the rank's own data: a step of the gradient of {e.forward}, as MindSpore's bprop "
                  "of that operator computes it; nothing on the wire")
    e.facts.append(f"MindSpore records on it forward_node_name {named}: the forward operator whose gradient it "
                   "computes, not a collective")
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith(("how the producer", "what the consumer"))]
    e.reconstruction.append("the gradient graph's operators carry no strategies: it works on the rank's part of "
                            "the gradient, cut as the forward operator's output")
    return e


def _parts_of_one(f: RankFile, before: Explanation, gathered: tuple[int, ...]) -> bool:
    """Whether the forward step ``before`` gathers one dimension (``gathered``) and the
    AllGathers of its chain (their groups' sizes multiplied) gather exactly its parts."""
    if len(gathered) != 1 or not before.group_ranks:
        return False
    have, want = before.producer_layout[gathered[0]], before.consumer_layout[gathered[0]]
    rows = [f.comm.get(line) or {} for line in before.chain_lines
            if f.by_line.get(line) is not None and acting_as(f.by_line[line].op) == "AllGather"]
    sizes = [len(row["group_ranks"]) for row in rows if row.get("group_ranks")]
    return len(sizes) == len(rows) and prod(sizes) == have // max(want, 1)


def _mirror_gradient(node: Node) -> bool:
    """A gradient collective that is a mirror operator's bprop though its instance name does not
    say so (zoo 19's ``gradforward_op_...`` for ``layer1.bias``, renamed by comm reuse): its
    ``forward_node_name`` names the mirror."""
    return is_backward(node) and str(node.cnode_primal_attrs.get("forward_node_name", "")).startswith(
        tuple(f"{op}_" for op in MIRROR_OPS))


def _operand(f: RankFile, key: str, position: int) -> str | None:
    """The graph key of the value at input ``position`` of ``key``, followed through subgraph
    parameters to the argument bound at their one call; None where the file does not tell."""
    current, seen = input_at(f.graph, key, position), set()
    while current is not None and current not in seen and f.graph.nodes[current].get("bound") \
            and f.graph.nodes[current].get("kind") == NodeKind.PARAMETER:
        seen.add(current)
        current = first_input(f.graph, current)
    return current


def _same_group(f: RankFile, e: Explanation, ahead: Node) -> None:
    """The bprop runs over the forward collective's group: its ranks beside those of this one."""
    row = f.comm.get(ahead.line) or {}
    forward = tuple(row["group_ranks"]) if row.get("group_ranks") else None
    e.predicted_group = forward
    if forward is None or e.group_ranks is None:
        e.cannot_tell.append("whether it runs over the forward's ranks: the file names a group it gives no ranks for")
    elif tuple(e.group_ranks) == forward:
        e.reconstruction.append(f"the bprop runs over the forward's group, {ranks_text(forward, word=True)}, "
                                "as MindSpore wrote")
    else:
        e.reconstruction.append(f"the bprop runs over the forward's group, {ranks_text(forward, word=True)}, not "
                                f"the {ranks_text(e.group_ranks, word=True)} MindSpore wrote: the reconstruction "
                                "is off here")


def _column_cut_readers(f: RankFile, ahead: Node, e: Explanation) -> None:
    """The nearest forward matrix products reading the sum ``ahead`` makes with their weight cut
    along its output dimension: the input gradient dX = dY . W^T of each is a partial sum over the
    ranks holding the other columns, part of what the backward AllReduce adds up."""
    from collections import deque

    from msinspect.analysis.dataflow.flow import data_view

    data, start = data_view(f.graph), node_id(ahead)
    hops, todo, found = {start: 0}, deque([start]), []
    while todo:
        key = todo.popleft()
        for user in data.successors(key):
            node = f.node(user)
            if user in hops or node is not None and (is_backward(node) or moves_data(node)):
                continue
            real = node is not None and not passes_through(f.graph, user)
            hops[user] = hops[key] + (1 if real else 0)
            if node is not None and node.op in _PRODUCTS:
                cut = output_layout(node, f.strategy_of(user), f.devices)
                as_x = input_position(f, [], key, user) == 0  # the sum is its X, not its weight
                if as_x and cut is not None and cut.factors and cut.factors[-1] > 1 and not cut.partial:
                    found.append((hops[user], node.line, user, cut.factors[-1]))
                continue
            todo.append(user)
    if not found:
        return
    nearest = [item for item in sorted(found) if item[0] == min(found)[0]]
    e.readers = tuple(f.label(k) for _, _, k, _ in nearest)
    names = ", ".join(f"{f.label(k)} {strategy_text(f.strategy_of(k))}" for _, _, k, _ in nearest)
    ways = " or ".join(str(n) for n in sorted({n for *_, n in nearest}))
    e.reconstruction.append(
        f"the nearest matrix products reading the sum cut their weight along its output dimension: {names}; each "
        f"one's input gradient dX = dY . W^T over the rank's own columns of W is a partial sum over the {ways} "
        "ranks holding the others: this AllReduce is where they are added up")


def _pipeline(f: RankFile, node: Node, row: dict, e: Explanation) -> Explanation:
    peer = row.get("peer")
    shape = row.get("shape")
    rank = f.ctx.rank
    # MindSpore numbers a pipeline's stages in rank order (stage s holds ranks s*n .. s*n+n-1):
    # a peer of a higher rank is in a later stage, forward activations go there, gradients back
    stage = ("another pipeline stage" if peer is None or rank is None or peer == rank else
             "the next pipeline stage" if peer > rank else "the previous pipeline stage")
    if node.op == "Send":
        e.action = "send"
        e.headline = (f"Send to rank {peer if peer is not None else '?'}: {e.producer}'s output {shape_text(shape)} "
                      f"goes to {stage}")
    else:
        e.action = "receive"
        e.headline = (f"Receive from rank {peer if peer is not None else '?'}: {shape_text(shape)} from "
                      f"{stage} for {e.consumer}")
        e.facts.append(f"the data is what rank {peer if peer is not None else '?'}'s matching Send sends: "
                       "which operator produced it is in that rank's file, not this one")
    e.facts.append("pipeline parallel: the network is cut into stages where the user's pipeline_stage settings "
                   "say; each boundary crossing is a Send and a Receive")
    if peer is None:
        e.cannot_tell.append("the peer rank: the operator's group does not tell it")
    return e


# ------------------------------------------------------------------ entry point
def _replacement(f: RankFile, node: Node) -> Explanation:
    """An operator of a graph MindSpore put in place of another (:func:`~msinspect.analysis.
    vocabulary.stands_in`): it prints no strategy, the operator it stands for has one, and its
    role in that graph follows from what is around it (:func:`~msinspect.analysis.dataflow.flow.
    around_collective`)."""
    key = node_id(node)
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "replacement", "cannot tell", "",
                    source=_source(node))
    original = f.replaced(key)
    if original is None:
        e.headline = f"{node.name} ({node.op}): of the graph MindSpore put in place of another operator"
        e.cannot_tell.append(_unmatched(f, key).removeprefix(": it is of the graph MindSpore put in place of "
                                                               "another operator, and "))
        return e
    e.in_strategy = original.strategy.in_strategy
    e.set_by = e.verdict = "user" if carries_user_attribute(original) else "planner"
    e.origin = original.name
    who = "the user with shard()" if e.set_by == "user" else "the planner"
    e.headline = (f"{node.name} ({node.op}): of the graph MindSpore put in place of {original.name} ({original.op}) "
                  f"{strategy_text(e.in_strategy)}, set by {who}: {_role(f, key, node, original)}")
    e.facts.append(f"{original.name} is read in the rank's step_parallel_begin file; this file gives "
                   f"{node.name} no strategy of its own")
    if node.op == original.op and not around_collective(f.graph, key):
        e.facts += _collectives_around(f, key)
    return e


def _collectives_around(f: RankFile, key: str) -> list[str]:
    """The collectives between the operator ``key`` and the real operators next to it, each with
    its group, as facts."""
    said = []
    for where, ends in (("its input 0 comes through", [producer(f.graph, key)]),
                        ("its output goes through", consumers(f.graph, key))):
        for end in ends:
            trail = (path_between(f.graph, end, key) if where.startswith("its input") else
                     path_between(f.graph, key, end)) if end is not None else None
            moving = [f.node(k) for k in trail or () if node_is(moves_data, f.node(k))]
            said += [f"{where} {n.op} over {ranks_text(f.comm[n.line].get('group_ranks'), word=True)}"
                     for n in moving if n.line in f.comm]
    return said


def _role(f: RankFile, key: str, node: Node, original: Node) -> str:
    """What ``node`` does in the graph put in place of ``original``, in words."""
    if around_collective(f.graph, key):
        if node.op == "Split":
            return (f"it splits the output of the {_op_of(f, input_past_plumbing(f.graph, key))} before it along "
                    f"dimension {node.inputs[1]} into {node.inputs[2]} parts, one a rank" if len(node.inputs) > 2
                    else "it splits the gathered output into one part a rank")
        if node.op == "Concat":
            axis = node.inputs[1] if len(node.inputs) > 1 else "?"
            return (f"it joins those parts along dimension {axis}: a gather along dimension {axis}, where "
                    "MindSpore's AllGather joins along dimension 0")
        scatter = any(_is_op(f, user, "ReduceScatter") for user in f.graph.successors(key))
        return ("it brings the dimension to scatter first: MindSpore's ReduceScatter scatters dimension 0" if scatter
                else "it puts the dimensions back in their order after the collective")
    if node.op == original.op:
        return f"{original.name} as the rank computes it, on the slices the collectives around it give"
    return f"one step of {original.name}'s parallel implementation"


def _is_op(f: RankFile, key: str | None, op: str) -> bool:
    return _op_of(f, key) == op


def _op_of(f: RankFile, key: str | None) -> str:
    """The op of the node ``key``; ``?`` where there is none."""
    node = f.node(key)
    return node.op if node is not None else "?"


def _other(f: RankFile, node: Node) -> Explanation:
    if stands_in(node):
        return _replacement(f, node)
    mean = _mean_division(f, node)
    if mean is not None:
        return mean
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "other", "cannot tell", "",
                    source=_source(node))
    e.headline = f"{node.name} ({node.op}): no strategy and no communication: nothing the planner decided here"
    e.cannot_tell.append("the file gives it no strategy" + (" (a Reshape's layout follows its neighbours)"
                                                           if node.op == "Reshape" else ""))
    return e


def _mean_division(f: RankFile, node: Node) -> Explanation | None:
    """The RealDiv MindSpore's ``ReduceMeanInfo`` puts after the AllReduce of a mean over a cut
    dimension (each rank's mean of its part, summed over the group, divided by the parts): told by
    its input, that AllReduce, and the ReduceMean before it; None for any other node."""
    key = node_id(node)
    total = input_past_plumbing(f.graph, key) if node.op == "RealDiv" and not is_backward(node) else None
    summed = f.node(total)
    row = f.comm.get(summed.line) if summed is not None and summed.op == "AllReduce" else None
    mean = _producer(f, total) if row is not None else None
    if not _is_op(f, mean, "ReduceMean"):
        return None
    group = tuple(row["group_ranks"]) if row.get("group_ranks") else None
    parts = len(group) if group else None
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "other", "local", "",
                    kind="local", source=_source(node), group_ranks=group, producer=f.label(mean), parts=parts)
    over = f"over {ranks_text(group, word=True)}" if group else "over its group"
    divisor = getattr(node.inputs[1], "value_text", None) if len(node.inputs) > 1 else None
    e.headline = (f"{node.name} (RealDiv): completes {e.producer}'s mean: the AllReduce before it sums the "
                  f"{parts or 'group'} parts' means {over}, this divides by {divisor or parts} "
                  "(ReduceMeanInfo's own operators, on the rank's own data)")
    e.facts.append(f"its input is the AllReduce (line {summed.line}) of {e.producer}'s output"
                   + (f"; it divides by {divisor}" if divisor else ""))
    return e


def _same(a: Explanation) -> tuple:
    """What two answers must share to be one: all but their lines, and names less their hashes
    (each block's ``forward_op_<hash>``)."""
    values = asdict(a)
    for key in ("line", "lines", "chain_lines"):
        values.pop(key)
    values["name"] = stable_name(values["name"])
    return tuple(sorted((k, repr(v)) for k, v in values.items()))


def default_stage(dump, rank: int | None = None) -> str | None:
    """The stage ``explain`` reads by default: ``step_parallel_end`` where the rank has it (at
    ``validate`` MindSpore's comm-reuse pass renames instances), else the analyses' default."""
    ranks = [r for r in dump.ranks if rank is None or r.rank == rank]
    return "step_parallel_end" if ranks and ranks[0].stage_files("step_parallel_end") else None


def backward_stage(dump, rank: int | None, stage: str | None) -> str | None:
    """The stage whose file of ``rank`` holds the backward's communication, where ``stage`` (the
    one read, None: :func:`default_stage`) is step_parallel_end: MindSpore builds the gradient
    graph after it, so there its backward collectives are not yet there and a mirror is a
    ``_MirrorOperator``, not yet the gradient's AllReduce. None where no such file is there."""
    from msinspect.stages import WHOLE_STEP_STAGES

    if (stage or default_stage(dump, rank)) != "step_parallel_end":
        return None
    ranks = [r for r in dump.ranks if rank is None or r.rank == rank][:1]
    return next((s for s in WHOLE_STEP_STAGES if ranks and ranks[0].stage_files(s)), None)


def _frame(result):
    import pandas as pd

    from msinspect.analysis.rank.operators import OP_COLUMNS

    return pd.DataFrame(result.ops, columns=OP_COLUMNS) if result.ops else pd.DataFrame(columns=OP_COLUMNS)


def _selected(frame, chosen):
    """The rows ``chosen`` selects, plumbing left out where anything else is selected."""
    hits = frame[chosen.rows(frame)] if not frame.empty else frame
    real = hits[~hits["plumbing"].astype(bool)] if not hits.empty else hits
    return real if not real.empty else hits


def explain(source, selector: str, rank: int | None = None, stage: str | None = None,
            backward=None) -> list[Explanation]:
    """Why the operators ``selector`` selects (:mod:`msinspect.analysis.dataflow.spec_selector`: ``matmul``,
    ``MatMul-0``, ``type:``, ``scope:``, ``re:``; a collective by its instance name) are as they
    are, on ``rank`` (default: the first rank read). ``source``: an
    :class:`~msinspect.analysis.job.collect.Analysis`, a :class:`~msinspect.dumps.Dump` or a path
    (read at ``stage``, default :func:`default_stage`, that rank only). ``backward``: an
    Analysis of the same rank at :func:`backward_stage`, whose backward communication the
    selector also selects from (read by itself when ``source`` is a dump or a path read at the
    default stage): the forward's answers keep step_parallel_end's names, the backward's
    collectives (and each mirror as the gradient's AllReduce) come from the file that has them.
    Operators with the same answer (one per block or micro-batch) are one :class:`Explanation`
    with every ``lines``. :class:`~msinspect.errors.NoMatchError` when the selector selects
    nothing, with the close names."""
    from msinspect.analysis.job.op_rows import close_names, listing, no_match
    from msinspect.analysis.dataflow.spec_selector import parse_selector

    analysis, rank = _analysis_of(source, rank, stage)
    if backward is None and stage is None and not _is_analysis(source):
        backward = _backward_analysis(source, rank)
    results = [r for r in analysis.results if rank is None or r.rank == rank]
    if rank is not None and not results:
        raise no_match(f"rank {rank} was not read", "ranks read",
                       ranks_text(r.rank for r in analysis.results if r.rank is not None))
    results = results[:1]
    chosen = parse_selector(selector)
    later = [r for r in (backward.results if backward is not None else ()) if rank is None or r.rank == rank][:1]
    out: list[Explanation] = []
    for result in results:
        frame = _frame(result)
        hits = _selected(frame, chosen)
        extra = []
        for other in later:
            found = _selected(_frame(other), chosen)
            if not found.empty:
                found = found[found["backward"].astype(bool) & found["comm"].astype(bool)]
            extra += [(other, sorted(found["line"]))] if not found.empty else []
        if hits.empty and not extra:
            names = [n for n in frame["name"] if isinstance(n, str)]
            ops = sorted({o for o in frame["op"] if isinstance(o, str)})
            wanted = selector.split(":", 1)[-1].strip("/").split("/")[-1]
            where = f" on rank {result.rank}" if result.rank is not None else ""
            if not later and not frame.empty and not frame["backward"].astype(bool).any():
                where += (", and the files read hold no gradient graph (MindSpore builds it after "
                          "step_parallel_end, or the step has none): a backward collective cannot be told")
            raise no_match(f"no operator matches {selector!r}{where}", "op types", listing(ops),
                           close_names(wanted, [*names, *ops]))
        out.extend(_answers(analysis, result, sorted(hits["line"])) if not hits.empty else [])
        for other, lines in extra:
            out.extend(_answers(backward, other, lines))
    return out


def _is_analysis(source) -> bool:
    from msinspect.analysis.job.collect import Analysis

    return isinstance(source, Analysis)


def _backward_analysis(source, rank: int | None):
    """The rank's :func:`backward_stage` read, for :func:`explain` of a dump or path; None where
    there is none."""
    from msinspect.analysis.job.collect import analyse
    from msinspect.dumps import Dump, load_dump

    dump = source if isinstance(source, Dump) else load_dump(source)
    later = backward_stage(dump, rank, None)
    return analyse(dump, later, only=[rank] if rank is not None else None) if later else None


def _answers(analysis, result, lines) -> list[Explanation]:
    """The explanations of the operators at ``lines`` of one rank's file, equal ones folded."""
    f = RankFile(analysis, result)
    answers: dict[tuple, Explanation] = {}
    for line in lines:
        node = f.by_line.get(line)
        if node is None:
            continue
        if is_comm(node) and line in f.comm:
            answer = _explain_comm(f, node, f.comm[line])
        elif line in f.strategies:
            answer = _explain_strategy(f, node, f.strategies[line])
        elif _unnamed_local_bprop(f, node):
            answer = _explain_comm(f, node, {"kind": "local", "moves_data": False})
        else:
            answer = _other(f, node)
        same = _same(answer)
        if same in answers:
            kept = answers[same]
            kept.lines = (*kept.lines, line)
        else:
            answers[same] = replace(answer, lines=(line,))
    return list(answers.values())


def _unnamed_local_bprop(f: RankFile, node: Node) -> bool:
    """Whether ``node`` is MindSpore's bprop of a redistribution's local step (:data:`LOCAL_BPROP`)
    that carries no instance name, so no row of communication (a dynamic shape's: zoo 17's Concat
    and Slices), yet records the step whose gradient it is (``forward_unique_id``)."""
    ahead, fop = _forward_of(f, node)
    return ahead is not None and LOCAL_BPROP.get(fop, (None,))[0] == node.op and is_redistribution_step(ahead)


def _analysis_of(source, rank: int | None, stage: str | None):
    """(analysis, rank): ``source`` as it is when an Analysis, else its dump read at ``stage``
    (default :func:`default_stage`) for ``rank`` alone (default: the dump's first)."""
    from msinspect.analysis.job.collect import Analysis

    if isinstance(source, Analysis):
        return source, rank
    from msinspect.analysis.job.collect import analyse
    from msinspect.dumps import Dump, load_dump

    dump = source if isinstance(source, Dump) else load_dump(source)
    if rank is None:
        present = [r.rank for r in dump.ranks if r.rank is not None]
        rank = min(present) if present else None
    return analyse(dump, stage or default_stage(dump, rank), only=[rank] if rank is not None else None), rank


def explain_rank(source, rank: int | None = None, stage: str | None = None, *,
                 comm: bool = True, strategies: bool = True) -> list[dict]:
    """Every communication operator (``comm``) and every operator with a strategy
    (``strategies``) of one rank, explained: plain dicts (:meth:`Explanation.to_dict`), equal
    answers folded, in file order: what the report shows. ``source``, ``rank``, ``stage``: as
    for :func:`explain`."""
    analysis, rank = _analysis_of(source, rank, stage)
    results = [r for r in analysis.results if rank is None or r.rank == rank][:1]
    out = []
    for result in results:
        lines = set()
        if comm:
            lines |= {row["line"] for row in result.comm}
        if strategies:
            lines |= {row["line"] for row in result.strategies}
        out += [e.to_dict() for e in _answers(analysis, result, sorted(lines))]
    return sorted(out, key=lambda e: e["line"])
