"""``msinspect view`` as a process: SIGTERM stops it as Ctrl+C does, so its temporary folder of
exported graphs goes with it, and each rank's wire-bytes overlay is attached to that rank's model
(issue 26, point 8). Model Explorer itself (a 660 MB extra, not in CI) is stood in for by a small
``model_explorer`` package that records what msinspect asks of its public API (``config()``,
``add_model_from_path``, ``add_node_data_from_path(path, model_name=...)``,
``visualize_from_config``) and then serves forever."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import FIXTURES, ROOT

SEED = str(FIXTURES / "sharding_propagation_dryrun_8rank")

STAND_IN = '''
import json, os, sys, time

class _Config:
    def __init__(self):
        self.calls = []
    def add_model_from_path(self, path):
        self.calls.append(["model", os.path.basename(path)])
        return self
    def add_node_data_from_path(self, path, model_name=None):
        self.calls.append(["node_data", os.path.basename(path), model_name])
        return self

def config():
    return _Config()

def visualize_from_config(config, host, port, no_open_in_browser):
    with open(os.environ["STAND_IN_LOG"], "w") as f:
        json.dump(config.calls, f)
    print("serving", flush=True)
    while True:
        time.sleep(1)
'''


def test_sigterm_removes_the_exported_graphs_and_each_overlay_is_on_its_rank(tmp_path):
    (tmp_path / "model_explorer").mkdir()
    (tmp_path / "model_explorer" / "__init__.py").write_text(STAND_IN)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    log = tmp_path / "calls.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "TMPDIR": str(tmp),
           "STAND_IN_LOG": str(log)}
    server = subprocess.Popen([sys.executable, "-m", "msinspect", "view", SEED, "--rank", "0", "--rank", "5",
                               "--no-browser"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        for _ in range(240):
            if log.exists() or server.poll() is not None:
                break
            time.sleep(0.25)
        time.sleep(0.5)
        assert log.exists(), server.communicate(timeout=5)
        assert [p.name for p in tmp.iterdir() if p.name.startswith("msinspect-view-")]  # serving from it
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == 128 + signal.SIGTERM
    assert not [p.name for p in tmp.iterdir() if p.name.startswith("msinspect-view-")]
    calls = json.loads(log.read_text())
    models = [name for kind, name, *_ in calls if kind == "model"]
    assert [m.split("-")[0] for m in models] == ["rank_0", "rank_5"]
    overlays = {name: model for kind, name, *rest in calls if kind == "node_data" for model in rest}
    assert overlays, calls  # rank 5 holds communication (the seed's inserted collectives)
    for overlay, model in overlays.items():
        assert model in models and overlay.startswith(model.removesuffix(".json"))
