"""The one output schema of ``--json`` and ``--csv``: every field a command writes, its type and
meaning, and the one converter from analysis values (numpy scalars, NaN, tuples, paths) to JSON
values and CSV cells.

Rules: the same fact has the same name in every command; ``rank`` is an int (null when
a file has no rank number), ``rank_label`` the folder's name; ints stay ints; missing is JSON
``null`` and an empty CSV cell; booleans are ``true`` / ``false`` in both; lists and dicts in a CSV
cell are JSON text (``[[2, 1], [1, 4]]``), never Python reprs; no key depends on the data.
The table of ``docs/schema.md`` is :func:`markdown_table` (a test keeps them equal).
"""
from __future__ import annotations

import dataclasses
import enum
import io
import json
import math
import sys
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Iterable, Iterator

if TYPE_CHECKING:
    import pandas as pd


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    """The key in ``--json`` and the column in ``--csv``."""
    type: str
    """``int``, ``str``, ``bool``, ``float``, ``list[...]``, ``dict``; ``|null`` where it may be missing."""
    meaning: str
    commands: str
    """The commands that write it (``every table`` = summary, strategies, comm, shapes, slices)."""


_ALL = "summary, strategies, comm, shapes, shapes --params, check, parse"
FIELDS: tuple[Field, ...] = (
    # who and where
    Field("rank", "int|null", "the rank's number, N of its `rank_N` folder; null for a file outside one",
          _ALL + ", dryrun"),
    Field("rank_label", "str", "the rank's folder name as printed (`rank_3`)", "summary, check (`ranks_read`)"),
    Field("file", "str|null", "the IR file read, as found under the path given; null for a rank not read",
          _ALL),
    Field("line", "int", "1-based line of the operator (or of the evidence) in `file`",
          "strategies, comm, shapes, shapes --params, check (`evidence`), diff"),
    Field("stage", "str|null", "the stage of `file`, from its name (`validate`, `step_parallel_end` ...)",
          "summary, strategies, comm, check, parse"),
    Field("complete", "bool", "false for a row from a file read in part (`--lenient`); at the top of `check`: "
          "every file read whole", "summary, strategies, comm, shapes, shapes --params, check, diff"),
    Field("other_stage", "bool", "the rank was read at another stage than the rest (see `note`)",
          "summary, strategies, comm, shapes, shapes --params, check (`ranks_read`), diff"),
    Field("note", "str|null", "why a rank was read at another stage, or not read; summary: also why its "
          "pipeline stage cannot be told; dryrun: that nothing was computed; cost: that the rank's backward is not "
          "in the file read (its totals then null)", "summary, check (`ranks_read`), dryrun, cost"),
    # operators
    Field("name", "str", "the operator's instance name (`matmul`)", "strategies, comm, shapes, diff"),
    Field("op", "str|null", "the operator's type (`MatMul`); shapes --params: the consumer's, null for a graph "
          "input or a weight whose consumer has no strategy", "strategies, comm, shapes, shapes --params, diff"),
    Field("scope", "str|null", "the operator's scope (`Default/network-WithLossCell/_backbone-Net`)",
          "strategies, comm, shapes, diff"),
    Field("graph", "str", "the subgraph holding the operator", "strategies, comm"),
    Field("micro", "int|null", "the micro-batch of a pipeline operator", "strategies, comm"),
    Field("merged_into", "int|null", "the line of the earlier copy of this collective MindSpore's common-subexpression "
          "pass merges it into (same graph, primitive, attributes and inputs: a file written before that pass, "
          "step_parallel_end); null: none", "comm"),
    Field("source_line", "str|null", "the network script's line the operator comes from", "strategies"),
    # strategies
    Field("in_strategy", "list[list[int]]|null", "the input strategy, one list per input", "strategies"),
    Field("out_strategy", "list[list[int]]|null", "the output strategy where one is set", "strategies"),
    Field("set_by", "str", "who set the strategy: `user` (shard), `planner`, or `unknown` where the file "
          "cannot tell", "strategies"),
    Field("global_inputs", "list[list[int]|null]|null", "each input's global shape", "strategies"),
    Field("global_output", "list[int]|null", "the output's global shape", "strategies"),
    Field("rank_inputs", "list[list[int]|null]|null", "each input's per-rank shape found in the dump; null "
          "before the parallel pass", "strategies"),
    Field("rank_output", "list[int]|null", "the output's per-rank shape found in the dump", "strategies"),
    Field("expected_rank_inputs", "list[list[int]|null]|null", "each input's global shape divided by its "
          "strategy", "strategies"),
    Field("reference_line", "int|null", "the line of the operator's counterpart in the reference (pre-parallel) "
          "file its global shapes come from, paired across renames by its data neighbours; null: none, or "
          "cannot tell", "strategies"),
    Field("shapes_ok", "bool|null", "every `rank_inputs` equals `expected_rank_inputs`; null: cannot tell",
          "strategies"),
    # shapes
    Field("input", "int", "the input's position (0 = first)", "shapes"),
    Field("global_shape", "list[int]|null", "the input's (or weight's) global shape", "shapes, shapes --params, diff"),
    Field("strategy", "list[int]|null", "the input's strategy (its row of `in_strategy`; shapes --params: of "
          "the input that reads the weight)", "shapes, shapes --params"),
    Field("expected_rank_shape", "list[int]|null", "`global_shape` divided by `strategy`", "shapes"),
    Field("rank_shape", "list[int]|null", "the per-rank shape found in the dump (the input's, or the weight's)",
          "shapes, shapes --params"),
    Field("ok", "bool|null", "shapes: `rank_shape` equals `expected_rank_shape` (null: cannot tell); "
          "check, dryrun: no failure; train: the run succeeded and every expectation checked passed",
          "shapes, check, dryrun, train"),
    # slices
    Field("param", "str", "the weight's (or graph input's) name", "shapes --params, diff"),
    Field("consumer", "str|null", "the operator with a strategy that reads the weight (its instance name); null "
          "for a graph input (laid out by MindSpore's `_VirtualDataset`) or where the slice is read off shapes",
          "shapes --params"),
    Field("device_matrix", "list[int]|null", "the weight's device arrangement as MindSpore's "
          "`parameter_layout_dict` states it: the user's Layout, else its consumer's device matrix "
          "(repeated-calculation axis on the right), every size-1 axis removed", "shapes --params"),
    Field("tensor_map", "list[int]|null", "the weight's tensor map on that device arrangement (axes counted "
          "from the right, -1: not cut), as `parameter_layout_dict` states it", "shapes --params"),
    Field("slice_shape", "list[int]|null", "the shape of that layout's slice (before any optimizer shard)",
          "shapes --params"),
    Field("opt_shard_group", "str", "the optimizer-shard group of the weight (the group of its "
          "optimizer-parallel AllGather), empty without optimizer shard", "shapes --params"),
    Field("opt_shard_ranks", "list[int]|null", "the ranks of that group, as its AllGather states them; null: "
          "no optimizer shard, or the file does not tell them", "shapes --params"),
    Field("slice", "list[list[int]]|null", "the part of the weight the rank stores: [start, stop] per "
          "dimension, its part of the layout's slice under an optimizer shard (the slice cut along its "
          "first dimension over the group, in rank order); null: cannot tell", "shapes --params"),
    Field("slice_text", "str", "`slice` as `[8:16, 0:16]`, or `cannot tell`", "shapes --params"),
    Field("record", "str", "the weight against MindSpore's own record of it in the rank folder (the dry run "
          "keeps one; a strategy and group checkpoint serve too): `same`, `differs` (exit 1), `cannot tell here` "
          "(the record states what msinspect could not tell), `not in the record`, `no record`", "shapes --params"),
    Field("record_says", "str|null", "what differs from MindSpore's record, both values, or what it states that "
          "msinspect could not tell", "shapes --params"),
    Field("ms_device_matrix", "list[int]|null", "MindSpore's record: the weight's device matrix", "shapes --params"),
    Field("ms_tensor_map", "list[int]|null", "MindSpore's record: the weight's tensor map", "shapes --params"),
    Field("ms_slice_shape", "list[int]|null", "MindSpore's record: the layout's slice shape (before an optimizer "
          "shard)", "shapes --params"),
    Field("ms_opt_shard_ranks", "list[int]|null", "MindSpore's record: the optimizer-shard group's ranks (its "
          "group checkpoint)", "shapes --params"),
    Field("ms_slice", "list[list[int]]|null", "what MindSpore's loader gives the rank by its record: the layout's "
          "slice at the rank's place in its stage, then its part under an optimizer shard", "shapes --params"),
    # communication
    Field("kind", "str", "comm: the communication kind (`forward`, `redistribution`, `backward`, `gradient`, "
          "`optimizer`, `pipeline`, `local`, `virtual`, `user`, `unknown`: cannot tell); check: the expectation kind; "
          "shapes --params: `weight`, or `input` for a graph input (the dataset's tensors)",
          "comm, comm --by kind, check, diff, shapes --params"),
    Field("moves_data", "bool", "the operator puts data on the wire", "comm, comm --by group"),
    Field("producer", "str|null", "the operator whose output it takes (past Load / Depend)", "comm"),
    Field("producer_scope", "str|null", "the producer's scope", "comm"),
    Field("consumers", "list[str]", "the operators that take its output", "comm"),
    Field("consumer_scopes", "list[str|null]", "their scopes", "comm"),
    Field("group", "str|null", "the communication group's name", "comm"),
    Field("group_ranks", "list[int]|null", "the group's ranks (Send / Receive: the rank and its peer); null "
          "where nothing tells them (or, in `--by group`, for operators that move nothing: see `moves_data`)",
          "comm, comm --by group"),
    Field("group_size", "int|null", "the group's rank count", "comm"),
    Field("peer", "int|null", "the other rank of a Send / Receive (its global rank); null: cannot tell", "comm"),
    Field("shape", "list[int]|null", "the tensor it takes, at the rank where that can be told, else as the "
          "file prints it (global before the parallel pass's re-inference; Send / Receive: their `shape` attribute)", "comm"),
    Field("out_shape", "list[int]|null", "the tensor it gives at the rank (by MindSpore's infer rule of the "
          "operator where the file prints none); null: cannot tell", "comm"),
    Field("dtype", "str|null", "the tensor's element type (`Float32`)", "comm"),
    Field("tensor_bytes", "int|null", "bytes of the tensor at the rank; null: cannot tell (summed in `--by`)",
          "comm, comm --by"),
    Field("wire_bytes", "int|null", "bytes the rank sends for it per step (docs/comm.md: the formulas); null: cannot "
          "tell; summary and `--by`: the sum, null when any is unknown", "summary, comm, comm --by"),
    Field("operators", "int", "communication operators counted", "comm --by"),
    Field("rank_count", "int", "ranks they are on", "comm --by"),
    Field("ops", "list[str]", "their operator types", "comm --by"),
    Field("unknown_bytes", "int", "operators whose bytes cannot be told", "comm --by"),
    # summary
    Field("family", "str|null", "the IR family (`2.10`, `1.x`, `excerpt`)", "summary, parse"),
    Field("status", "str", "`complete`, `incomplete`, `excerpt`; summary: `not read`; parse: `unreadable`",
          "summary, parse"),
    Field("strategies", "int|null", "operators with a strategy", "summary"),
    Field("set_by_user", "int|null", "of those, set by the user", "summary"),
    Field("comm", "int|null", "communication operators", "summary"),
    Field("by_kind", "dict|null", "communication operators per kind (`{\"forward\": 2}`)", "summary"),
    Field("wire_unknown", "int|null", "communication operators whose wire bytes cannot be told", "summary"),
    Field("weights", "int|null", "parameters with a value", "summary"),
    Field("sharded_weights", "int|null", "those an operator with a strategy reads", "summary"),
    Field("stage_ranks", "str|null", "the ranks of the rank's pipeline stage, as ranges (`0-3, 8-11`); null: cannot tell",
          "summary"),
    Field("rank_group", "str|null", "the rank's group (ranks whose graphs are the same up to rank-specific "
          "values: group names, rank lists, peers, slice offsets); null: in no group (read in part, at another "
          "stage, or not read)", "summary"),
    Field("rank_group_odd", "list[str]|null", "what sets this rank apart from its group-mates in structure "
          "(an operator, a strategy); null: nothing", "summary"),
    Field("rank_group_distinct", "list[str]|null", "what distinguishes the rank's group from the other groups",
          "summary"),
    # diff (``differences``: one list of rows per section; ``left_*`` / ``right_*``: each side's value)
    Field("left_label", "str", "the left side's rank folder name (`rank_0`), or its file's folder", "diff"),
    Field("right_label", "str", "the right side's rank folder name, or its file's folder", "diff"),
    Field("left_rank", "int|null", "the left side's rank number; null for a file outside a `rank_N` folder", "diff"),
    Field("right_rank", "int|null", "the right side's rank number", "diff"),
    Field("left_file", "str", "the IR file read for the left side", "diff"),
    Field("right_file", "str", "the IR file read for the right side", "diff"),
    Field("left_stage", "str|null", "the stage of `left_file`", "diff"),
    Field("right_stage", "str|null", "the stage of `right_file`", "diff"),
    Field("left_stage_ranks", "list[int]|null", "the ranks of the left side's pipeline stage; null: cannot tell",
          "diff"),
    Field("right_stage_ranks", "list[int]|null", "the ranks of the right side's pipeline stage", "diff"),
    Field("same_stage", "bool|null", "both sides are in one pipeline stage; null: cannot tell", "diff"),
    Field("left_complete", "bool", "the left side's file was read whole", "diff"),
    Field("right_complete", "bool", "the right side's file was read whole", "diff"),
    Field("pipelined", "bool|null", "the job has a pipeline (Send / Receive); null: cannot tell", "diff"),
    Field("unaligned", "dict", "per `operators` / `communication`: how many of each side could not be aligned, "
          "so were not compared (`left`, `right`)", "diff"),
    Field("warnings", "list[str]", "why the two sides may not come from one run", "diff"),
    Field("differences", "dict", "per section (`only`, `shapes`, `strategies`, `comm`, `slices`): its rows",
          "diff"),
    Field("section", "str", "the section a row belongs to (`--csv`: all sections in one table)", "diff"),
    Field("gradient", "bool", "the operator is in the backward pass", "diff"),
    Field("left_count", "int", "how many such operators the left side has", "diff"),
    Field("right_count", "int", "how many such operators the right side has", "diff"),
    Field("left_inputs", "list[list[int]|null]|null", "the left side's per-rank input shapes", "diff"),
    Field("right_inputs", "list[list[int]|null]|null", "the right side's per-rank input shapes", "diff"),
    Field("left_output", "list[int]|null", "the left side's per-rank output shape", "diff"),
    Field("right_output", "list[int]|null", "the right side's per-rank output shape", "diff"),
    Field("left_line", "int|null", "the operator's line in `left_file`", "diff"),
    Field("right_line", "int|null", "the operator's line in `right_file`", "diff"),
    Field("left_strategy", "list[list[int]]|null", "the left side's input strategy", "diff"),
    Field("right_strategy", "list[list[int]]|null", "the right side's input strategy", "diff"),
    Field("after", "str|null", "the operator a communication operator follows (its producer)", "diff"),
    Field("n", "int", "which of the communication operators with the same op, kind and producer (0 = first)",
          "diff"),
    Field("left_group", "list[int]|null", "the left side's communication group, as its ranks", "diff"),
    Field("right_group", "list[int]|null", "the right side's communication group, as its ranks", "diff"),
    Field("per_rank", "bool", "the two groups differ only as every rank's own group does: each holds its side's "
          "rank, with as many ranks spaced alike (`[0, 2]` on rank 0, `[1, 3]` on rank 1): expected, not a finding",
          "diff"),
    Field("inputs", "list[list[int]|null]", "`only`: the per-rank input shapes of the first such operator", "diff"),
    Field("output", "list[int]|null", "`only`: its per-rank output shape", "diff"),
    Field("left_slice", "str", "the slice of the weight the left side holds (`[0:512, 0:128]`, or `cannot tell`)",
          "diff"),
    Field("right_slice", "str", "the slice the right side holds", "diff"),
    Field("left_record", "str", "what MindSpore's own record in the left rank's folder gives it of the weight (its "
          "loader's slice), `no record` where the folder keeps none, `not in the record`, or `cannot tell`", "diff"),
    Field("right_record", "str", "the same of the right rank", "diff"),
    # parse
    Field("subgraphs", "int|null", "subgraphs read", "parse"),
    Field("stated_subgraphs", "int|null", "subgraphs the file states (`# Total subgraphs`)", "parse"),
    Field("nodes", "int|null", "numbered nodes read", "parse"),
    Field("cnodes", "int|null", "cnodes read", "parse"),
    Field("stated_cnodes", "int|null", "cnodes the file states (`Total number of cnodes`)", "parse"),
    Field("params", "int|null", "parameters read", "parse"),
    Field("lines", "int|null", "lines in the file", "parse"),
    Field("diagnostics", "list[dict]", "what could not be read: `line`, `column`, `end_line`, `message`", "parse"),
    Field("findings", "list[dict]", "operands that name no node or parameter (`msinspect.graph.lint`): "
          "`line`, `what`", "parse"),
    Field("failure", "dict|null", "an `analyze_fail.ir`'s failure: `message` (the exception MindSpore caught) and "
          "`stack`, the evaluation stack outermost first, each `depth`, `graph`, `node`, `line`, `source` (its "
          "`# In file` note, or null)", "parse, summary"),
    Field("reason", "str|null", "why the file or folder could not be read; dryrun: why a rank failed",
          "parse, dryrun"),
    # check
    Field("spec", "str", "the spec file (train: the one its dumps are, or would have been, checked against)",
          "check, train"),
    Field("dump", "str", "the dump checked", "check"),
    Field("passed_count", "int", "expectations that passed", "check"),
    Field("failed_count", "int", "expectations that failed", "check"),
    Field("outcomes", "list[dict]", "one per expectation: `entry`, `kind`, `target`, `stage`, `basis`, `passed`, "
          "`expected`, `found`, `evidence`", "check (JSON)"),
    Field("entry", "str", "the spec entry (`expect.strategy[0]`)", "check"),
    Field("target", "str", "what the expectation is about (an operator, an edge ...)", "check"),
    Field("basis", "str|null", "where the expected value comes from, as the spec says", "check"),
    Field("passed", "bool", "the expectation holds", "check"),
    Field("expected", "str", "what the spec expects, in words", "check"),
    Field("found", "str", "what the dump shows, in words", "check"),
    Field("evidence", "list[dict]", "IR lines that show it: `rank`, `file`, `line`, `text`", "check"),
    Field("text", "str", "the IR line", "check (`evidence`)"),
    # dryrun
    Field("script", "str", "the script run", "dryrun"),
    Field("run_dir", "str", "the run folder the ranks' IR went to", "dryrun, train"),
    Field("rank_size", "int", "the ranks of the run (dryrun: simulated)", "dryrun, train"),
    Field("interrupted", "bool", "stopped by Ctrl-C", "dryrun"),
    Field("wall_seconds", "float", "wall time in seconds (the run's, or the rank's)", "dryrun, train"),
    Field("ranks", "list[dict]", "dryrun: one per rank: `rank`, `state`, `reason`, `ir_dir`, `log`, "
          "`scheduler_log`, `step_parallel_end`, `ir_complete`, `unreadable`, `mindspore_errors`, `failed_at`, "
          "`exit_code`, `wall_seconds`, `peak_rss_bytes`, `pids`; "
          "check: in `ranks_read`", "dryrun, check (`ranks_read`)"),
    Field("state", "str", "where the rank ended: `queued`, `running`, `ok`, `compiled` (whole IR that "
          "msinspect's parser cannot read yet, see `unreadable`), `failed`, `timed out`, `cancelled`", "dryrun"),
    Field("ir_dir", "str|null", "the rank's IR folder", "dryrun"),
    Field("log", "str|null", "the rank's log", "dryrun"),
    Field("scheduler_log", "str|null", "the scheduler's log", "dryrun"),
    Field("step_parallel_end", "list[str]", "the step_parallel_end files the rank wrote", "dryrun"),
    Field("ir_complete", "bool", "whether the rank wrote step_parallel_end, every file whole by its own "
          "node counts (true also for a rank cancelled after writing it)", "dryrun"),
    Field("unreadable", "list[str]", "the whole step_parallel_end files msinspect's parser rejects, each as "
          "`path:line:col: message` (empty when it reads them all)", "dryrun"),
    Field("mindspore_errors", "list[str]", "MindSpore's own `[ERROR]` / `[EXCEPTION]` / `[CRITICAL]` records in a "
          "rank's log that did not compile, in order, each once (`[ERROR] PARALLEL MatMulInfo11: The strategy is "
          "...`); the first usually says why, and `reason` quotes it", "dryrun"),
    Field("failed_at", "str", "where in the network a rank's compile failed, `path:line: code`; empty when the "
          "log does not say", "dryrun"),
    Field("failures", "list[dict]", "the ranks that did not compile, those that failed alike together: `ranks`, "
          "`state`, `reason`, `mindspore_errors`, `failed_at`, `logs`", "dryrun"),
    Field("cancelled", "list[dict]", "the ranks stopped or never started (two ranks failed alike, or Ctrl-C), as "
          "`failures` lists them; never counted as failed", "dryrun"),
    Field("kept_stages", "list[str]|null", "the passes kept in each rank folder (default: the parallel stages "
          "and `validate`); null: every pass (`--keep-all-passes`)", "dryrun"),
    Field("record", "str|null", "the run record, `config.json` in the run folder: the run's settings and how it "
          "ended", "dryrun"),
    Field("exit_code", "int|null", "the rank's process exit code", "dryrun"),
    Field("peak_rss_bytes", "int|null", "the rank's peak resident memory", "dryrun"),
    Field("pids", "list[int]", "the rank's processes", "dryrun"),
    Field("ranks_read", "list[dict]", "per stage analysed: `stage`, `read_count`, `not_read_count`, "
          "`other_stage_count`, `ranks` (`rank`, `rank_label`, `folder`, `file`, `stage`, `read`, "
          "`other_stage`, `note`)", "check (JSON)"),
    # train
    Field("mode", "str", "the training job (`manual_parallel`, `sharding_propagation`, `recursive_pipeline`)",
          "train"),
    Field("run", "str", "`real` (trained) or `dry_run` (the planner compiled, nothing computed)", "train"),
    Field("device", "str", "where the job ran, in words", "train"),
    Field("message", "str", "the run's sentence: why it failed, or what it did", "train"),
    Field("loss_first", "float|null", "the first loss rank 0 printed; null for a dry run (nothing computed)",
          "train"),
    Field("loss_last", "float|null", "the last loss rank 0 printed; null for a dry run", "train"),
    Field("losses_identical", "bool|null", "every rank printed the same losses; null for a dry run", "train"),
    Field("checked", "bool", "a check of the run's dumps was asked for (not `--no-check`)", "train"),
    Field("check", "dict|null", "the check of the run's dumps, as `check --json` prints it; null: none made "
          "(not asked for, the run failed, or see `check_error`)", "train"),
    Field("check_error", "str|null", "why the dumps could not be checked", "train"),
)

