"""Compile stages named by IR file names, without the numbers MindSpore puts in them.

``step_parallel_end_0041.ir`` -> ``step_parallel_end``; ``24_execute_0142.ir.gz`` -> ``execute``;
``opt_pass_10_optimize_parallel_all_gather_comm_0024.ir`` -> ``opt_pass_optimize_parallel_all_gather_comm``.
"""
from __future__ import annotations

import re
from pathlib import PurePath

IR_SUFFIXES = (".ir", ".ir.gz")

_LEADING = re.compile(r"^\d+_")
_TRAILING = re.compile(r"(?:_\d+)+$")
_OPT_PASS = re.compile(r"^opt_pass_\d+_")
#: A documentation excerpt saved as a file says so in its name (``18_execute_0185.excerpt.ir``),
#: so that it is not taken for a dump file that lost its header.
EXCERPT_MARK = ".excerpt"

#: Stages where the parallel planner's decisions are visible, in pipeline order.
PARALLEL_STAGES = ("step_parallel_begin", "step_parallel_end")


def is_ir_file(path: str | PurePath) -> bool:
    """Whether the file name ends in ``.ir`` or ``.ir.gz``."""
    return str(path).endswith(IR_SUFFIXES)


def stage_of(path: str | PurePath) -> str:
    """The stage a dump file belongs to, from its name alone."""
    name = PurePath(path).name
    for suffix in IR_SUFFIXES[::-1]:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.endswith(EXCERPT_MARK):
        name = name[: -len(EXCERPT_MARK)]
    name = _OPT_PASS.sub("opt_pass_", name)
    name = _LEADING.sub("", name)
    return _TRAILING.sub("", name) or name
