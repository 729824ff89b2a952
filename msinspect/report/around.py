"""The report's pictures of the graph around chosen operators: which operators (named with
``--op``; else those a spec names and, per kind of communication, the collective with the most
wire bytes), on which rank, and each picture as inline SVG drawn by :mod:`msinspect.render`.

Bounded: at most :data:`MAX_PICTURES` pictures, each around at most :data:`MAX_SEEDS` operators
(a selector naming the 124 blocks' ``q_matmul`` draws the first three) and at most
:data:`MAX_SVG_BYTES` of SVG (drawn again with fewer hops until it fits, else left out with the
reason and the ``msinspect render`` command that draws it whole)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from msinspect.analysis.dataflow.node_facts import is_backward
from msinspect.errors import MsInspectError, shown_path
from msinspect.rank_merge import rank_number

MAX_PICTURES = 8
MAX_SEEDS = 3
MAX_SVG_BYTES = 300_000
#: Real-operator hops drawn first (then fewer while the picture is too large).
DEPTH = 2


@dataclass
class Choice:
    """An operator (or the operators a selector names) to draw around, and why it was chosen."""

    what: str
    """The selector, or the operator's name and op."""
    why: str
    selector: str | None = None
    """The ``--op`` selector that finds it again (None: chosen by its line)."""
    rank: int | None = None
    file: str | None = None
    lines: list[int] = field(default_factory=list)
    """The IR lines of the operators drawn around (empty: none found)."""
    matched: int = 0
    """How many operators the selector matched on that rank."""


@dataclass
class Neighbourhood:
    """One picture of the report: a :class:`Choice` and its SVG, or why there is none."""

    choice: Choice
    ident: str
    svg: str | None = None
    depth: int | None = None
    problem: str | None = None
    note: str | None = None

    @property
    def file_shown(self) -> str:
        return shown_path(self.choice.file) if self.choice.file else ""


def _spec_selectors(check_report) -> list[tuple[str, str]]:
    """``(selector, entries)``: each operator the spec names, with the entries naming it."""
    from msinspect.expectations import KINDS

    named: dict[str, list[str]] = {}
    for outcome in check_report.outcomes if check_report is not None else ():
        e = outcome.expectation
        kind = KINDS.get(e.kind)  # the job entry (its rank count) is no kind
        for selector in kind.operators(e.values) if kind else ():
            named.setdefault(selector, []).append(e.label)
    return [(s, ", ".join(dict.fromkeys(labels))) for s, labels in named.items()]


def _located(choice: Choice, rows: list[dict] | None) -> Choice:
    """``choice`` with the operators found for its selector (:class:`~msinspect.report.rollup.Located`:
    those of the first rank read whose file has any, forward ones first, the gradient graph only
    when the selector names nothing else)."""
    if rows:
        choice.rank = rank_number(rows[0]["rank"])
        choice.file, choice.lines = str(rows[0]["file"]), [int(row["line"]) for row in rows]
        choice.matched = len(rows)
    return choice


def _busiest_per_kind(busiest) -> list[Choice]:
    """Per kind of communication that moves data: its operator with the most wire bytes (per step,
    at one rank); where no byte count is known, the first of the kind in file order, said so
    (``busiest``: a :class:`~msinspect.report.rollup.Busiest`)."""
    out = []
    for kind, (count, known, first) in busiest.kinds.items():
        if known is not None:
            row = known
            why = (f"the {kind} operator with the most wire bytes: {int(row['wire_bytes']):,} bytes per step at "
                   f"rank {_rank_text(row['rank'])} (of {count} {kind} operator(s))")
        else:
            row = first
            why = (f"the first {kind} operator in file order: which has the most wire bytes cannot be told "
                   f"(no byte count in this file: its shapes are global or unknown; {count} {kind} operator(s))")
        out.append(Choice(f"{row['name']} ({row['op']}, line {int(row['line'])})", why, None,
                          rank_number(row["rank"]),
                          str(row["file"]), [int(row["line"])], 1))
    return out


def _rank_text(rank) -> str:
    number = rank_number(rank)
    return "?" if number is None else str(number)


def selectors(ops: tuple[str, ...] | list[str] = (), check_report=None) -> list[str]:
    """The selectors :func:`choose` looks for: ``ops``, else those the spec names."""
    return list(dict.fromkeys(ops)) if ops else [s for s, _ in _spec_selectors(check_report)]


