"""``[[expect.comm]]``: a communication right after (or before) an operator; in exactly these
``groups``, or groups of ``group_size`` ranks, where given (neither: any group)."""
from __future__ import annotations

import difflib

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import evidence_of, kind_matches, no_match, rank_cells_text, rank_of, select
from msinspect.expectations.values import MAX_RANKS, is_int, shape_list


@register
class Comm(ExpectationKind):
    name = "comm"
    required = frozenset({"kind"})
    optional = frozenset({"after", "before", "groups", "group_size"})
    text_keys = ("kind", "after", "before")

    def validate(self, values):
        if ("after" in values) == ("before" in values):
            raise ValueError("give exactly one of after, before")
        if "groups" in values:
            values["groups"] = shape_list(values["groups"], "groups", least=0)
            if any(r >= MAX_RANKS for g in values["groups"] for r in g):
                raise ValueError(f"groups must hold rank numbers below {MAX_RANKS}")
        if "group_size" in values and (not is_int(values["group_size"]) or values["group_size"] < 1):
            raise ValueError("group_size must be a positive integer")
        from msinspect.analysis.dataflow.spec_selector import parse_selector

        parse_selector(values.get("after") or values.get("before"))
        return values

    def target(self, values):
        where = f"after {values['after']}" if "after" in values else f"before {values['before']}"
        return f"{values['kind']} {where}"

    def operators(self, values):
        return tuple(str(values[k]) for k in ("after", "before") if values.get(k))

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        v = e.values
        analysis = checker.analysis(e)
        comm, ops = analysis.comm(), analysis.operators()
        anchor = v.get("after") or v.get("before")
        want_groups = sorted(tuple(sorted(g)) for g in v["groups"]) if "groups" in v else None
        want = f"{v['kind']} {'after' if 'after' in v else 'before'} {anchor}"
        if want_groups is not None:
            want += f" in group(s) {want_groups}"
        if "group_size" in v:
            want += f" in groups of {v['group_size']} ranks"
        forward = ops[~ops["backward"] & ~ops["comm"]] if not ops.empty else ops
        anchors = select(forward, anchor, e.ranks, ops, e.graph) if not ops.empty else ops
        if anchors.empty:
            return Outcome(e, False, want, no_match(ops, anchor))
        kinds = (comm[[kind_matches(o, n, v["kind"]) for o, n in zip(comm["op"], comm["name"])]]
                 if not comm.empty else comm)
        if kinds.empty:  # no such communication anywhere read: say which kinds there are
            return Outcome(e, False, want, _no_kind(v["kind"], comm))
        if e.ranks is not None:
            kinds = kinds[kinds["rank"].isin(e.ranks)]
        named = set(zip(anchors["rank"].map(rank_of), anchors["name"], anchors["scope"]))  # names repeat per layer
        if "after" in v:
            hit = [(rank_of(r), p, s) in named
                   for r, p, s in zip(kinds["rank"], kinds["producer"], kinds["producer_scope"])]
        else:
            hit = [any((rank_of(r), c, s) in named for c, s in zip(cs, ss))
                   for r, cs, ss in zip(kinds["rank"], kinds["consumers"], kinds["consumer_scopes"])]
        if len(kinds) and not any(hit):  # an anchor that only carries a value (Depend): its operand edges
            hit = _operand_hits(kinds, anchors, "after" in v)
        found_rows = kinds[hit] if len(kinds) else kinds
        missing = sorted(set(anchors["rank"].map(rank_of)) - set(found_rows["rank"].map(rank_of)),
                         key=lambda r: (r is None, r or 0))
        groups = sorted({tuple(sorted(g)) for g in found_rows["group_ranks"] if isinstance(g, tuple)})
        sizes = sorted({int(s) for s in found_rows["group_size"].dropna()}) if len(found_rows) else []
        unknown = found_rows.loc[found_rows["group_ranks"].isna(), "group"].dropna().tolist()
        found = f"{len(found_rows)} {v['kind']} on {rank_cells_text(found_rows['rank'])} in group(s) {groups}"
        if unknown:
            found += f" (ranks of group {unknown[0]!r} unknown)"
        evidence = evidence_of(found_rows)
        if missing:
            found += f"; none on {rank_cells_text(missing)}, where {anchor} is"
            evidence += evidence_of(anchors[anchors["rank"].isin(missing)])
        ok = not missing and len(found_rows) > 0
        if want_groups is not None:
            ok = ok and groups == want_groups
        if "group_size" in v:
            ok = ok and sizes == [v["group_size"]]
        return Outcome(e, ok, want, found, evidence)


def _operand_hits(kinds, anchors, after: bool) -> list[bool]:
    """Which communication rows take an anchor as an operand (``after``) or are one of an
    anchor's operands, as the IR writes the edge: for anchors the nearest-operator names do not
    reach (plumbing such as ``Depend``)."""
    at = set(zip(anchors["file"].astype(str), anchors["line"]))
    if after:
        return [any((str(f), ln) in at for ln in _operand_lines(f, line))
                for f, line in zip(kinds["file"], kinds["line"])]
    feeds = {(str(f), ln) for f, line in at for ln in _operand_lines(f, line)}
    return [(str(f), line) in feeds for f, line in zip(kinds["file"], kinds["line"])]


def _operand_lines(path, line) -> set[int]:
    """The lines of the operators the node at ``line`` of the file at ``path`` takes as inputs
    (:meth:`~msinspect.analysis.dataflow.file_view.FileView.input_nodes`)."""
    from msinspect.analysis.dataflow.file_view import view_of

    view = view_of(path)
    node = view.by_line.get(int(line))
    return {made.line for made in view.input_nodes(node) if made is not None} if node is not None else set()


def _no_kind(kind: str, comm) -> str:
    """``no communication AllReduc in the ranks read; did you mean AllReduce?``, or the kinds there are."""
    ops = sorted(set(comm["op"])) if not comm.empty else []
    close = difflib.get_close_matches(kind, ops, n=3, cutoff=0.6)
    if close:
        return f"no communication {kind} in the ranks read; did you mean {', '.join(close)}?"
    return f"no communication {kind} in the ranks read (there: {', '.join(ops) if ops else 'none'})"
