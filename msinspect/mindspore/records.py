"""MindSpore's own record of where each weight lives, read without MindSpore.

MindSpore writes its layout decisions into files users already keep; this module reads them into
typed records, one :class:`WeightLayout` per parameter, with neither MindSpore nor pandas nor the
IR parser installed. One reader per kind of file:

* :func:`read_strategy_checkpoint`: MindSpore's strategy checkpoint in protobuf, written at each
  parallel compile where ``set_auto_parallel_context(strategy_ckpt_config={"save_file": ...})``
  (or ``strategy_ckpt_save_file``), or an ``AutoParallel`` cell's ``save_param_strategy_file``,
  asks for it; any name but one ending ``.json``, which MindSpore writes (and this reads) as
  JSON. The dry run's rank folders hold it as ``strategy_N.ckpt``.
* :func:`read_strategy_json`: the JSON form of the same, and the operator strategy file of
  ``set_op_strategy_config(mode="SAVE")`` / ``AutoParallel.save_operator_strategy_file``
  (sharding propagation), which is the same form with operators only.
* :func:`read_group_checkpoint`: the group checkpoint (``group_ckpt_save_file`` /
  ``AutoParallel.set_group_ckpt_save_file``), protobuf; ``group_info_N.pb`` in a rank folder.
* :func:`read_layout_record`: ``parameter_layout_N.json``, the compiled graph's layout
  dictionary (``GraphExecutor_.get_parameter_layout(phase)``, what ``Cell.parameter_layout_dict``
  gives) as msinspect's dry run writes it after each compile.

:func:`record_of` finds what a rank folder holds (``N`` is the compile's number in that rank's
worker: one set of files a compiled graph, never overwritten); :func:`agree` compares a
parameter's record in a layout dictionary with its record in a checkpoint.

The protobuf files are decoded with the ``protobuf`` package (a dependency of msinspect) from a
descriptor written below field by field after MindSpore's ``node_strategy.proto`` (package
``mindspore.straspb``, proto2; it serializes to the very bytes MindSpore's generated module
registers), in a pool of its own: MindSpore's generated ``node_strategy_pb2`` is neither imported
nor copied, and importing this module does not import protobuf (the first read does, about 50
ms). A file that is cut short, damaged or of another kind raises :class:`RecordError` naming it,
never a protobuf error; protobuf has no end mark, so a file cut exactly between two entries reads
as a file with fewer entries.

MindSpore's definitions, which the records keep as written: the device matrix lists the devices
of the rank's pipeline stage as axes, with axes of size 1 removed; the tensor map gives, for each
dimension of the weight, the device axis that cuts it, counted from the right of the device
matrix (0 is its last axis), -1 where nothing cuts it, and a list of axes where several cut one
dimension (a ``Layout`` such as ``(("dp", "sp"), "None")``). Under optimizer parallel a weight's
slice is cut once more along its first dimension over its optimizer-shard group.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from msinspect.errors import EXIT_CANNOT_READ, EXIT_FINDING, MsInspectError, shown_path

# ----------------------------------------------------------------------------- file names
#: The dry run's file of one compile's parameter layout dictionary (``N``: the compile's number).
LAYOUT_FILE = re.compile(r"^parameter_layout(?:_(\d+))?\.json$")
#: A strategy checkpoint in protobuf: the dry run's ``strategy_N.ckpt``, or ``strategy.ckpt``.
STRATEGY_FILE = re.compile(r"^strategy(?:_(\d+))?\.ckpt$")
#: A strategy checkpoint (or an operator strategy file) in JSON: ``strategy[_N].json``.
STRATEGY_JSON_FILE = re.compile(r"^strategy(?:_(\d+))?\.json$")
#: A group checkpoint: the dry run's ``group_info_N.pb``, or ``group_info.pb``.
GROUP_FILE = re.compile(r"^group_info(?:_(\d+))?\.pb$")
_KINDS = (LAYOUT_FILE, STRATEGY_FILE, STRATEGY_JSON_FILE, GROUP_FILE)

#: The format tag of the dry run's layout file (its ``format`` field).
LAYOUT_FORMAT = "msinspect parameter layout 1"
#: What each position of a layout dictionary entry holds, in MindSpore 2.10's order (the layout
#: file repeats it in its ``fields``); earlier releases give a prefix of it.
LAYOUT_FIELDS = ("device_matrix", "tensor_map", "slice_shape", "field_size", "uniform_split", "opt_shard_group",
                 "full_shape", "slice_shape_after_reshape", "pipeline_shared", "is_send", "peer_rank", "sr_tag")


def is_record_file(name: str) -> bool:
    """Whether a file name in a rank folder is one of the records :func:`record_of` reads."""
    return any(kind.match(name) for kind in _KINDS)


# ----------------------------------------------------------------------------- errors
@dataclass(eq=False)
class RecordError(MsInspectError):
    """A record file that is not what its kind should be: cut short, damaged, of another kind, or
    missing a field. ``str()`` is ``path: message`` (``path:line:col: message`` for JSON text).
    A finding about the files, like a damaged IR file."""

    path: str
    """The file at fault."""
    message: str
    """What is wrong, in words."""
    line: int = 0
    """1-based line of a JSON file's fault; 0 when not at a line."""
    column: int = 0
    """1-based column of a JSON file's fault; 0 when not at a line."""

    exit_code = EXIT_FINDING

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        where = shown_path(self.path) + (f":{self.line}:{self.column}" if self.line > 0 else "")
        return f"{where}: {self.message}"


