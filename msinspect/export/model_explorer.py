"""One rank's IR as Model Explorer's JSON graph format (google-ai-edge/model-explorer,
``model_explorer/graph_builder.py``): a graph collection ``{"label", "graphs": [Graph ...]}``, which
its built-in JSON loader opens as it is.

- One Model Explorer graph per IR subgraph; nodes are the subgraph's CNodes (``Return`` included)
  and the parameters they read; a value from another subgraph (a free variable) is a node of its
  own in the namespace ``(other graphs)``.
- Namespaces are the IR's scopes (``Default/network-WithLossCell/_backbone-Net``), so the layers of
  a network collapse into groups.
- Node attributes: the instance name, the IR line, ``in_strategy`` / ``out_strategy`` and who set
  them; outputs carry their per-rank shape and dtype. Inserted communication (the ``comm``
  analysis of that rank) is styled and carries its kind, group, group ranks and tensor bytes.
"""
from __future__ import annotations

from pathlib import Path

from msinspect.cell_text import text
from msinspect.graph import node_id, to_networkx
from msinspect.parser import parse_file

#: Fill and border of communication nodes.
COMM_STYLE = {"backgroundColor": "#fde0dd", "borderColor": "#c51b8a", "hoveredBorderColor": "#7a0177"}
OTHER_GRAPHS = "(other graphs)"


def _kv(key: str, value) -> dict:
    return {"key": key, "value": text(value) if not isinstance(value, str) else value}


def _outputs(shapes, dtypes) -> list[dict]:
    out = []
    for i, shape in enumerate(shapes):
        attrs = [_kv("shape", shape if shape is not None else "unknown")]
        if i < len(dtypes) and dtypes[i]:
            attrs.append(_kv("dtype", dtypes[i]))
        out.append({"id": str(i), "attrs": attrs})
    return out


def _node(key: str, data: dict, comm: dict | None, namespace: str | None = None) -> dict:
    attrs = []
    if data.get("kind") == "parameter":
        label, ns = f"param {data.get('name')}", namespace or "parameters"
    else:
        label, ns = data.get("op") or "?", namespace if namespace is not None else (data.get("scope") or "")
        for k, v in (("name", data.get("instance_name") or data.get("name")), ("line", data.get("line")),
                     ("in_strategy", data.get("in_strategy")), ("out_strategy", data.get("out_strategy")),
                     ("strategy set by", data.get("strategy_source"))):
            if v is not None and v != "":
                attrs.append(_kv(k, v))
    node = {"id": key, "label": label, "namespace": ns, "subgraphIds": [], "attrs": attrs, "incomingEdges": [],
            "outputsMetadata": _outputs(data.get("output_shapes") or (), data.get("dtypes") or ()),
            "inputsMetadata": [], "style": None, "config": None}
    if comm is not None:
        for k in ("kind", "group", "group_ranks", "peer", "tensor_bytes", "wire_bytes", "producer", "consumers"):
            if comm.get(k) is not None and text(comm.get(k)) != "":
                node["attrs"].append(_kv(f"comm {k}", comm[k]))
        node["style"] = dict(COMM_STYLE)
    return node


def model_explorer_graphs(path: str, comm_rows: list[dict] = (), *, label: str | None = None,
                          lenient: bool = False) -> dict:
    """The graph collection of one IR file; ``comm_rows``: that file's rows of the ``comm``
    analysis (matched by line)."""
    ir = parse_file(path, lenient=lenient)
    graph = to_networkx(ir)
    comm_by_line = {int(r["line"]): r for r in comm_rows if str(r.get("file")) == str(path)}
    graphs = []
    for sub in ir.subgraphs:
        keys = [node_id(n) for n in sub.nodes]
        inside = set(keys)
        nodes: dict[str, dict] = {}
        for key in keys:
            data = graph.nodes[key]
            nodes[key] = _node(key, data, comm_by_line.get(data.get("line")))
        for key in keys:
            edges = sorted(((d["position"], u) for u, _, d in graph.in_edges(key, data=True)))
            for position, source in edges:
                if source not in inside and source not in nodes:
                    data = graph.nodes[source]
                    outside = None if data.get("kind") == "parameter" else OTHER_GRAPHS
                    nodes[source] = _node(source, data, None, outside)
                nodes[key]["incomingEdges"].append(
                    {"sourceNodeId": source, "sourceNodeOutputId": "0", "targetNodeInputId": str(position)})
        graphs.append({"id": sub.name, "nodes": list(nodes.values()), "groupNodeAttributes": None,
                       "groupNodeConfigs": None, "nodeLabelsToHide": None, "tasksData": None,
                       "layoutConfigs": None})
    graphs.sort(key=lambda g: g["id"] != ir.entry)  # the entry graph first
    return {"label": label or str(path), "graphs": graphs}


