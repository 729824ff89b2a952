"""The data model of a parsed MindSpore IR dump: plain typed objects, no Lark, no networkx.

Values are real Python values: ints, floats, bools, strings, tuples, ``None``; the few IR
constructs with no Python twin (node references, tensors, primitives used as values ...) have
their own small classes below.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, Union

Shape = tuple[int, ...]


# ------------------------------------------------------------------ values
@dataclass(frozen=True, slots=True)
class NodeRef:
    """``%3``: the output of node 3 of the same subgraph."""

    index: int
    """The node's number within its subgraph."""


#: The ``paraN_`` MindSpore's dumper puts before a parameter's name (``para4_w2``).
_PARA_NUMBER = re.compile(r"^para\d+_")


def unnumbered(name: str) -> str:
    """A parameter's name less the ``paraN_`` MindSpore's dumper puts before it: ``w2`` for
    ``para4_w2``; a name without one as it is."""
    return _PARA_NUMBER.sub("", name)


@dataclass(frozen=True, slots=True)
class ParamRef:
    """``%para4_w2``: a parameter, of the file or of a subgraph."""

    name: str
    """The full token without ``%``, e.g. ``para4_w2``."""

    @property
    def short_name(self) -> str:
        """The user-facing name: ``w2`` for ``para4_w2`` (:func:`unnumbered`)."""
        return unnumbered(self.name)


@dataclass(frozen=True, slots=True)
class FreeVarRef:
    """``$(@graph:para3_w)``: a free variable taken from an enclosing graph."""

    graph: str
    """Graph that owns the variable (without ``@``)."""
    name: str
    """Parameter or node name in that graph."""


@dataclass(frozen=True, slots=True)
class GraphRef:
    """``@1_construct_wrapper.337``: a subgraph used as a value or callee."""

    name: str
    """Graph name without ``@``."""


@dataclass(frozen=True, slots=True)
class TensorValue:
    """``Tensor(shape=[2, 3], dtype=Float32, value=...)``: a constant tensor."""

    shape: Shape
    """Its shape."""
    dtype: str | None
    """Its element type, as MindSpore spells it; None where the dump does not print it
    (``Tensor(43)[]``, a tensor by its id)."""
    value_text: str
    """The printed values, as written (possibly summarized with ``...``); empty where none are."""


@dataclass(frozen=True, slots=True)
class PrimitiveValue:
    """``SGD[output_names: [...]]`` or ``UMonad[U]``: a primitive or typed object used as a value."""

    name: str
    """The primitive or object name."""
    items: tuple[Any, ...]
    """Its bracketed items: ``(key, value)`` pairs for attributes, plain values otherwise."""


Value = Union[
    None, bool, int, float, str, tuple, list, dict,
    NodeRef, ParamRef, FreeVarRef, GraphRef, TensorValue, PrimitiveValue,
]


# ------------------------------------------------------------------ abstracts
@dataclass(frozen=True, slots=True)
class Abstract:
    """The type and shape MindSpore inferred for a value: ``<Tensor[Float32], (16, 32)>``."""

    kind: str
    """``Tensor``, ``Ref``, ``Tuple``, ``List``, ``Int64`` (scalars), ``UMonad``, ``Func`` ..."""
    dtype: str | None
    """Element type of a tensor or ref (``Float32``), or the scalar type; ``None`` if none."""
    shape: Shape | None
    """Tensor shape; ``()`` for a scalar tensor; ``None`` when the value has no tensor shape."""
    text: str
    """The abstract as written, for display."""
    elements: tuple[Shape | None, ...] = ()
    """For tuples whose shape is printed (``TupleShape(...)``): the shape of each element."""
    ref_key: str | None = None
    """For parameters (``Ref``): the parameter's name."""

    @property
    def is_tensor(self) -> bool:
        """Whether this is a tensor or a ref to a tensor."""
        return self.kind in ("Tensor", "Ref") and self.shape is not None


