"""``msinspect export --format model-explorer``: facts of seed 002's rank 5 worked out by hand, and
the JSON read back through Model Explorer's own classes (``model_explorer.graph_builder``) where
that package is installed (the ``viewer`` extra: about 660 MB, so not in ``dev``)."""
from __future__ import annotations

import json
from dataclasses import asdict, fields

import pytest
from click.testing import CliRunner

from msinspect.analysis import analyse
from msinspect.cli import main
from tests.conftest import FIXTURES

SEED = str(FIXTURES / "sharding_propagation_dryrun_8rank")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "rank5.json"
    result = CliRunner().invoke(main, ["export", SEED, "--rank", "5", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "rank5-wire-bytes.json" in result.output
    return json.loads(out.read_text()), json.loads((out.parent / "rank5-wire-bytes.json").read_text())


@pytest.fixture(scope="module")
def rank5(exported):
    return exported[0]


@pytest.fixture(scope="module")
def overlay(exported):
    return exported[1]


def _attrs(node) -> dict:
    return {kv["key"]: kv["value"] for kv in node["attrs"]}


def test_rank_5_matmul_and_its_allreduce_by_hand(rank5):
    # Model Explorer's JSON loader opens {"label", "graphs"} as one graph collection
    assert rank5["label"] == "rank_5 validate" and len(rank5["graphs"]) >= 1
    nodes = {n["id"]: n for g in rank5["graphs"] for n in g["nodes"]}
    [matmul] = [n for n in nodes.values() if _attrs(n).get("name") == "matmul"]
    # seed 002: matmul shard ((2, 4), (4, 1)) by the user, in the network's backbone scope
    assert _attrs(matmul)["in_strategy"] == "((2, 4), (4, 1))"
    assert _attrs(matmul)["strategy set by"] == "user"
    assert matmul["namespace"] == "Default/network-WithLossCell/_backbone-Net"
    # per rank: x (16, 32) / (2, 4) = (8, 8), w (32, 16) / (4, 1) = (8, 16) -> output (8, 16)
    assert {kv["key"]: kv["value"] for kv in matmul["outputsMetadata"][0]["attrs"]}["shape"] == "(8, 16)"
    # its partial sums are joined by an AllReduce over the ranks sharing rank 5's batch slice: 4-7
    consumers = [n for n in nodes.values() if any(e["sourceNodeId"] == matmul["id"] for e in n["incomingEdges"])]
    [allreduce] = [n for n in consumers if n["label"] == "AllReduce"]
    assert _attrs(allreduce)["comm group_ranks"] == "(4, 5, 6, 7)"
    assert allreduce["style"]["backgroundColor"] and matmul["style"] is None
    # every edge starts at a node of the same graph
    for g in rank5["graphs"]:
        ids = {n["id"] for n in g["nodes"]}
        assert all(e["sourceNodeId"] in ids for n in g["nodes"] for e in n["incomingEdges"])


def test_model_explorer_classes_read_the_export_back(rank5):
    gb = pytest.importorskip("model_explorer.graph_builder",
                             reason="Model Explorer is not installed (pip install 'msinspect[viewer]')")

    def build(cls, data):
        """Model Explorer's dataclass from our dict: an unknown or missing field raises TypeError."""
        kinds = {"nodes": gb.GraphNode, "attrs": gb.KeyValue, "incomingEdges": gb.IncomingEdge,
                 "outputsMetadata": gb.MetadataItem, "inputsMetadata": gb.MetadataItem}
        values = {}
        for key, value in data.items():
            if key in kinds:
                values[key] = [build(kinds[key], v) for v in value]
            elif key == "style" and value is not None:
                values[key] = gb.GraphNodeStyle(**value)
            else:
                values[key] = value
        assert set(values) == {f.name for f in fields(cls)}, cls.__name__
        return cls(**values)

    graphs = [build(gb.Graph, g) for g in rank5["graphs"]]
    collection = gb.GraphCollection(label=rank5["label"], graphs=graphs)
    assert asdict(collection)["graphs"] == rank5["graphs"]


def test_view_serves_the_export_in_model_explorer(rank5, request, tmp_path):
    """``msinspect view`` started on 127.0.0.1: Model Explorer's page counts the export's nodes.
    Needs the viewer extra (not in CI: about 660 MB) and the report tests' browser."""
    pytest.importorskip("model_explorer", reason="Model Explorer is not installed (pip install 'msinspect[viewer]')")
    browser = request.getfixturevalue("browser")
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "view.log"
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, "-m", "msinspect", "view", SEED, "--rank", "5", "--port", str(port),
                                   "--no-browser"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        address = None
        for _ in range(120):
            text = log.read_text()
            address = next((w for w in text.split() if w.startswith(f"http://127.0.0.1:{port}/?data=")), None)
            if address or server.poll() is not None:
                break
            time.sleep(0.5)
        assert address, log.read_text()
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read()
        browser.get(address)
        expected = sum(len(g["nodes"]) for g in rank5["graphs"][:1])  # the graph shown first
        body = ""
        for _ in range(60):
            body = browser.execute_script("return document.body.innerText")
            if "op node count" in body:
                break
            time.sleep(0.5)
        assert "rank_5 validate" in body and f"{expected} nodes" in body
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        assert lines[lines.index("op node count") + 1] == str(expected)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)


def test_wire_bytes_overlay_by_hand(rank5, overlay):
    """Model Explorer's per-node data (``ModelNodeData`` as JSON: graph id -> ``{"results": {node id:
    {"value": N}}, ...}``) written beside the graph: the wire bytes of rank 5's communication."""
    graphs = {g["id"]: {n["id"]: n for n in g["nodes"]} for g in rank5["graphs"]}
    assert overlay and set(overlay) <= set(graphs)
    for graph_id, data in overlay.items():
        assert data["gradient"][0]["stop"] == 0 and data["gradient"][-1]["stop"] == 1
        for node_id, result in data["results"].items():
            node = graphs[graph_id][node_id]  # every key is a node of that graph, a communication one
            assert node["style"] is not None and isinstance(result["value"], int) and result["value"] >= 0
    # by hand: matmul's (8, 16) float32 partial sums (512 bytes) joined by an AllReduce over ranks
    # 4-7: a ring AllReduce sends 2 (4 - 1) / 4 x 512 = 768 bytes per rank
    nodes = {n["id"]: (g["id"], n) for g in rank5["graphs"] for n in g["nodes"]}
    [matmul] = [i for i, (_, n) in nodes.items() if _attrs(n).get("name") == "matmul"]
    [allreduce] = [i for i, (_, n) in nodes.items() if n["label"] == "AllReduce"
                   and any(e["sourceNodeId"] == matmul for e in n["incomingEdges"])]
    assert overlay[nodes[allreduce][0]]["results"][allreduce] == {"value": 768}
    # an operator that is not communication carries no value (nothing is made up)
    assert all(matmul not in d["results"] for d in overlay.values())


def test_model_explorer_classes_read_the_overlay_back(overlay):
    nd = pytest.importorskip("model_explorer.node_data_builder",
                             reason="Model Explorer is not installed (pip install 'msinspect[viewer]')")
    model = nd.ModelNodeData(graphsData={
        graph_id: nd.GraphNodeData(results={k: nd.NodeDataResult(**v) for k, v in data["results"].items()},
                                   gradient=[nd.GradientItem(**g) for g in data["gradient"]],
                                   **{k: v for k, v in data.items() if k not in ("results", "gradient")})
        for graph_id, data in overlay.items()})
    assert json.loads(model.to_json_string()) == overlay


def test_node_data_beside_an_existing_file_is_kept(tmp_path):
    mine = tmp_path / "g-wire-bytes.json"
    mine.write_text("mine")
    result = CliRunner().invoke(main, ["export", SEED, "--rank", "5", "-o", str(tmp_path / "g.json")])
    assert result.exit_code == 2 and "exists already" in result.output
    assert mine.read_text() == "mine" and not (tmp_path / "g.json").exists()
    named = tmp_path / "overlay.json"
    ok = CliRunner().invoke(main, ["export", SEED, "--rank", "5", "-o", str(tmp_path / "g.json"),
                                   "--node-data", str(named)])
    assert ok.exit_code == 0, ok.output
    assert json.loads(named.read_text()) and mine.read_text() == "mine"


def test_exporting_one_rank_analyses_that_rank_alone_with_the_same_result(rank5):
    """``export --rank 5`` reads rank 5's file, not all eight (issue 26: 11.6 s on zoo 04); what
    it writes is what the analysis of every rank gives for rank 5."""
    from msinspect.dumps import load_dump
    from msinspect.export.model_explorer import export_rank, rank_analysis

    dump = load_dump(SEED)
    alone = rank_analysis(dump, 5)
    assert [r.rank for r in alone.results] == [5] and len(alone.plan.read) == 8
    assert export_rank(dump, 5, analysis=analyse(dump)) == rank5 == export_rank(dump, 5, analysis=alone)
