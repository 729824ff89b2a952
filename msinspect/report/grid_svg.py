"""Device-grid pictures as SVG (and PNG), written by hand through a Jinja2 template.

Hand-written SVG rather than Graphviz: the picture is a fixed arrangement of boxes (no layout to
compute), every cell carries its rank and slice as data attributes that tests and the report's
JavaScript read, and the same text is inlined in the HTML report as it is written to a file. PNG
comes from that SVG through cairosvg (the ``report`` extra)."""
from __future__ import annotations

from dataclasses import dataclass

from msinspect.errors import MsInspectError
from msinspect.report.grid import DeviceGrid
from msinspect.report.templating import environment

#: Colours of the first slices (ColorBrewer Set3); later ones are spread over the hue circle.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
           "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")
CELL_H, PAD, TITLE_H, HEAD_H, PER_LINE = 40, 12, 20, 0, 4


class PngUnavailableError(MsInspectError):
    """PNG output needs cairosvg (``pip install 'msinspect[report]'``)."""


def colour(index: int) -> str:
    if index < len(PALETTE):
        return PALETTE[index]
    return f"hsl({(index * 137.508) % 360:.0f}, 60%, 78%)"


@dataclass(frozen=True)
class _Box:
    x: int
    y: int
    w: int
    h: int


def _cell_width(grid: DeviceGrid) -> int:
    longest = max(len(c.slice_text) for c in grid.cells())
    return max(84, 7 * longest + 14)


def grid_svg(grid: DeviceGrid, highlight: int | None = None, index: int = 0) -> str:
    """The SVG text of ``grid``; ``highlight``: a global rank whose cell gets a thick border.
    ``index`` makes element ids unique when several pictures share one page."""
    cw = _cell_width(grid)
    n_rows = len(grid.panels[0].rows)
    n_cols = len(grid.panels[0].rows[0])
    panel_w = n_cols * cw + PAD
    panel_h = TITLE_H + HEAD_H + n_rows * CELL_H + PAD
    per_line = min(PER_LINE, len(grid.panels))
    header = _header(grid)
    header_h = (len(header) + 1) * 16
    panels = []
    for i, panel in enumerate(grid.panels):
        px = PAD + (i % per_line) * panel_w
        py = header_h + (i // per_line) * panel_h
        cells = []
        for r, row in enumerate(panel.rows):
            for c, cell in enumerate(row):
                cells.append({"cell": cell, "box": _Box(px + c * cw, py + TITLE_H + HEAD_H + r * CELL_H, cw - 4, CELL_H - 4),
                              "fill": colour(cell.colour), "highlight": cell.rank == highlight})
        panels.append({"panel": panel, "box": _Box(px, py, panel_w - PAD, panel_h - PAD), "cells": cells})
    lines = (len(grid.panels) + per_line - 1) // per_line
    width = max(PAD * 2 + per_line * panel_w, int(6.6 * max(len(t) for t in header)) + 2 * PAD)
    height = header_h + lines * panel_h + PAD
    return environment().get_template("grid.svg.j2").render(
        grid=grid, panels=panels, width=width, height=height, index=index, header=header)


def _header(grid: DeviceGrid) -> list[str]:
    """The lines above the grids: what is drawn, the layout, and what each axis does."""
    lines = [f"{grid.param} {list(grid.shape)}: {len(grid.slices)} distinct slice(s) over {len(grid.ranks)} devices",
             f"device matrix {tuple(grid.device_matrix)}, tensor map {tuple(grid.tensor_map)} "
             "(tensor map counts matrix axes from the right; -1: not cut)"]
    drawn = []
    if grid.row_axis:
        drawn.append(f"rows {grid.row_axis.label}")
    if grid.col_axis:
        drawn.append(f"columns {grid.col_axis.label}")
    if grid.outer_axes:
        drawn.append("one grid per value of " + ", ".join(a.label for a in grid.outer_axes))
    lines.append("; ".join(drawn) or "one device")
    ones = [f"dm[{a.position}]=1" for a in grid.axes if a.size == 1]
    replicated = [f"dm[{a.position}]" for a in grid.axes if not a.cuts and a.size > 1]
    notes = []
    if replicated:
        notes.append(f"replicated along {', '.join(replicated)}: ranks differing only there hold the same slice "
                     "(same colour)")
    if ones:
        notes.append(f"not drawn: {', '.join(ones)}")
    if notes:
        lines.append("; ".join(notes))
    if grid.note:
        lines.append(grid.note)
    return lines


def svg_to_png(svg: str) -> bytes:
    """PNG bytes of an SVG text; :class:`PngUnavailableError` without cairosvg."""
    try:
        import cairosvg
    except (ImportError, OSError) as error:  # OSError: the cairo library itself is missing
        raise PngUnavailableError(f"PNG output needs cairosvg and the cairo library ({error}); "
                                  "pip install 'msinspect[report]', or write .svg") from None
    return cairosvg.svg2png(bytestring=svg.encode("utf-8"))