# ------------------------------------------------------------------ nodes and graphs
class NodeKind(str, Enum):
    """What a node of the IR (and of its networkx graph) is: a small fixed set, as in torch.fx.

    The parser makes every kind but ``parameter``, which only the graph has (the model keeps
    parameters as :class:`Parameter`). Constants are no nodes: the IR writes them inline as
    operands. A member equals its value, so ``node.kind == "call_primitive"`` holds.
    """

    PARAMETER = "parameter"
    """A parameter of the file (an input or a weight) or of a subgraph."""
    CALL_PRIMITIVE = "call_primitive"
    """``%3(out) = MatMul(%1, %2)``: applies a primitive."""
    CALL_GRAPH = "call_graph"
    """``call @g(...)`` or ``@g(...)``: calls a subgraph named in the line."""
    CALL_VALUE = "call_value"
    """``%5(...)``, ``%para3_f(...)``, ``$(@g:x)(...)``: calls a function held by a node,
    parameter or free variable (the graphs it may be are in :attr:`Node.callee_graphs`)."""
    RETURN = "return"
    """``Return(%7)``: a subgraph's output."""
    UNPARSED = "unparsed"
    """A node lenient reading kept without understanding it (:attr:`Node.raw` holds its text)."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Strategy:
    """How an operator's tensors are cut across devices."""

    in_strategy: tuple[tuple[int, ...], ...] | None
    """One tuple per input: the number of slices along each dimension."""
    out_strategy: tuple[tuple[int, ...], ...] | None
    """Same for outputs, when set."""
    user_set: bool | None
    """True when the user set it (``shard()``), False when the planner inferred it, None when
    the file cannot tell (only files before the parallel pass carry the user's attribute)."""

    @property
    def source(self) -> str:
        """``user``, ``planner`` or ``unknown``."""
        return {True: "user", False: "planner", None: "unknown"}[self.user_set]


class _NoAttributes(dict):
    """The empty attribute dict that every node without such attributes shares (most nodes of a
    dump: ``bench/bench_parse.py`` gives the model's memory). It refuses writes, so a
    change meant for one node never reaches every node; a node given attributes gets a dict of its
    own. It copies and unpickles as itself."""

    __slots__ = ()

    def _shared(self, *args, **kwargs):
        raise TypeError("this node's attribute dict is the empty one every such node shares: "
                        "assign the node a new dict instead")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _shared

    def __reduce__(self):
        return (no_attributes, ())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


NO_ATTRIBUTES = _NoAttributes()
"""A node's attribute dict when it has no such attributes (equal to ``{}``, read-only)."""


def no_attributes() -> dict:
    """:data:`NO_ATTRIBUTES`: the default of a node's attribute dicts."""
    return NO_ATTRIBUTES


@dataclass(slots=True)
class Node:
    """One CNode: ``%3(out) = MatMul(%1, %2) {instance name: matmul} ...``, or a ``Return``."""

    graph: str
    """Name of the subgraph that holds it."""
    index: int | None
    """``3`` for ``%3``; ``None`` for the ``Return`` node."""
    debug_name: str
    """The name in parentheses after the number (``out``, ``CNode_12``), or ``Return``."""
    op: str
    """The primitive's name (``MatMul``, with any ``PrimFunc_`` prefix removed), ``call`` ..."""
    kind: NodeKind
    """What the node does: :class:`NodeKind` (never ``parameter``: parameters are no CNodes)."""
    callee: Any
    """The raw callee: primitive name as written, a :class:`GraphRef`, :class:`NodeRef` ..."""
    inputs: tuple[Any, ...]
    """Argument values in order."""
    line: int
    """1-based line of the node's definition in its file."""
    instance_name: str | None = None
    """``matmul`` from ``{instance name: matmul}``."""
    primitive_attrs: dict[str, Any] = field(default_factory=no_attributes)
    """The primitive's attributes (this and the three below: :data:`NO_ATTRIBUTES` where none)."""
    cnode_attrs: dict[str, Any] = field(default_factory=no_attributes)
    """Attributes of the node itself."""
    cnode_primal_attrs: dict[str, Any] = field(default_factory=no_attributes)
    """Attributes carried from the forward node (e.g. ``origin_output_shape``)."""
    trailing_attrs: dict[str, Any] = field(default_factory=no_attributes)
    """The last braces of the line: the strategy actually used (``{in_strategy: ...}``)."""
    input_types: tuple[Abstract, ...] = ()
    """Abstracts of the inputs, from the ``: (...) -> (...)`` line."""
    output_types: tuple[Abstract, ...] = ()
    """Abstracts of the output(s)."""
    kernel_lines: tuple[str, ...] = ()
    """Further ``: (...)`` lines under the first, as text: kernel object types after kernel
    selection, symbolic shapes and values of a graph with dynamic shapes (``S:[s1<[1,inf]>, 64]``)."""
    scope: str | None = None
    """``Default/network-WithLossCell/_backbone-Net`` from ``# Scope:`` / ``# scope:``."""
    fullname: str | None = None
    """From ``# Fullname with scope:``; its last part names the operator instance."""
    sources: tuple[str, ...] = ()
    """``# In file`` lines, innermost call last, without the ``# In file`` prefix."""
    side_effect: str | None = None
    """Text of ``# SideEffect:``."""
    comments: tuple[str, ...] = ()
    """Any other comment lines attached to the node."""
    callee_graphs: tuple[str, ...] = ()
    """The graphs a call may go to: ``call @g`` / ``@g``, or the hint of ``%5[@FuncUnion(@g1, @g2)]``."""
    raw: str | None = None
    """For an ``unparsed`` node: its text as written (line and annotation lines)."""
    _strategy: Strategy | None | bool = field(default=False, init=False, repr=False, compare=False)
    """:attr:`strategy` once read (False: not read yet)."""

    @property
    def ref(self) -> str:
        """``%3`` or ``Return``: how the IR refers to it."""
        return "Return" if self.index is None else f"%{self.index}"

    @property
    def name(self) -> str:
        """The best user-facing name: instance name, else fullname's last part, else debug name."""
        if self.instance_name:
            return self.instance_name
        if self.fullname:
            return self.fullname.rsplit("/", 1)[-1]
        return self.debug_name

    @property
    def strategy(self) -> Strategy | None:
        """The strategy of the operator, wherever MindSpore wrote it (:func:`strategy_of`), with
        whether the user set it; read once, then kept. A node does not know its file, so
        ``user_set`` is True or False here; the analyses, which know the file, make it None where
        the file cannot tell (:func:`msinspect.analysis.rank.strategies.strategy_of`)."""
        if self._strategy is False:
            self._strategy = strategy_of(self)
        return self._strategy

    @property
    def source_line(self) -> str | None:
        """The user's own source line: the last ``# In file`` entry (innermost frame)."""
        return self.sources[-1] if self.sources else None

    @property
    def output_shape(self) -> Shape | None:
        """Shape of the single tensor output, if there is one."""
        if len(self.output_types) == 1:
            return self.output_types[0].shape
        return None


