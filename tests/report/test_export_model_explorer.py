"""``msinspect export --format model-explorer``: facts of seed 002's rank 5 worked out by hand, and
the JSON read back through Model Explorer's own classes (``model_explorer.graph_builder``) where
that package is installed (the ``viewer`` extra: about 660 MB, so not in ``dev``)."""
from __future__ import annotations

import json
from dataclasses import asdict, fields

import pytest
from click.testing import CliRunner

from msinspect.cli import main
from tests.conftest import FIXTURES

SEED = str(FIXTURES / "sharding_propagation_dryrun_8rank")


@pytest.fixture(scope="module")
def rank5(tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "rank5.json"
    result = CliRunner().invoke(main, ["export", SEED, "--rank", "5", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


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