class RecordReadError(RecordError):
    """A record file that cannot be read at all: not there, no permission, an I/O error."""

    exit_code = EXIT_CANNOT_READ


# ----------------------------------------------------------------------------- records
TensorMap = tuple[int | tuple[int, ...], ...]


@dataclass(frozen=True)
class WeightLayout:
    """Where one parameter lives, as one of MindSpore's records states it; None where that record
    does not say."""

    name: str
    """The parameter's name (``blocks.0.attention.wq``, ``adam_m.blocks.0.attention.wq``; graph
    inputs are ``inputs0`` ... in a layout dictionary)."""
    device_matrix: tuple[int, ...]
    """The devices of the rank's pipeline stage as axes, size-1 axes removed."""
    tensor_map: TensorMap
    """Per dimension of the weight: the device axis that cuts it, counted from the right of
    :attr:`device_matrix`, -1 where none does; a tuple where several axes cut one dimension (a
    layout dictionary's map of the reshaped weight grouped back per dimension)."""
    slice_shape: tuple[int, ...] | None
    """The rank's slice as the device matrix and tensor map cut it (layout dictionary): before the
    optimizer-shard cut, which MindSpore's loader makes from the group (measured, MindSpore 2.10);
    None in a strategy checkpoint, which does not state it."""
    field_size: int
    """MindSpore's field size (embedding tables of a field-split ``EmbeddingLookup``); 0 otherwise."""
    uniform_split: bool | None
    """Whether every slice has the same shape (layout dictionary)."""
    opt_shard_group: str | None
    """The communication group of the optimizer-shard cut (``"2-1645..."``), ``""`` when the
    weight is not optimizer-sharded (layout dictionary); None where the record names no group."""
    opt_shard_step: int | None = None
    """The rank step between members of the optimizer-shard group, 0 when not sharded (strategy
    checkpoint)."""
    opt_shard_size: int | None = None
    """The number of ranks in the optimizer-shard group (strategy checkpoint): 0 when not sharded,
    -1 for every rank holding the same slice (``optimizer_weight_shard_size`` left at -1, see
    :attr:`opt_shard_ranks`)."""
    full_shape: tuple[int, ...] | None = None
    """The whole weight's shape (layout dictionary; ``tensor_shape`` of a JSON strategy checkpoint)."""
    pipeline_stage: int | None = None
    """The pipeline stage whose ranks hold this slice: the stage of the operators of a strategy
    checkpoint, the prefix of a merged checkpoint's ``stage-name``, or the rank's stage in a
    layout file (its rank over the devices of a stage)."""
    split_shape: tuple[int, ...] | None = None
    """A strategy checkpoint's ``param_split_shape``: the sizes of uneven slices; None when empty."""
    indices_offset: tuple[int, ...] | None = None
    """A strategy checkpoint's ``indices_offset`` (field-split embeddings); None when empty."""
    source: str = ""
    """The file this record was read from."""

    @property
    def opt_sharded(self) -> bool:
        """Whether the record says the weight is optimizer-sharded: a group, or a size other than
        0 and 1."""
        return bool(self.opt_shard_group) or self.opt_shard_size not in (None, 0, 1)

    @property
    def slices(self) -> int:
        """How many distinct slices the device matrix and tensor map cut the weight into."""
        axes = {a for m in self.tensor_map for a in (m if isinstance(m, tuple) else (m,)) if a >= 0}
        count = 1
        for axis in axes:
            if axis < len(self.device_matrix):
                count *= self.device_matrix[len(self.device_matrix) - 1 - axis]
        return count

    @property
    def opt_shard_ranks(self) -> int | None:
        """How many ranks share the optimizer-shard cut, from a checkpoint's size (-1 resolved as
        MindSpore's ``_extract_layout_item`` does: the stage's devices over :attr:`slices`); 1
        when not sharded; None where the record gives no size (a layout names a group instead)."""
        if self.opt_shard_size is None:
            return None
        if self.opt_shard_size == -1:
            devices = 1
            for d in self.device_matrix:
                devices *= d
            return devices // self.slices
        return max(self.opt_shard_size, 1)