def where(path: str | None, line: int, *, rank: int | None = None) -> str:
    """``rank 3: file.ir:12``: how every message locates a line of a dump (no file: ``line 12``)."""
    place = f"{path}:{line}" if path else f"line {line}"
    return place if rank is None else f"rank {rank}: {place}"


def canonical(value: Any) -> Any:
    """A comparable, hashable form of a model value (an :class:`IRFile`, a node, an attribute)
    that keeps types apart (``1``, ``1.0`` and ``True`` differ) and leaves out what is not part
    of a value's identity (fields with ``compare=False``, such as a node's cached strategy): two
    parses of one text give equal forms."""
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple((f.name, canonical(getattr(value, f.name)))
                                            for f in fields(value) if f.compare))
    if isinstance(value, dict):
        return ("dict", tuple((canonical(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    return (type(value).__name__, repr(value))


def format_node(node: Node, path: str | None = None, *, rank: int | None = None) -> str:
    """How msinspect names a node in every message: where it is, then what it is.

    ``file.ir:12: %3 MatMul matmul (call_primitive) in @graph``; the instance name is left out
    when there is none, the graph when the node is not in one yet.
    """
    return f"{where(path, node.line, rank=rank)}: {describe_node(node)}"


def describe_node(node: Node) -> str:
    """What a node is, without where: ``%3 MatMul matmul (call_primitive) in @graph``."""
    what = [node.ref, node.op]
    if node.instance_name and node.instance_name != node.op:
        what.append(node.instance_name)
    what.append(f"({node.kind})")
    if node.graph:
        what.append(f"in @{node.graph}")
    return " ".join(what)


#: The primitive attributes the user's ``shard()`` writes.
USER_KEYS = ("in_strategy", "out_strategy", "in_layout", "out_layout")


def strategy_of(node: Node) -> Strategy | None:
    """The strategy of an operator, wherever MindSpore wrote it: the trailing braces (the one
    used, after the parallel pass), else the primitive's ``in_strategy`` / ``in_layout`` (the
    user's ``shard()``, alone before the parallel pass of a semi-auto job), else the node's
    ``cnode_attrs``, else its ``cnode_primal_attrs`` (where the pipeline pass alone writes the
    strategy of a micro-batch's StridedSlice in MindFormers' jobs). Set by the user when the primitive carries the user's attribute, else by the
    planner (the parallel pass's own ``_Virtual*`` operators: always the planner). Whether a file
    can tell the planner's from the user's is the analyses' business
    (:func:`msinspect.analysis.rank.strategies.strategy_of`)."""
    found = (_from(node.trailing_attrs) or _from(node.primitive_attrs) or _from(node.cnode_attrs)
             or _from(node.cnode_primal_attrs))
    if found is None:
        return None
    user = not node.op.startswith("_Virtual") and carries_user_attribute(node)
    return Strategy(found[0], found[1], user)


def carries_user_attribute(node: Node) -> bool:
    """Whether the user's ``shard()`` wrote its strategy (or Layout) on the primitive."""
    return any(node.primitive_attrs.get(k) is not None for k in USER_KEYS)


def _strategy_value(value: Any) -> tuple[tuple[int, ...], ...] | None:
    """``((2, 1), (1))`` -> ((2, 1), (1,)); a lone ``(2, 4)`` is one input's; ``()`` (GetNext, an
    operator with no tensor input to cut) is no input at all, not one empty input."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return (tuple(value),) if value else ()
    if isinstance(value, (tuple, list)):
        return tuple(tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in value)
    return None


def layout_strategy(layout: Any) -> tuple[int, ...] | None:
    """The strategy of one tensor cut with ``mindspore.parallel.Layout``: ``{'device_matrix': (2,
    4), 'tensor_map': (1, -1)}`` -> (2, 1). A tensor-map entry names a device-matrix axis counted
    from the right (-1: not cut; a tuple: cut along each of those axes)."""
    if not isinstance(layout, dict):
        return None
    matrix, tensor_map = layout.get("device_matrix"), layout.get("tensor_map")
    if not isinstance(matrix, (tuple, list)) or not isinstance(tensor_map, (tuple, list)):
        return None
    cuts = []
    for entry in tensor_map:
        axes = entry if isinstance(entry, (tuple, list)) else (entry,)
        count = 1
        for axis in axes:
            if not isinstance(axis, int) or axis >= len(matrix):
                return None
            if axis >= 0:
                count *= matrix[len(matrix) - 1 - axis]
        cuts.append(count)
    return tuple(cuts)


def _layouts(value: Any) -> tuple[tuple[int, ...], ...] | None:
    if isinstance(value, dict):
        value = (value,)
    if not isinstance(value, (tuple, list)):
        return None
    cuts = [layout_strategy(v) for v in value]
    return tuple(cuts) if all(c is not None for c in cuts) else None


def _from(attrs: dict) -> tuple | None:
    """(in, out) strategies written in ``attrs``: ``in_strategy`` / ``out_strategy``, else the
    Layouts ``in_layout`` / ``out_layout``; None when neither is there."""
    ins = _strategy_value(attrs.get("in_strategy"))
    outs = _strategy_value(attrs.get("out_strategy"))
    if ins is None and attrs.get("in_layout") is not None:
        ins = _layouts(attrs.get("in_layout"))
    if outs is None and attrs.get("out_layout") is not None:
        outs = _layouts(attrs.get("out_layout"))
    return (ins, outs) if ins is not None or outs is not None else None


@dataclass(slots=True)
class Parameter:
    """A parameter of the file (``%para3_w: <Ref[...]>``) or of a subgraph."""

    name: str
    """Token without ``%``, e.g. ``para3_w``."""
    abstract: Abstract | None
    """Its type and shape, where the file states them."""
    line: int
    """1-based line where it is declared (0 for subgraph parameters named only in the header)."""
    has_default: bool = False
    """Whether it is a weight with a value (``: has_default``)."""
    tail: str = ""
    """Text after the abstract, as written (e.g. ``[32, 1, 28, 28]``)."""

    @property
    def short_name(self) -> str:
        """``w`` for ``para3_w``."""
        return ParamRef(self.name).short_name


@dataclass(slots=True)
class Subgraph:
    """``subgraph @name(%para...) { ... }`` with its attributes."""

    name: str
    """Graph name without ``@``."""
    params: tuple[str, ...]
    """Parameter tokens in the header, without ``%``."""
    line: int
    """1-based line of the ``subgraph @`` header."""
    end_line: int = 0
    """1-based line of the closing brace."""
    parent: str | None = None
    """Enclosing graph, from ``parent: [subgraph @...]``."""
    attrs: dict[str, str] = field(default_factory=dict)
    """``subgraph attr:`` block, values as written."""
    source: str | None = None
    """The ``# In file`` line before the header."""
    nodes: list[Node] = field(default_factory=list)
    """CNodes in file order, the ``Return`` node last."""

    @property
    def cnode_count(self) -> int:
        """Number of CNodes including ``Return``, as MindSpore counts them."""
        return len(self.nodes)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something that kept a file from being read completely or consistently."""

    line: int
    """1-based first line concerned (0 when the whole file is concerned)."""
    column: int
    """1-based column, 0 when not applicable."""
    message: str
    """What went wrong."""
    end_line: int = 0
    """Last line skipped, for spans that lenient parsing skipped."""
    text: str = ""
    """The offending line as written, where there is one."""
    expected: tuple[str, ...] = ()
    """What the grammar would have accepted there, in words."""


@dataclass(slots=True)
class IRFile:
    """One parsed ``.ir`` file."""

    path: str
    """Where it was read from."""
    family: str
    """``2.10`` (``# IR entry:``, node counting block), ``2.2`` (``#IR entry      :``), or
    ``excerpt`` (node lines without a header, as in documentation)."""
    kind: str = "graph"
    """``graph`` for a pass's dump, ``analyze_fail`` for the file MindSpore writes when type
    inference fails (its graphs are the evaluation stack; it states no counts to check)."""
    entry: str | None = None
    """Name of the entry graph."""
    attrs: dict[str, str] = field(default_factory=dict)
    """Header attributes (``# Attrs:`` / ``#attrs :``), values as written."""
    jit_config: dict[str, str] = field(default_factory=dict)
    """The ``jit config { ... }`` block."""
    params: list[Parameter] = field(default_factory=list)
    """File-level parameters: inputs and weights."""
    subgraphs: list[Subgraph] = field(default_factory=list)
    """Subgraphs in file order."""
    stated_subgraphs: int | None = None
    """``# Total subgraphs: N``."""
    stated_params: int | None = None
    """``# Total params: N``."""
    stated_nodes: int | None = None
    """``Total number of nodes: N``."""
    stated_cnodes: int | None = None
    """``Total number of cnodes: N``."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    """Everything that did not parse or did not add up. Empty for a complete file."""
    failure: str | None = None
    """In an ``analyze_fail.ir``: the exception MindSpore caught, as it printed it."""
    eval_stack: list[tuple[int, str, int | None, int]] = field(default_factory=list)
    """In an ``analyze_fail.ir``: ``(depth, graph, node index, line)`` of each node marked
    ``#------------------------> depth``, the node whose evaluation failed at that depth (its line
    tells it apart where MindSpore printed two instances of one graph under one name)."""
    lines: int = 0
    """Number of lines in the file."""
    size: int = 0
    """Size in bytes of the (uncompressed) text."""

    @property
    def stage(self) -> str:
        """Compile stage named by the file (``step_parallel_end``), numbers stripped."""
        from msinspect.stages import stage_of  # local: keep the model import-light

        return stage_of(self.path)

    @property
    def cnode_count(self) -> int:
        """CNodes found, including each subgraph's ``Return``."""
        return sum(g.cnode_count for g in self.subgraphs)

    @property
    def complete(self) -> bool:
        """True only when the whole file parsed and every count it states holds."""
        return not self.diagnostics and self.family != "excerpt"

    @property
    def status(self) -> str:
        """``complete``, ``excerpt`` (headerless, read whole, nothing stated to check) or ``incomplete``."""
        if self.diagnostics:
            return "incomplete"
        return "excerpt" if self.family == "excerpt" else "complete"

    def nodes(self):
        """Every node of every subgraph, in file order."""
        for graph in self.subgraphs:
            yield from graph.nodes

    def node(self, name: str) -> Node:
        """The node with this instance name (or debug name); KeyError if none, or several differ."""
        found = [n for n in self.nodes() if n.instance_name == name]
        if not found:
            found = [n for n in self.nodes() if n.name == name or n.debug_name == name]
        if not found:
            raise KeyError(f"no node named {name!r} in {self.path}")
        return found[0]

    def graph(self, name: str) -> Subgraph:
        """The subgraph of that name (with or without ``@``)."""
        name = name.lstrip("@")
        for graph in self.subgraphs:
            if graph.name == name:
                return graph
        raise KeyError(f"no subgraph @{name} in {self.path}")
