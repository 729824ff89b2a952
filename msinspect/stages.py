"""Compile stages named by IR file names, without the numbers MindSpore puts in them.

``step_parallel_end_0041.ir`` -> ``step_parallel_end``; ``24_execute_0142.ir.gz`` -> ``execute``;
``opt_pass_10_optimize_parallel_all_gather_comm_0024.ir`` -> ``opt_pass_optimize_parallel_all_gather_comm``.
"""
from __future__ import annotations

import os
import re
from pathlib import Path, PurePath

IR_SUFFIXES = (".ir", ".ir.gz")

_LEADING = re.compile(r"^\d+_")
_TRAILING = re.compile(r"(?:_\d+)+$")
_OPT_PASS = re.compile(r"^opt_pass_\d+_")
#: A documentation excerpt saved as a file says so in its name (``18_execute_0185.excerpt.ir``),
#: so that it is not taken for a dump file that lost its header.
EXCERPT_MARK = ".excerpt"

#: Stages where the parallel planner's decisions are visible, in pipeline order.
PARALLEL_STAGES = ("step_parallel_begin", "step_parallel_end")
#: Stages tried, in order, when the user names none: ``validate`` has both the strategies and the
#: per-rank shapes in 2.10; ``execute`` has them in 2.2.
PREFERRED_STAGES = ("validate", "step_parallel_end", "execute", "step_parallel_begin")
#: Stages that hold the whole step (the gradient graph expanded), best first: ``cost`` reads the
#: first most ranks hold by default (step_parallel_end holds the forward and the mirrors only).
#: ``backend_pass`` is 2.10's last frontend pass, after validate: a dump copied with a pass filter
#: may keep it and not validate.
WHOLE_STEP_STAGES = ("validate", "backend_pass", "execute")
#: Pre-parallel stages whose abstracts give the global shapes, best first.
REFERENCE_STAGES = ("step_parallel_begin", "step_parallel_end")
#: Stages written before the parallel pass has cut the shapes: their abstracts are global.
GLOBAL_SHAPE_STAGES = frozenset({
    "bootstrap", "parse", "symbol_resolve", "combine_like_graphs", "meta_unpack_prepare",
    "abstract_specialize", "type_inference", "event_method", "auto_monad", "graph_reusing", "inline",
    "add_attr", "parallel-infer-symbol", "pre_auto_parallel", "insert-virtual-dataset",
    "parallel-infer-symbol-second", "dataset_repeat_opt", "pipeline_split", "step_parallel_begin",
    "step_parallel_end", "opt_pass_add_attr_with_inline", "opt_pass_py_interpret_to_execute",
})
#: The passes a default dry run dumps and keeps (``MS_DEV_DUMP_IR_PASSES``): the parallel stages
#: and ``validate``, the analyses' default read (2.10's first pass with per-rank shapes, which
#: ``shapes`` compares and ``comm`` counts bytes from). ``--keep-all-passes`` keeps every pass.
DRYRUN_PASSES = ("step_auto_parallel_begin", "step_parallel_begin", "step_parallel_end", "validate")
#: The passes a training job's dry run dumps: the parallel stages and ``validate``.
TRAIN_DRYRUN_PASSES = ("step_parallel_begin", "step_parallel_end", "validate")
#: The stage whose files say whether a dry-run rank compiled (holds the strategies).
STRATEGY_STAGE = "step_parallel_end"


def is_ir_file(path: str | PurePath) -> bool:
    """Whether the file name ends in ``.ir`` or ``.ir.gz``."""
    return str(path).endswith(IR_SUFFIXES)


def stage_of(path: str | PurePath) -> str:
    """The stage a dump file belongs to, from its name alone."""
    # a path's text read as text: a PurePath of each of 10,000 ranks' files puts every rank_N
    # folder in pathlib's interned names for good
    name = path.name if isinstance(path, PurePath) else os.path.basename(os.fspath(path).rstrip("/"))
    for suffix in IR_SUFFIXES[::-1]:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.endswith(EXCERPT_MARK):
        name = name[: -len(EXCERPT_MARK)]
    name = _OPT_PASS.sub("opt_pass_", name)
    name = _LEADING.sub("", name)
    return _TRAILING.sub("", name) or name


def later_pass(path) -> bool:
    """Whether ``path`` is the file of a pass after the parallel passes (validate, execute ...),
    whose weights keep the layouts the parallel pass gave them
    (:func:`~msinspect.analysis.rank.params.params_at_end`)."""
    return isinstance(path, (str, PurePath)) and stage_of(path) not in PARALLEL_STAGES

def files_of_stage(folder: str | PurePath, stages: str | tuple[str, ...]) -> list[Path]:
    """The IR files (``.ir`` or ``.ir.gz``) directly in ``folder`` whose stage (by name, never by
    number: :func:`stage_of`) is ``stages`` or one of them, sorted by name; [] for no folder."""
    wanted = (stages,) if isinstance(stages, str) else tuple(stages)
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if is_ir_file(p.name) and stage_of(p) in wanted)
