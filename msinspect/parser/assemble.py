"""Turn the transformer's flat list of tagged top-level items into an :class:`IRFile`, and check
the counts the file states about itself."""
from __future__ import annotations

import re

from msinspect.model import Diagnostic, IRFile, Node, Subgraph

# A stated count longer than 20 digits is not one MindSpore writes: read as no count at all.
_INT = re.compile(r"(?<!\d)(\d{1,20})\s*$")
_LEGACY_ENTRY = re.compile(r"#IR entry\s+:")


def _stated(text: str) -> int | None:
    match = _INT.search(text)
    return int(match.group(1)) if match else None


_TOO_LONG = re.compile(r"\d{21,}\s*$")


class _Builder:
    """Folds items into one :class:`IRFile`; nodes go into the subgraph whose ``{`` is open."""

    def __init__(self, ir: IRFile) -> None:
        self.ir = ir
        self.problems: list[Diagnostic] = []
        self.section: str | None = None    # "attrs" after "# Attrs:", "graph" after "subgraph attr:"
        self.pending_attrs: dict[str, str] = {}
        self.pending_source: str | None = None
        self.pending_marker: int | None = None
        self.open: Subgraph | None = None
        self.loose: Subgraph | None = None

    def add(self, tag: str, line: int, value) -> None:
        ir = self.ir
        if tag in ("total_subgraphs", "total_params", "count_line") and _TOO_LONG.search(value):
            self.problems.append(Diagnostic(line, 1, f"a stated count of {len(value.split()[-1])} digits: "
                                                     "not a number MindSpore writes"))
        if tag == "ir_entry":
            ir.family = "2.2" if _LEGACY_ENTRY.match(value) else "2.10"
            ir.entry = value.split("@", 1)[1].strip() if "@" in value else None
            self.section = None
        elif tag == "total_subgraphs":
            ir.stated_subgraphs = _stated(value)
        elif tag == "total_params":
            ir.stated_params = _stated(value)
            self.section = None
        elif tag == "attrs_title":
            self.section = "attrs"
        elif tag == "jit_config":
            ir.jit_config.update(kv for _, _, kv in value)
        elif tag == "count_line":
            if "cnodes" in value:
                ir.stated_cnodes = _stated(value)
            else:
                ir.stated_nodes = _stated(value)
        elif tag == "kv":
            key, val = value
            if self.section == "graph":
                self.pending_attrs[key] = val
            else:
                ir.attrs[key] = val
        elif tag == "param":
            ir.params.append(value)
        elif tag == "subgraph_attr":
            self.section, self.pending_attrs, self.pending_source = "graph", {}, None
        elif tag == "source":
            self.pending_source = value[value.index("In file") + len("In file"):].strip()
        elif tag == "subgraph_open":
            self.open_graph(line, *value)
        elif tag == "subgraph_close":
            if self.open is None:
                self.problems.append(Diagnostic(line, 1, "'}' closes no subgraph"))
            else:
                self.open.end_line = line
                self.open = None
        elif tag == "statement":
            self.add_node(value)
        elif tag == "unparsed":
            node, graph_name = value
            if graph_name is not None:
                self.open_graph(line, graph_name, None, ())
            elif node is not None:
                self.add_node(node)
        elif tag == "fail_banner":
            ir.kind = "analyze_fail"
            if ir.family == "excerpt":
                ir.family = "2.2"       # the analyze_fail files of 2.0 - 2.2 have no "# IR entry"
        elif tag == "fail_text":
            ir.kind = "analyze_fail"
            ir.failure = _failure_message(value)
        elif tag == "fail_marker":
            ir.kind = "analyze_fail"
            self.pending_marker = value
        elif tag == "no_more_graphs":
            ir.kind = "analyze_fail"
        # "params_title", "count_title", "subgraph_instance", "subgraph_symbol_engine", "graph_parameters",
        # "symbol_engine_title", "symbol_engine",
        # "order", "comment": structure only, nothing to keep

    def open_graph(self, line: int, name: str, parent: str | None, params: tuple) -> None:
        if self.open is not None:
            self.problems.append(Diagnostic(line, 1, f"subgraph @{name} begins before subgraph "
                                                      f"@{self.open.name} (line {self.open.line}) was closed"))
        graph = Subgraph(name=name, params=params, line=line, parent=parent,
                         attrs=self.pending_attrs, source=self.pending_source)
        self.ir.subgraphs.append(graph)
        self.open = graph
        self.section, self.pending_attrs, self.pending_source = None, {}, None

    def add_node(self, node: Node) -> None:
        graph = self.open
        if graph is None:
            if self.loose is None:
                self.loose = Subgraph(name="", params=(), line=node.line)
                self.ir.subgraphs.append(self.loose)
            graph = self.loose
            graph.end_line = node.line
        node.graph = graph.name
        graph.nodes.append(node)
        if self.pending_marker is not None:
            self.ir.eval_stack.append((self.pending_marker, graph.name, node.index, node.line))
            self.pending_marker = None

    def finish(self, last_line: int) -> list[Diagnostic]:
        if self.open is not None:
            self.problems.append(Diagnostic(last_line, 1, f"unexpected end of file: subgraph @{self.open.name} "
                                                          f"(line {self.open.line}) is not closed by '}}' "
                                                          "(truncated dump?)"))
            self.open = None
        return self.problems