@dataclass(frozen=True)
class OperatorStrategy:
    """One operator's strategy as a strategy checkpoint (or operator strategy file) records it."""

    name: str
    """The node's name as MindSpore wrote it: ``MatMul_blocks.0.attention.wq`` (operator type and
    its first weight) in a strategy checkpoint, the scoped name
    ``Default/network-WithLossCell/_backbone-Net/MatMul-op0`` in an operator strategy file."""
    stage: int
    """The pipeline stage of the operator."""
    strategy: tuple[tuple[int, ...], ...]
    """How many slices each dimension of each input is cut into; empty for an operator cut by a
    ``Layout``, whose strategy MindSpore's checkpoint does not save."""


@dataclass(frozen=True)
class StrategyCheckpoint:
    """A strategy checkpoint (protobuf or JSON) or an operator strategy file."""

    path: str
    """The file."""
    format: str
    """``protobuf`` or ``json``."""
    current_stage: int
    """MindSpore's ``current_stage`` field as written: a count of the saves of the worker (1 in a
    merged file), not the pipeline stage (see :attr:`OperatorStrategy.stage`)."""
    operators: tuple[OperatorStrategy, ...]
    """The operators' strategies, in the file's order."""
    weights: dict[str, WeightLayout] = field(default_factory=dict)
    """Per parameter (none in an operator strategy file), in the file's order."""

    @property
    def stage(self) -> int | None:
        """The pipeline stage of the file's operators when they agree (a rank's file), else None."""
        stages = {op.stage for op in self.operators}
        return stages.pop() if len(stages) == 1 else None


@dataclass(frozen=True)
class GroupCheckpoint:
    """A group checkpoint: the communication groups a rank's graph uses."""

    path: str
    """The file."""
    groups: dict[str, tuple[int, ...]]
    """Group name -> its ranks, in the file's order."""
    restore_ranks: tuple[int, ...]
    """``ckpt_restore_rank_list``: the ranks whose checkpoints hold what this rank needs."""


@dataclass(frozen=True)
class LayoutRecord:
    """The dry run's record of one compile's parameter layout dictionary (``parameter_layout_N.json``)."""

    path: str
    """The file."""
    compile: int | None
    """The compile's number in the rank's worker (``N``)."""
    rank: int | None
    """The rank that compiled."""
    rank_size: int | None
    """The device count of the job."""
    phase: str
    """MindSpore's phase of the compiled graph (``train.1764...``)."""
    parallel_mode: str | None
    """The parallel mode of the compile."""
    pipeline_stages: int | None
    """The number of pipeline stages of the compile (1 without pipeline)."""
    strategy_checkpoint: str | None
    """Where this compile's strategy checkpoint went: a file name in the rank folder, the
    script's own path where it set one, None where none was asked for."""
    mindspore: str | None
    """The MindSpore release that compiled."""
    weights: dict[str, WeightLayout] = field(default_factory=dict)
    """Per parameter: weights, optimizer states and graph inputs, as the dictionary holds them."""


