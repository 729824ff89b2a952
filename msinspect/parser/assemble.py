"""Turn the transformer's flat list of tagged top-level items into an :class:`IRFile`, and check
the counts the file states about itself."""
from __future__ import annotations

import re

from msinspect.model import Diagnostic, IRFile, Subgraph

_INT = re.compile(r"(\d+)\s*$")
_LEGACY_ENTRY = re.compile(r"#IR entry\s+:")


def _stated(text: str) -> int | None:
    match = _INT.search(text)
    return int(match.group(1)) if match else None


def assemble(path: str, items, into: IRFile | None = None) -> IRFile:
    """Fold ``items`` (from :class:`~msinspect.parser.transformer.IRTransformer`) into a file.

    ``into`` continues a file already started (lenient parsing assembles pieces in order).
    """
    ir = into or IRFile(path=path, family="excerpt")
    section = None            # "attrs" after "# Attrs:", "graph" after "subgraph attr:"
    pending_attrs: dict[str, str] = {}
    pending_source = None
    loose: Subgraph | None = None
    for tag, line, value in items:
        if tag == "ir_entry":
            ir.family = "2.2" if _LEGACY_ENTRY.match(value) else "2.10"
            ir.entry = value.split("@", 1)[1].strip() if "@" in value else None
            section = None
        elif tag == "total_subgraphs":
            ir.stated_subgraphs = _stated(value)
        elif tag == "total_params":
            ir.stated_params = _stated(value)
            section = None
        elif tag == "attrs_title":
            section = "attrs"
        elif tag == "jit_config":
            ir.jit_config.update(kv for _, _, kv in value)
        elif tag == "count_line":
            if "cnodes" in value:
                ir.stated_cnodes = _stated(value)
            else:
                ir.stated_nodes = _stated(value)
        elif tag == "kv":
            key, val = value
            if section == "graph":
                pending_attrs[key] = val
            else:
                ir.attrs[key] = val
        elif tag == "param":
            ir.params.append(value)
        elif tag == "subgraph_attr":
            section, pending_attrs, pending_source = "graph", {}, None
        elif tag == "source":
            pending_source = value[value.index("In file") + len("In file"):].strip()
        elif tag == "subgraph":
            name, parent, params, statements = value
            graph = Subgraph(name=name, params=params, line=line, parent=parent,
                             attrs=pending_attrs, source=pending_source, nodes=list(statements))
            for node in graph.nodes:
                node.graph = name
            graph.end_line = graph.nodes[-1].line if graph.nodes else line
            ir.subgraphs.append(graph)
            section, pending_attrs, pending_source = None, {}, None
        elif tag == "statement":
            if loose is None:
                loose = Subgraph(name="", params=(), line=line)
                ir.subgraphs.append(loose)
            value.graph = ""
            loose.nodes.append(value)
            loose.end_line = line
        # "params_title", "count_title", "subgraph_instance", "graph_parameters",
        # "order", "comment": structure only, nothing to keep
    return ir


def check_counts(ir: IRFile) -> list[Diagnostic]:
    """Diagnostics for every count or reference the file states that does not hold."""
    found: list[Diagnostic] = []
    if ir.family == "excerpt":
        if not ir.subgraphs:
            found.append(Diagnostic(0, 0, "no IR content: neither an '# IR entry' header nor any node"))
        return found
    names = {g.name for g in ir.subgraphs}
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