def _failure_message(text: str) -> str:
    """The exception under ``- Caught exception:``, else the whole free text."""
    lines = [line for line in text.split("\n") if not set(line.strip()) <= {"-"}]
    if lines and lines[0].strip().startswith("- Caught exception"):
        body = []
        for line in lines[1:]:
            if line.startswith("- "):
                break
            body.append(line)
        return "\n".join(body).strip()
    return "\n".join(lines).strip()


def assemble(path: str, items, into: IRFile | None = None, last_line: int = 0) -> tuple[IRFile, list[Diagnostic]]:
    """Fold ``items`` (from :class:`~msinspect.parser.transformer.IRTransformer`, in file order)
    into a file; also return the structural problems found (a ``}`` that closes nothing, a
    subgraph left open)."""
    ir = into or IRFile(path=path, family="excerpt")
    builder = _Builder(ir)
    for tag, line, value in items:
        builder.add(tag, line, value)
    return ir, builder.finish(last_line)


def check_counts(ir: IRFile) -> list[Diagnostic]:
    """Diagnostics for every count or reference the file states that does not hold."""
    found: list[Diagnostic] = []
    if ir.family == "excerpt":
        if not ir.subgraphs:
            found.append(Diagnostic(0, 0, "no IR content: neither an '# IR entry' header nor any node"))
        return found
    names = {g.name for g in ir.subgraphs}
    # analyze_fail.ir prints the graphs of the evaluation stack (the same graph may appear twice)
    # under the header of the whole compile: its "# Total subgraphs" does not count them.
    if ir.kind != "analyze_fail":
        if ir.stated_subgraphs is None:
            found.append(Diagnostic(0, 0, "the file states no subgraph count ('# Total subgraphs'): header cut short?"))
        elif ir.stated_subgraphs != len(ir.subgraphs):
            found.append(Diagnostic(0, 0, f"the file states {ir.stated_subgraphs} subgraphs but {len(ir.subgraphs)} were read"))
    if ir.stated_cnodes is not None and ir.stated_cnodes != ir.cnode_count:
        found.append(Diagnostic(0, 0, f"the file states {ir.stated_cnodes} cnodes but {ir.cnode_count} were read"))
    if ir.stated_params is not None and ir.stated_params != len(ir.params):
        found.append(Diagnostic(0, 0, f"the file states {ir.stated_params} parameters but {len(ir.params)} were read"))
    if ir.entry and ir.entry not in names:
        found.append(Diagnostic(0, 0, f"the entry graph @{ir.entry} is not in the file"))
    return found
