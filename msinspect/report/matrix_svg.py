"""The rank-to-rank byte matrix (:func:`msinspect.analysis.job.cost.rank_matrix`) as an SVG heat map,
written through a Jinja2 template like the device grids: one square per sender and receiver, its
shade the bytes per step (square root scale, so small flows stay visible), each carrying its
ranks and bytes as data attributes and a hover title."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from msinspect.analysis.job.cost import MATRIX_ASSUMPTION
from msinspect.report.templating import environment

if TYPE_CHECKING:
    import pandas as pd


def _shade(value: int, largest: int) -> str:
    if value <= 0 or largest <= 0:
        return "#ffffff"
    level = math.sqrt(value / largest)
    light = int(round(235 - 200 * level))  # from pale to dark blue
    return f"rgb({light},{int(round(light * 0.9 + 20))},255)" if light > 0 else "rgb(0,20,255)"


#: The most rows (and columns) of the picture: past that many ranks, blocks of consecutive ranks
#: (:func:`~msinspect.analysis.job.cost.matrix_blocks`).
MOST = 64


def matrix_svg(matrix: pd.DataFrame) -> str:
    """The SVG text of a :func:`~msinspect.analysis.job.cost.rank_matrix` frame; an empty string when
    no byte between two ranks is known."""
    from msinspect.analysis.job.cost import matrix_blocks

    table = matrix_blocks(matrix, MOST)
    if table.empty:
        return ""
    ranks = list(table.index)
    blocked = any(isinstance(r, str) for r in ranks)
    cell = 24 if len(ranks) <= 32 else max(4, 768 // len(ranks))
    left, top = 40, 50
    largest = int(table.to_numpy().max())
    values = table.to_numpy()
    word = "ranks" if blocked else "rank"
    cells = [{"row": i, "col": j, "src": s, "dst": d, "bytes": int(values[i, j]),
              "fill": _shade(int(values[i, j]), largest), "from": f"{word} {s}", "to": f"{word} {d}"}
             for i, s in enumerate(ranks) for j, d in enumerate(ranks)]
    unknown = int(matrix.groupby("src")["unknown"].max().sum()) if not matrix.empty else 0
    width = max(left + cell * len(ranks) + 20, 560)
    return environment().get_template("matrix.svg.j2").render(
        width=width, height=top + cell * len(ranks) + 30, left=left, top=top, cell=cell,
        labels=[str(r) for r in ranks], cells=cells, largest=largest, assumption=MATRIX_ASSUMPTION,
        blocks=f"{len(ranks)} blocks of consecutive ranks, their bytes summed" if blocked else "",
        unknown=f"{unknown} operator(s) whose bytes or peers cannot be told left out" if unknown else "")