def export_rank(dump, rank: int | None, stage: str | None = None, *, lenient: bool = False,
                analysis=None) -> dict:
    """The graph collection of ``rank``'s file at the stage the analyses read (or ``stage``);
    ``analysis``: the dump's analysis to take the rank's rows from (by default the rank's alone,
    :func:`rank_analysis`)."""
    from msinspect.errors import DumpNotFoundError

    analysis = analysis or rank_analysis(dump, rank, stage, lenient=lenient)
    reads = [r for r in analysis.plan.read if rank is None or r.rank == rank] if analysis.plan else []
    if not reads:
        have = ", ".join(r.label for r in analysis.plan.read) if analysis.plan else "none"
        raise DumpNotFoundError(f"{dump.path}: rank {rank} was not read (ranks read: {have})")
    read = reads[0]
    frame = analysis.comm()
    rows = frame[frame["file"] == str(read.file)].to_dict("records") if len(frame) else []
    return model_explorer_graphs(str(read.file), rows, label=f"{read.label} {read.stage}", lenient=lenient)


def rank_analysis(dump, rank: int | None, stage: str | None = None, *, lenient: bool = False):
    """The analysis a rank's export needs: that rank's file alone (every rank's where ``rank`` is
    None, the first read being exported), the plan over every rank."""
    from msinspect.analysis import analyse

    return analyse(dump, stage, lenient=lenient, only=None if rank is None else (rank,))


#: The overlay's colours: from few wire bytes (light) to the most of the graph (dark magenta).
WIRE_GRADIENT = [{"stop": 0, "bgColor": "#fde0dd"}, {"stop": 1, "bgColor": "#c51b8a"}]


def wire_bytes_node_data(collection: dict) -> dict:
    """Model Explorer's per-node data (``model_explorer/node_data_builder.py``: ``ModelNodeData``
    as its ``to_json_string`` writes it, graph id -> ``GraphNodeData``) for a collection of
    :func:`model_explorer_graphs`: each communication node's wire bytes per step at this rank (the
    ``comm wire_bytes`` attribute), coloured on a gradient. A node whose bytes cannot be told has
    no value (it is not 0); a graph with no such node is left out. Loaded in Model Explorer as an
    overlay of the graph ("add per-node data"), or by ``msinspect view``."""
    out = {}
    for graph in collection["graphs"]:
        results = {}
        for node in graph["nodes"]:
            value = next((kv["value"] for kv in node["attrs"] if kv["key"] == "comm wire_bytes"), None)
            if value is not None and value.isdigit():
                results[node["id"]] = {"value": int(value)}
        if results:
            out[graph["id"]] = {"results": results, "thresholds": [], "gradient": [dict(g) for g in WIRE_GRADIENT],
                                "hideInAggregatedStatsTable": False, "hideInChildrenStatsTable": False,
                                "showExpandedSummaryOnGroupNode": False,
                                "showLabelCountColumnsInChildrenStatsTable": False}
    return out


def node_data_path(graph_path) -> Path:
    """Where the node data goes beside the graph: ``rank5.json`` -> ``rank5-wire-bytes.json``."""
    graph_path = Path(graph_path)
    return graph_path.with_name(f"{graph_path.stem}-wire-bytes.json")