BY_NAME = {f.name: f for f in FIELDS}


def markdown_table() -> str:
    """The table of every field that ``docs/schema.md`` holds."""
    lines = ["| field | type | meaning | commands |", "|---|---|---|---|"]
    lines += [f"| `{f.name}` | {f.type.replace('|', ' or ')} | {f.meaning.replace('|', '/')} | {f.commands} |"
              for f in FIELDS]
    return "\n".join(lines)


def _pandas():
    """pandas when it is loaded, else None: a value can be a pandas object (a DataFrame, ``NA``)
    only once pandas is loaded, so a command that never made a frame never pays for its import."""
    return sys.modules.get("pandas")


def is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    pandas = _pandas()
    return pandas is not None and (value is pandas.NA or value is pandas.NaT)


def is_set(value: Any) -> bool:
    """A flag of a row as ``fillna(False).astype(bool)`` reads it: a missing value is false."""
    return not is_missing(value) and bool(value)


def plain(value: Any, field: str | None = None) -> Any:
    """A JSON value: NaN / NA -> None, numpy scalars -> Python, tuples and sets -> lists, paths ->
    str, enums -> their value, dicts and dataclasses -> dicts, recursively; a float of a field the
    schema types ``int`` (pandas turns an int column with a gap into floats) -> int."""
    kind = type(value)
    if kind is str or kind is int or kind is bool:  # most values: asked first, by exact type
        return value
    if is_missing(value):
        return None
    if isinstance(value, enum.Enum):  # before str and int: a str enum is its value
        return plain(value.value)
    if isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        kind = BY_NAME[field].type if field in BY_NAME else ""
        return int(value) if kind.startswith("int") and value.is_integer() else value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(v) for v in value)
    if isinstance(value, PurePath):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), f.name) for f in dataclasses.fields(value)}
    if hasattr(value, "item") and hasattr(value, "dtype") and getattr(value, "ndim", 0) == 0:
        return plain(value.item(), field)  # numpy scalar
    if hasattr(value, "tolist"):
        return plain(value.tolist(), field)  # numpy array
    return value


