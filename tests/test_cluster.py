"""``--scheduler``: the per-rank work of ``summary`` and ``check`` runs on a real Dask cluster (a
``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1) and gives what a local run gives;
errors keep their file:line:col; a scheduler that cannot be reached is a clear error; no process
is left behind."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil
import pytest

from msinspect.analysis import analyse
from msinspect.processes import free_port, kill_group, tagged_processes
from tests.conftest import FIXTURES, ROOT
from tests.test_cli_parse import msinspect

if os.environ.get("CI"):  # CI installs the cluster extra: there the test runs, never skips
    import distributed
else:
    distributed = pytest.importorskip("distributed", reason="needs the cluster extra: pip install 'msinspect[cluster]'")

# An 8-rank dry run (rank_0 .. rank_7) and its spec, named relative to the checkout: the workers
# run in a folder of their own, and the paths in the results must still be the ones given.
DUMP = "fixtures/sharding_propagation_dryrun_8rank"
SPEC = "train_jobs/sharding_propagation.toml"
TAG = "MSINSPECT_TEST_CLUSTER"


def _start(args: list[str], env: dict, cwd) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dask", *args], env=env, cwd=cwd, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two single-threaded workers, in a folder of their own, importing this
    checkout's msinspect and keeping parsed files in a cache of their own; the address, and that
    cache. Torn down with every process it started, which the teardown asserts."""
    folder = tmp_path_factory.mktemp("cluster")
    tag = uuid.uuid4().hex
    env = {**os.environ, TAG: tag, "MSINSPECT_PARSE_CACHE_DIR": str(folder / "worker-cache"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("MSINSPECT_SCHEDULER", None)
    address = f"tcp://127.0.0.1:{free_port()}"
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                     "--no-dashboard"], env, folder)]
    procs += [_start(["worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                      "--no-dashboard", "--name", f"w{i}"], env, folder) for i in range(2)]
    try:
        deadline = time.monotonic() + 45
        while True:  # the scheduler listens (a client made before would retry, then linger)
            try:
                socket.create_connection(("127.0.0.1", int(address.rsplit(":", 1)[1])), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and procs[0].poll() is None, "the Dask scheduler did not start"
                time.sleep(0.2)
        with distributed.Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
        yield address, folder / "worker-cache"
    finally:
        for proc in reversed(procs):
            kill_group(proc.pid, grace=10)
            proc.wait(timeout=10)
        assert tagged_processes(TAG, tag) == [], "a Dask process outlived the test"
        assert not any(psutil.pid_exists(p.pid) for p in procs)


def _parsed_files(cache: Path) -> list[Path]:
    """The parsed IR files kept in a cache folder (not its analysed ranks nor its built grammars)."""
    return [p for p in cache.rglob("*") if p.is_file() and p.relative_to(cache).parts[0] not in ("results", "grammar")]


def _same_locally_and_on(address: str, *args: str) -> tuple[str, str]:
    """The command's output run here and on the cluster. The cluster's run has a cache of its own,
    empty: with the suite's (where an earlier test may have left every rank's answer) it would
    send the workers nothing; it parses nothing itself (the workers do)."""
    local = msinspect(*args, "--json", cwd=ROOT)
    with tempfile.TemporaryDirectory() as own:
        remote = subprocess.run([sys.executable, "-m", "msinspect.cli", *args, "--json", "--scheduler", address],
                                capture_output=True, text=True, cwd=ROOT, timeout=300,
                                env={**os.environ, "MSINSPECT_PARSE_CACHE_DIR": own})
        assert _parsed_files(Path(own)) == [], "the command sent to the cluster parsed files itself"
    assert local.returncode == remote.returncode == 0, (local.stderr, remote.stderr)
    return local.stdout, remote.stdout


def test_summary_and_check_on_the_cluster_match_a_local_run(cluster):
    address, worker_cache = cluster
    local, remote = _same_locally_and_on(address, "summary", DUMP)
    rows = json.loads(remote)
    # 8 ranks (rank_0 .. rank_7 under the dump), each read whole
    assert [(r["rank"], r["rank_label"]) for r in rows] == [(n, f"rank_{n}") for n in range(8)]
    assert all(r["complete"] for r in rows)
    assert remote == local
    local, remote = _same_locally_and_on(address, "check", SPEC, DUMP)
    report = json.loads(remote)
    assert report["failed_count"] == 0 and report["passed_count"] > 0
    assert remote == local
    # the parsing happened on the workers, in their own cache: a rank read by what differs from
    # another of its batch parses no file of its own (msinspect.analysis.engine.alike), so how many
    # files they keep depends on how the ranks were batched; that they keep some does not
    assert _parsed_files(worker_cache)


def test_progress_arrives_from_the_futures(cluster):
    from msinspect import load_dump

    address, _ = cluster
    seen = []
    analysis = analyse(load_dump(ROOT / DUMP), scheduler=address, progress=seen.append)
    assert sorted(seen) == sorted(f"rank_{n}" for n in range(8))
    assert [r.label for r in analysis.results] == [f"rank_{n}" for n in range(8)]  # in rank order


def test_a_parse_error_on_a_worker_keeps_file_line_column(cluster, tmp_path):
    address, _ = cluster
    root = tmp_path / "dump"
    shutil.copytree(FIXTURES / "sharding_propagation_dryrun_8rank", root)
    bad = next((root / "rank_3").glob("*validate*"))
    bad.chmod(0o644)
    text = gzip.decompress(bad.read_bytes()).decode()
    at = text.index("PrimFunc_MatMul(") + len("PrimFunc_MatMul(")  # where the '?' goes
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    bad.write_bytes(gzip.compress((text[:at] + "?" + text[at:]).encode()))
    remote = msinspect("summary", root, "--scheduler", address)
    assert remote.returncode == 1, remote.stderr
    assert f"error: {bad}:{line}:{column}: unexpected '?" in remote.stderr
    assert "Traceback" not in remote.stderr and "internal error" not in remote.stderr
    # --lenient reads past it on the workers as it does locally: same rows, same warning
    lenient = msinspect("summary", root, "--json", "--lenient", "--scheduler", address)
    assert lenient.returncode == 0, lenient.stderr
    assert f"{bad}:{line}:{column}: unexpected '?" in lenient.stderr
    assert [r["complete"] for r in json.loads(lenient.stdout)] == [n != 3 for n in range(8)]
    local = msinspect("summary", root, "--json", "--lenient", "--jobs", "2")
    assert (lenient.stdout, lenient.stderr) == (local.stdout, local.stderr)


def test_a_scheduler_that_does_not_answer_is_a_clear_error():
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    run = msinspect("summary", ROOT / DUMP, "--scheduler", address)
    assert run.returncode == 2
    assert run.stderr.strip().startswith(f"error: cannot reach the Dask scheduler at {address}: Connection refused")
    assert "Traceback" not in run.stderr
    assert time.monotonic() - started < 60  # said, not retried until some long timeout


def test_a_bad_address_from_the_environment_is_a_clear_error():
    run = subprocess.run([sys.executable, "-m", "msinspect.cli", "check", ROOT / SPEC,
                          ROOT / DUMP], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "MSINSPECT_SCHEDULER": "localhost"})
    assert run.returncode == 2
    assert "not a Dask scheduler address (missing port number" in run.stderr
    assert "Traceback" not in run.stderr


def test_batches_cut_the_ranks_in_order():
    from msinspect.executors import BATCH_MAX, BATCHES_PER_WORKER, batches

    assert batches(0, 4) == []
    # few ranks: one per task, so every worker has work
    assert batches(8, 2) == [range(i, i + 1) for i in range(8)]
    for count, workers in ((10_000, 16), (2_048, 2), (100, 3), (7, 64)):
        cut = batches(count, workers)
        assert [i for batch in cut for i in batch] == list(range(count))  # each rank once, in order
        assert max(map(len, cut)) <= BATCH_MAX
        assert len(cut) >= min(count, workers * BATCHES_PER_WORKER)
    assert len(batches(10_000, 16)) == 157  # 64 a task: the scheduler sees 157 tasks, not 10,000


def test_ranks_batched_on_the_cluster_match_a_local_run(cluster, monkeypatch):
    from msinspect import executors, load_dump

    address, _ = cluster
    cuts = []
    # one batch a worker: analyse cuts 8 ranks into two batches of 4 (for 2 cores, here), each a
    # Dask task (the cut _on_dask makes of the two batches, one a task)
    monkeypatch.setattr(executors, "BATCHES_PER_WORKER", 1)
    monkeypatch.setattr(executors, "batches", lambda n, w, cut=executors.batches: cuts.append(cut(n, w)) or cuts[-1])
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    dump = load_dump(ROOT / DUMP)
    remote = analyse(dump, scheduler=address, cache=False)
    assert cuts == [[range(0, 1), range(1, 2)]]
    local = analyse(dump, jobs=1, cache=False)
    assert [r.label for r in remote.results] == [f"rank_{n}" for n in range(8)]
    for table in ("strategies", "comm", "operators", "slices"):
        assert getattr(remote, table)().equals(getattr(local, table)()), table


def test_a_batch_whose_worker_dies_is_run_again_one_rank_a_task(monkeypatch):
    """The third of four tasks, one batch, kills its worker (a nanny restarts it): the batch is run
    again one task at a time, the three others give their results and the killer is named."""
    import dask

    from msinspect import executors
    from msinspect.errors import WorkerError
    from msinspect.executors import run_each

    monkeypatch.setattr(executors, "BATCHES_PER_WORKER", 1)  # one worker: one batch of four

    tasks = [("x = 1",), ("x = 2",), ("import os; os._exit(3)",), ("x = 4",)]
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                     host="127.0.0.1") as local:
        got = {index: outcome for index, _, outcome in
               run_each(exec, tasks, scheduler=local.scheduler_address, name=lambda task: f"task {task[0]!r}")}
    assert sorted(got) == [0, 1, 2, 3]
    assert [got[i] for i in (0, 1, 3)] == [None, None, None]  # exec's result: run, on a live worker
    assert isinstance(got[2], WorkerError) and "os._exit(3)" in str(got[2]) and "died" in str(got[2])