@dataclass(frozen=True)
class RankRecord:
    """What a rank folder holds of MindSpore's records, each kind in compile order."""

    folder: str
    """The rank folder."""
    layouts: tuple[LayoutRecord, ...] = ()
    """The parameter layout files."""
    checkpoints: tuple[StrategyCheckpoint, ...] = ()
    """The strategy checkpoints (protobuf and JSON)."""
    groups: tuple[GroupCheckpoint, ...] = ()
    """The group checkpoints."""

    @property
    def weights(self) -> dict[str, WeightLayout]:
        """The layout of each parameter as the last compile left it: the last layout file's, else
        the last strategy checkpoint's."""
        for record in (*self.layouts[::-1], *self.checkpoints[::-1]):
            if record.weights:
                return record.weights
        return {}


# ----------------------------------------------------------------------------- protobuf
_PACKAGE = "mindspore.straspb"
_DESCRIPTOR_NAME = "node_strategy.proto"
#: MindSpore's ``node_strategy.proto``, message by message: (name, field, label, type, message
#: type); field numbers count from 1 in order.
_MESSAGES = (
    ("ParallelStrategy", ("dim", "repeated", "uint32", None)),
    ("ParallelStrategys", ("stage", "required", "uint32", None),
     ("parallel_strategy", "repeated", "message", "ParallelStrategy")),
    ("ParallelStrategyItem", ("node_name", "required", "string", None),
     ("parallel_strategys", "required", "message", "ParallelStrategys")),
    ("DevMatrix", ("dim", "repeated", "uint32", None)),
    ("TensorMap", ("dim", "repeated", "int32", None)),
    ("ParamSplitShape", ("dim", "repeated", "int64", None)),
    ("IndicesOffset", ("dim", "repeated", "int64", None)),
    ("ParallelLayouts", ("dev_matrix", "repeated", "message", "DevMatrix"),
     ("tensor_map", "repeated", "message", "TensorMap"),
     ("param_split_shape", "repeated", "message", "ParamSplitShape"),
     ("indices_offset", "repeated", "message", "IndicesOffset"),
     ("field", "required", "int32", None), ("opt_weight_shard_step", "required", "int32", None),
     ("opt_weight_shard_size", "required", "int32", None)),
    ("ParallelLayoutItem", ("param_name", "required", "string", None),
     ("parallel_layouts", "required", "message", "ParallelLayouts")),
    ("ParallelGroupRanks", ("dim", "repeated", "uint32", None)),
    ("ParallelGroupItem", ("group_name", "required", "string", None),
     ("parallel_group_ranks", "required", "message", "ParallelGroupRanks")),
    ("ParallelGroupMap", ("parallel_group_item", "repeated", "message", "ParallelGroupItem"),
     ("ckpt_restore_rank_list", "required", "message", "ParallelGroupRanks")),
    ("ParallelStrategyMap", ("current_stage", "required", "uint32", None),
     ("parallel_strategy_item", "repeated", "message", "ParallelStrategyItem"),
     ("parallel_layout_item", "repeated", "message", "ParallelLayoutItem")),
)
_classes: dict[str, type] = {}


def file_descriptor():
    """MindSpore's ``node_strategy.proto`` as a ``FileDescriptorProto``, built from :data:`_MESSAGES`."""
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.FieldDescriptorProto
    out = descriptor_pb2.FileDescriptorProto(name=_DESCRIPTOR_NAME, package=_PACKAGE)
    for name, *fields in _MESSAGES:
        message = out.message_type.add(name=name)
        for number, (field_name, label, kind, type_name) in enumerate(fields, 1):
            entry = message.field.add(name=field_name, number=number,
                                      label=getattr(proto, f"LABEL_{label.upper()}"),
                                      type=getattr(proto, f"TYPE_{kind.upper()}"))
            if type_name:
                entry.type_name = f".{_PACKAGE}.{type_name}"
    return out


def _message_class(name: str) -> type:
    """The message class ``name`` of :func:`file_descriptor`, from a pool of msinspect's own (so
    that it never meets MindSpore's generated module in protobuf's default pool)."""
    if not _classes:
        from google.protobuf import descriptor_pool, message_factory

        pool = descriptor_pool.DescriptorPool()
        pool.Add(file_descriptor())
        for message, *_ in _MESSAGES:
            _classes[message] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{message}"))
    return _classes[name]


def _read_bytes(path: str | os.PathLike) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise RecordReadError(os.fspath(path), "no such file") from None
    except IsADirectoryError:
        raise RecordReadError(os.fspath(path), "a folder, not a file") from None
    except OSError as exc:
        raise RecordReadError(os.fspath(path), f"cannot read: {exc.strerror or exc}") from None


