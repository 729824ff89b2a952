"""Pictures of a dump: which rank and file to draw, and the names of the files they are written to."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import graphviz

from msinspect.analysis.rank.context import RankContext
from msinspect.errors import MsInspectError
from msinspect.render.dot import render
from msinspect.render.files import FORMATS


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
    :func:`~msinspect.dumps.pick_file`). The job's ranks, when the dump tells them,
    complete the groups of world-group collectives."""
    from msinspect.dumps import load_dump, pick_file
    from msinspect.selection import world_of
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


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_name(what: str, rank: int | None, stage: str, fmt: str) -> str:
    """``matmul-rank0-validate.svg``: the picture's default file name (unsafe characters, such as
    the ``/`` of a scope selector, become ``_``)."""
    parts = [_UNSAFE.sub("_", what).strip("_") or "graph"]
    if rank is not None:
        parts.append(f"rank{rank}")
    parts.append(_UNSAFE.sub("_", stage))
    return "-".join(parts) + "." + fmt