def choose(analysis, ops: tuple[str, ...] | list[str] = (), check_report=None, rank: int | None = None,
           rolled=None) -> list[Choice]:
    """What the report draws: the ``ops`` selectors when given; else the operators the spec of
    ``check_report`` names, then the busiest collective of each kind; at most :data:`MAX_PICTURES`.
    ``rank``: from that rank's file only (else each from the first rank whose file has it).
    ``rolled``: the report's fold of every rank (:func:`msinspect.report.rollup.roll_up`, made
    with these selectors and ``rank``), else each rank's operators and collectives are read here."""
    from msinspect.report.rollup import Busiest, Located

    if rolled is None:
        located, busiest = Located(selectors(ops, check_report)), Busiest()
        for result in analysis.results:
            if rank is not None and result.rank != rank:
                continue
            for row in result.comm:
                busiest.add(row)
            if located.todo:
                located.add(result.ops)
    else:
        located, busiest = rolled.located, rolled.busiest
    if ops:
        return [_located(Choice(s, "named with --op", s), located.found.get(s)) for s in dict.fromkeys(ops)]
    chosen = [_located(Choice(s, f"named by the spec ({labels})", s), located.found.get(s))
              for s, labels in _spec_selectors(check_report)]
    chosen += _busiest_per_kind(busiest)
    return chosen[:MAX_PICTURES]


def _inline(svg: bytes, ident: str) -> str:
    """Graphviz's SVG for inlining: no XML prolog, doctype or comments (the doctype names a URL),
    element ids prefixed with ``ident`` so that several pictures on one page do not clash."""
    text = svg.decode("utf-8")
    start = text.find("<svg")
    text = re.sub(r"<!--.*?-->", "", text[start:], flags=re.S)
    text = re.sub(r'\bid="', f'id="{ident}-', text)
    return text.replace("<svg ", f'<svg class="around" data-ident="{ident}" ', 1)


def draw(analysis, choices: list[Choice], *, lenient: bool = False, rank: int | None = None) -> list[Neighbourhood]:
    """Each choice drawn (see the module's bounds); a choice that cannot be drawn says why
    (``rank``: the choices were looked for in that rank's file only)."""
    import graphviz

    from msinspect.parser import parse_file
    from msinspect.render import INSTALL_HINT, dot_available, render_around
    from msinspect.graph import to_networkx

    out, parsed = [], {}
    for i, choice in enumerate(choices):
        item = Neighbourhood(choice, f"around{i}")
        out.append(item)
        if not choice.lines:
            stage = analysis.plan.stage if analysis.plan is not None and analysis.plan.stage else "read"
            where = "the files read" if rank is None else f"rank {rank}'s file"
            item.problem = f"no operator of {where} matches {choice.what!r} (at stage {stage})"
            if choice.why.startswith("named by the spec"):
                item.problem += "; the spec may check it at another stage"
            continue
        if not dot_available():
            item.problem = "Graphviz's 'dot' program is not installed, so no picture was drawn; " + INSTALL_HINT
            continue
        try:
            if choice.file not in parsed:
                ir = parse_file(choice.file, lenient=lenient)
                parsed[choice.file] = (ir, to_networkx(ir))
            ir, graph = parsed[choice.file]
            by_line = {n.line: n for n in ir.nodes() if n.index is not None}
            seeds = [by_line[line] for line in choice.lines[:MAX_SEEDS] if line in by_line]
            if choice.matched > MAX_SEEDS:
                item.note = (f"{choice.what!r} matches {choice.matched} operators on rank {_rank_text(choice.rank)}; "
                             f"drawn around the first {MAX_SEEDS} (lines {', '.join(map(str, choice.lines[:MAX_SEEDS]))})")
            for depth in range(DEPTH, -1, -1):
                digraph = render_around(ir, seeds, depth=depth, include_backward=any(map(is_backward, seeds)),
                                        context=analysis.context(choice.rank), graph=graph,
                                        what=choice.what)
                svg = graphviz.pipe("dot", "svg", digraph.source.encode("utf-8"))
                if len(svg) <= MAX_SVG_BYTES:
                    item.svg, item.depth = _inline(svg, item.ident), depth
                    break
            else:
                item.problem = (f"too large to show here even at depth 0 ({len(svg) / 1024:,.0f} KiB of SVG, the "
                                f"bound is {MAX_SVG_BYTES / 1024:,.0f} KiB)")
                if choice.selector:
                    item.problem += f"; draw it with: msinspect render {shown_path(choice.file)} --op '{choice.selector}'"
        except (MsInspectError, graphviz.CalledProcessError, graphviz.ExecutableNotFound) as error:
            item.problem = f"cannot draw it: {error}"
    return out