def _unknown_fields(message) -> bool:
    """Whether ``message`` or any message inside it holds fields the schema does not know: bytes
    of another kind of file that happened to decode."""
    from google.protobuf import unknown_fields

    if len(unknown_fields.UnknownFieldSet(message)):
        return True
    for desc, value in message.ListFields():
        if desc.message_type is None:
            continue
        repeated = getattr(desc, "is_repeated", None)  # protobuf 6.31+; ``label`` before (gone in 7)
        if repeated is None:
            repeated = desc.label == desc.LABEL_REPEATED
        items = value if repeated else (value,)
        if any(_unknown_fields(item) for item in items):
            return True
    return False


def _decode(path: str | os.PathLike, message: str, what: str):
    """The file's bytes decoded as ``message``, or :class:`RecordError` saying why not."""
    from google.protobuf.message import DecodeError

    data = _read_bytes(path)
    if not data:
        raise RecordError(os.fspath(path), f"empty: not a {what}")
    parsed = _message_class(message)()
    try:
        parsed.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise RecordError(os.fspath(path), f"not a {what}: its bytes do not decode as MindSpore's {message} "
                                           f"(cut short or damaged: {exc})") from None
    if not parsed.IsInitialized():
        missing = ", ".join(parsed.FindInitializationErrors()[:4])
        raise RecordError(os.fspath(path), f"not a {what}: MindSpore's {message} lacks required fields ({missing})")
    if _unknown_fields(parsed):
        raise RecordError(os.fspath(path), f"not a {what}: it holds fields MindSpore's {message} does not have "
                                           "(a file of another kind)")
    return parsed


def _stage_and_name(name: str) -> tuple[int | None, str]:
    """A merged checkpoint's ``stage-name`` split as MindSpore's loader splits it."""
    stage, dash, rest = name.partition("-")
    return (int(stage), rest) if dash and stage.isdigit() else (None, name)


def _tensor_map(maps: list[list[int]]) -> TensorMap:
    """One tensor map from a record's list of them: MindSpore writes one, or one a dimension
    where several device axes cut a dimension (empty ones left out, as its loader does)."""
    if len(maps) == 1:
        return tuple(int(x) for x in maps[0])
    return tuple(tuple(int(x) for x in m) if len(m) > 1 else int(m[0]) for m in maps if m)


def read_strategy_checkpoint(path: str | os.PathLike) -> StrategyCheckpoint:
    """A strategy checkpoint. As MindSpore decides: a name ending ``.json`` is read as JSON
    (:func:`read_strategy_json`), any other as protobuf (``ParallelStrategyMap``)."""
    if os.fspath(path).endswith(".json"):
        return read_strategy_json(path)
    what = "strategy checkpoint"
    parsed = _decode(path, "ParallelStrategyMap", what)
    where = os.fspath(path)
    operators = tuple(OperatorStrategy(item.node_name, int(item.parallel_strategys.stage),
                                       tuple(tuple(int(d) for d in s.dim)
                                             for s in item.parallel_strategys.parallel_strategy))
                      for item in parsed.parallel_strategy_item)
    stages = {op.stage for op in operators}
    own_stage = stages.pop() if len(stages) == 1 else None
    weights = {}
    for item in parsed.parallel_layout_item:
        layout = item.parallel_layouts
        if not layout.dev_matrix or not layout.tensor_map:
            raise RecordError(where, f"parameter {item.param_name!r}: no device matrix or tensor map")
        stage, name = _stage_and_name(item.param_name)
        split = [int(d) for s in layout.param_split_shape for d in s.dim]
        offset = [int(d) for s in layout.indices_offset for d in s.dim]
        weights[item.param_name] = WeightLayout(
            name=name, device_matrix=tuple(int(d) for d in layout.dev_matrix[0].dim),
            tensor_map=_tensor_map([list(m.dim) for m in layout.tensor_map]), slice_shape=None,
            field_size=int(layout.field), uniform_split=None, opt_shard_group=None,
            opt_shard_step=int(layout.opt_weight_shard_step), opt_shard_size=int(layout.opt_weight_shard_size),
            pipeline_stage=stage if stage is not None else own_stage,
            split_shape=tuple(split) or None, indices_offset=tuple(offset) or None, source=where)
    return StrategyCheckpoint(where, "protobuf", int(parsed.current_stage), operators, weights)