def record(row: dict) -> dict:
    """One row (a dict) as JSON values, each field converted by its schema type."""
    return {str(k): plain(v, k) for k, v in row.items()}


def records(frame: pd.DataFrame) -> list[dict]:
    """A DataFrame as a list of JSON objects, one per row, every column."""
    return [record(row) for row in frame.to_dict("records")]


def to_json(value: Any) -> str:
    """``value`` (a DataFrame, a list of rows or any mapping) as indented JSON text."""
    pandas = _pandas()
    if pandas is not None and isinstance(value, pandas.DataFrame) or isinstance(value, list):
        return "".join(json_pieces(value))
    if isinstance(value, dict):
        value = record(value)
    return json.dumps(value, indent=2, ensure_ascii=False)


def rows_of(rows: pd.DataFrame | Iterable) -> Iterator:
    """The rows of a DataFrame (as dicts) or of an iterable, one at a time."""
    pandas = _pandas()
    if pandas is not None and isinstance(rows, pandas.DataFrame):
        return iter(rows.to_dict("records"))
    return iter(rows)


def _value(row: Any) -> Any:
    return record(row) if isinstance(row, dict) else plain(row)


def json_pieces(rows: pd.DataFrame | Iterable) -> Iterator[str]:
    """The indented JSON list of ``rows`` (a DataFrame, or any iterable of dicts or values, read
    as it goes) in pieces, one per row: joined, the text ``json.dumps`` gives for the whole list,
    which is never held whole."""
    first = True
    for row in rows_of(rows):
        text = json.dumps(_value(row), indent=2, ensure_ascii=False).replace("\n", "\n  ")
        yield ("[\n  " if first else ",\n  ") + text
        first = False
    yield "[]" if first else "\n]"


def jsonl_lines(rows: pd.DataFrame | Iterable) -> Iterator[str]:
    """JSON Lines: each of ``rows`` as one JSON object (the fields of ``--json``) on a line of its
    own, ending in a newline, made as the rows come."""
    for row in rows_of(rows):
        yield json.dumps(_value(row), ensure_ascii=False) + "\n"


def csv_cell(value: Any, field: str | None = None) -> str:
    """A CSV cell: empty for missing, ``true`` / ``false``, lists and dicts as JSON text."""
    value = plain(value, field)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def to_csv(rows: pd.DataFrame | Iterable[dict], columns: list[str] | None = None) -> str:
    """Rows (a DataFrame or dicts) as CSV text with a header of every column (``columns`` when the
    rows may be none)."""
    import pandas as pd

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=columns)
    cells = pd.DataFrame({c: [csv_cell(v, c) for v in frame[c]] for c in frame.columns}, columns=list(frame.columns))
    out = io.StringIO()
    cells.to_csv(out, index=False, lineterminator="\n")
    return out.getvalue()


if __name__ == "__main__":  # python -m msinspect.schema: the table of docs/schema.md
    print(markdown_table())
