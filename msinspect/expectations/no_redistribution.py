"""``[[expect.no_redistribution]]``: the first operator feeds the second with nothing between."""
from __future__ import annotations

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import Evidence, close_to


@register
class NoRedistribution(ExpectationKind):
    name = "no_redistribution"
    required = frozenset({"between"})

    def validate(self, values):
        between = values["between"]
        if not (isinstance(between, list) and len(between) == 2 and all(isinstance(b, str) for b in between)):
            raise ValueError('between must name two operators, like ["relu", "matmul2"]')
        return values

    def target(self, values):
        return " -> ".join(values["between"])

    def operators(self, values):
        return tuple(str(v) for v in values["between"] if v)

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        from msinspect.analysis.dataflow.file_view import FileView
        from msinspect.analysis.dataflow.flow import path_between
        from msinspect.analysis.dataflow.node_facts import is_backward, matches
        from msinspect.mindspore.vocabulary import is_comm
        from msinspect.dumps import parse_many, pick_file
        from msinspect.graph import node_id

        first, second = e.values["between"]
        want = f"{first} feeds {second} directly (no communication or redistribution between)"
        ranks = [r for r in checker.dump.ranks if e.ranks is None or r.rank in e.ranks]
        stage = checker.stage(e)
        files = [pick_file(r, stage) for r in ranks]
        found_any, problems, evidence = 0, [], []
        named, seen = {}, {first: False, second: False}  # instance name: op type; which end matched
        for rank, ir in zip(ranks, parse_many(files, jobs=checker.jobs, scheduler=checker.scheduler)):
            view = FileView(ir)
            graph = view.graph
            forward = [n for n in view.by_line.values() if not is_backward(n)]
            named.update((n.instance_name, n.op) for n in forward if n.instance_name)
            sources = [n for n in forward if matches(n, first)]
            targets = [n for n in forward if matches(n, second)]
            seen[first] |= bool(sources)
            seen[second] |= bool(targets)
            for target in targets:
                trails = [path_between(graph, node_id(s), node_id(target)) for s in sources]
                trails = [t for t in trails if t is not None]
                if not trails:
                    continue
                found_any += 1
                comm = [n for n in map(view.node, min(trails, key=len)) if n is not None and is_comm(n)]
                if comm:
                    problems.append(f"rank {rank.rank}: {', '.join(c.name for c in comm)}")
                    evidence += [Evidence.of_node(rank.rank, ir.path, c) for c in comm]
                elif len(evidence) < 1:
                    evidence.append(Evidence.of_node(rank.rank, ir.path, target))
        unmatched = [end for end in (first, second) if not seen[end]]
        if unmatched:
            return Outcome(e, False, want, " | ".join(
                f"no operator matching {end!r}{close_to(end, named.keys(), named.values())}" for end in unmatched))
        if not found_any:
            return Outcome(e, False, want, f"{first} does not feed {second} on any rank")
        found = "between them: " + "; ".join(problems) if problems else f"direct on every rank ({found_any} edge(s))"
        return Outcome(e, not problems, want, found, evidence)