def read_group_checkpoint(path: str | os.PathLike) -> GroupCheckpoint:
    """A group checkpoint (protobuf ``ParallelGroupMap``)."""
    parsed = _decode(path, "ParallelGroupMap", "group checkpoint")
    groups = {item.group_name: tuple(int(r) for r in item.parallel_group_ranks.dim)
              for item in parsed.parallel_group_item}
    return GroupCheckpoint(os.fspath(path), groups, tuple(int(r) for r in parsed.ckpt_restore_rank_list.dim))


# ----------------------------------------------------------------------------- JSON
def _load_json(path: str | os.PathLike, what: str) -> dict:
    data = _read_bytes(path)
    where = os.fspath(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(where, f"not a {what}: not UTF-8 text (byte {exc.start})") from None
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(where, f"not a {what}: {exc.msg}", exc.lineno, exc.colno) from None
    if not isinstance(loaded, dict):
        raise RecordError(where, f"not a {what}: a JSON {type(loaded).__name__}, not an object")
    return loaded


def _ints(value: Any, where: str, what: str) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        raise RecordError(where, f"{what}: expected a list of integers, found {value!r}")
    return tuple(value)


def _map_of(value: Any, where: str, what: str) -> TensorMap:
    if isinstance(value, list) and value and all(isinstance(x, list) for x in value):
        return _tensor_map([list(_ints(x, where, what)) for x in value])
    return _ints(value, where, what)


def _int(value: Any, where: str, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(where, f"{what}: expected an integer, found {value!r}")
    return value


def read_strategy_json(path: str | os.PathLike) -> StrategyCheckpoint:
    """A strategy checkpoint in JSON (``parallel_strategy_item`` and ``parallel_layout_item``
    keyed by name, ``tensor_shape`` the whole weight's shape), or an operator strategy file of
    ``set_op_strategy_config`` (the same form without ``parallel_layout_item``)."""
    what = "strategy checkpoint or operator strategy file"
    where = os.fspath(path)
    loaded = _load_json(path, what)
    if "parallel_strategy_item" not in loaded and "parallel_layout_item" not in loaded:
        raise RecordError(where, f"not a {what}: neither parallel_strategy_item nor parallel_layout_item")
    items, layouts = loaded.get("parallel_strategy_item") or {}, loaded.get("parallel_layout_item") or {}
    if not isinstance(items, dict) or not isinstance(layouts, dict):
        raise RecordError(where, f"not a {what}: parallel_strategy_item and parallel_layout_item must be objects")
    operators = []
    for name, item in items.items():
        here = f"operator {name!r}"
        if not isinstance(item, dict):
            raise RecordError(where, f"{here}: expected an object, found {item!r}")
        strategy = item.get("parallel_strategy", [])
        if not isinstance(strategy, list):
            raise RecordError(where, f"{here}: parallel_strategy must be a list")
        operators.append(OperatorStrategy(name, _int(item.get("stage", 0), where, here),
                                          tuple(_ints(s, where, here) for s in strategy)))
    stages = {op.stage for op in operators}
    own_stage = stages.pop() if len(stages) == 1 else None
    weights = {}
    for key, item in layouts.items():
        here = f"parameter {key!r}"
        if not isinstance(item, dict) or "dev_matrix" not in item or "tensor_map" not in item:
            raise RecordError(where, f"{here}: expected an object with dev_matrix and tensor_map, found {item!r}")
        stage, name = _stage_and_name(key)
        shape = item.get("tensor_shape")
        split = item.get("param_split_shape")
        offset = item.get("indices_offset")
        weights[key] = WeightLayout(
            name=name, device_matrix=_ints(item["dev_matrix"], where, here),
            tensor_map=_map_of(item["tensor_map"], where, here), slice_shape=None,
            field_size=_int(item.get("field", 0), where, here), uniform_split=None, opt_shard_group=None,
            opt_shard_step=_int(item.get("opt_weight_shard_step", 0), where, here),
            opt_shard_size=_int(item.get("opt_weight_shard_size", 0), where, here),
            full_shape=_ints(shape, where, here) if shape is not None else None,
            pipeline_stage=stage if stage is not None else own_stage,
            split_shape=_ints(split, where, here) or None if split is not None else None,
            indices_offset=_ints(offset, where, here) or None if offset is not None else None, source=where)
    return StrategyCheckpoint(where, "json", _int(loaded.get("current_stage", 0), where, "current_stage"),
                              tuple(operators), weights)


def _per_dimension(tensor_map: TensorMap, full: tuple[int, ...] | None, after: Any,
                   devices: tuple[int, ...]) -> TensorMap:
    """A layout dictionary's tensor map, one entry a dimension of the weight. Where several device
    axes cut one dimension, MindSpore's dictionary gives the map of the weight reshaped so that
    each axis cuts a dimension of its own (``[1, 0, -1]`` for a (512, 64) weight whose first
    dimension ``("dp", "tp")`` cut, with the reshaped slice ``[1, 64, 64]``), where its strategy
    checkpoint gives one map a dimension (``[[1, 0], [-1]]``): the reshaped dimensions are grouped
    back by their sizes. The map as it is where it cannot be."""
    if full is None or len(tensor_map) <= len(full) or not isinstance(after, list) or len(after) != len(tensor_map):
        return tensor_map
    try:
        sizes = [int(s) * (devices[len(devices) - 1 - m] if m >= 0 else 1) for s, m in zip(after, tensor_map)]
    except (TypeError, ValueError, IndexError):
        return tensor_map
    groups, i = [], 0
    for size in full:
        group, product = [], 1
        while i < len(sizes) and (not group or product < size):
            group.append(tensor_map[i])
            product *= sizes[i]
            i += 1
        if product != size:
            return tensor_map
        groups.append(group)
    while i < len(sizes) and sizes[i] == 1 and groups:  # reshaped dimensions of size 1 left over
        groups[-1].append(tensor_map[i])
        i += 1
    if i != len(sizes):
        return tensor_map
    out: list[int | tuple[int, ...]] = []
    for group in groups:
        cut = tuple(m for m in group if m >= 0)
        out.append(cut[0] if len(cut) == 1 else cut if cut else -1)
    return tuple(out)


def _layout_entry(name: str, raw: Any, where: str, fields: tuple[str, ...], stage: int | None) -> WeightLayout:
    here = f"parameter {name!r}"
    if not isinstance(raw, list) or len(raw) < 6:
        raise RecordError(where, f"{here}: expected a list of at least 6 fields, found {raw!r}")
    entry = dict(zip(fields, raw))
    group = entry["opt_shard_group"]
    if not isinstance(group, str):
        raise RecordError(where, f"{here}: opt_shard_group: expected text, found {group!r}")
    full = entry.get("full_shape")
    full = _ints(full, where, here) if full is not None else None
    devices = _ints(entry["device_matrix"], where, here)
    tensor_map = _per_dimension(_map_of(entry["tensor_map"], where, here), full,
                                entry.get("slice_shape_after_reshape"), devices)
    return WeightLayout(
        name=name, device_matrix=devices, tensor_map=tensor_map, slice_shape=_ints(entry["slice_shape"], where, here),
        field_size=_int(entry["field_size"], where, here), uniform_split=bool(entry["uniform_split"]),
        opt_shard_group=group, full_shape=full, pipeline_stage=stage, source=where)


def read_layout_record(path: str | os.PathLike) -> LayoutRecord:
    """The dry run's parameter layout file (``parameter_layout_N.json``, :data:`LAYOUT_FORMAT`)."""
    what = "parameter layout file"
    where = os.fspath(path)
    loaded = _load_json(path, what)
    if loaded.get("format") != LAYOUT_FORMAT or not isinstance(loaded.get("layouts"), dict):
        raise RecordError(where, f"not a {what}: its format is {loaded.get('format')!r}, not {LAYOUT_FORMAT!r} "
                                 "with a layouts object")
    fields = tuple(loaded.get("fields") or LAYOUT_FIELDS)
    if fields[:6] != LAYOUT_FIELDS[:6]:
        raise RecordError(where, f"its fields {list(fields)} do not begin with {list(LAYOUT_FIELDS[:6])}")

    def optional_int(key: str) -> int | None:
        value = loaded.get(key)
        return None if value is None else _int(value, where, key)

    rank, rank_size, stages = optional_int("rank"), optional_int("rank_size"), optional_int("pipeline_stages")
    stage = None
    if rank is not None and rank_size and stages:
        stage = rank // max(rank_size // stages, 1)
    weights = {name: _layout_entry(name, raw, where, fields, stage) for name, raw in loaded["layouts"].items()}
    return LayoutRecord(where, optional_int("compile"), rank, rank_size, str(loaded.get("phase", "")),
                        loaded.get("parallel_mode"), stages, loaded.get("strategy_checkpoint"),
                        loaded.get("mindspore"), weights)


# ----------------------------------------------------------------------------- a rank folder
def _number(pattern: re.Pattern, name: str) -> int:
    match = pattern.match(name)
    return int(match.group(1)) if match and match.group(1) else -1


def record_of(rank_folder: str | os.PathLike) -> RankRecord | None:
    """What a rank folder holds of MindSpore's records (file names of :func:`is_record_file`),
    each kind in compile order; None when it holds none. A file that cannot be read raises
    :class:`RecordError` naming it."""
    folder = Path(rank_folder)
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file())
    except FileNotFoundError:
        raise RecordReadError(os.fspath(folder), "no such folder") from None
    except NotADirectoryError:
        raise RecordReadError(os.fspath(folder), "not a folder") from None
    except OSError as exc:
        raise RecordReadError(os.fspath(folder), f"cannot read: {exc.strerror or exc}") from None

    def of(pattern: re.Pattern) -> list[Path]:
        found = sorted((n for n in names if pattern.match(n)), key=lambda n: (_number(pattern, n), n))
        return [folder / n for n in found]

    layouts = tuple(read_layout_record(p) for p in of(LAYOUT_FILE))
    checkpoints = tuple(sorted((*(read_strategy_checkpoint(p) for p in of(STRATEGY_FILE)),
                                *(read_strategy_json(p) for p in of(STRATEGY_JSON_FILE))),
                               key=lambda c: _number(STRATEGY_FILE if c.format == "protobuf" else STRATEGY_JSON_FILE,
                                                     Path(c.path).name)))
    groups = tuple(read_group_checkpoint(p) for p in of(GROUP_FILE))
    if not (layouts or checkpoints or groups):
        return None
    return RankRecord(os.fspath(folder), layouts, checkpoints, groups)


def agree(layout: WeightLayout, checkpoint: WeightLayout,
          groups: Mapping[str, tuple[int, ...]] | None = None) -> list[str]:
    """How a parameter's record in a layout dictionary and in a strategy checkpoint disagree, in
    words ([] when they agree): device matrix, tensor map, field size, and optimizer shard (the
    layout's group against the checkpoint's size and step, the group's ranks from a group
    checkpoint's ``groups`` where given)."""
    out = []
    for what in ("device_matrix", "tensor_map", "field_size"):
        a, b = getattr(layout, what), getattr(checkpoint, what)
        if a != b:
            out.append(f"{what}: {a} in {Path(layout.source).name}, {b} in {Path(checkpoint.source).name}")
    if layout.opt_sharded != checkpoint.opt_sharded:
        out.append(f"optimizer shard: group {layout.opt_shard_group!r} in {Path(layout.source).name}, size "
                   f"{checkpoint.opt_shard_size} step {checkpoint.opt_shard_step} in {Path(checkpoint.source).name}")
    elif layout.opt_shard_group and groups is not None:
        ranks = groups.get(layout.opt_shard_group)
        if ranks is None:
            out.append(f"optimizer shard: group {layout.opt_shard_group!r} is not in the group checkpoint")
        else:
            steps = {b - a for a, b in zip(ranks, ranks[1:])}
            if len(ranks) != checkpoint.opt_shard_ranks or (len(ranks) > 1 and steps != {checkpoint.opt_shard_step}):
                out.append(f"optimizer shard: group {layout.opt_shard_group!r} holds ranks {list(ranks)}; the "
                           f"checkpoint says {checkpoint.opt_shard_ranks} ranks (size {checkpoint.opt_shard_size}) "
                           f"step {checkpoint.opt_shard_step}")
    return out


__all__ = ["GroupCheckpoint", "LAYOUT_FIELDS", "LAYOUT_FORMAT", "LayoutRecord", "OperatorStrategy", "RankRecord",
           "RecordError", "RecordReadError", "StrategyCheckpoint", "WeightLayout", "agree", "file_descriptor",
           "is_record_file", "read_group_checkpoint", "read_layout_record", "read_strategy_checkpoint",
           "read_strategy_json", "record_of"]
