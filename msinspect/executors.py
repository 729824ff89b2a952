"""How per-file tasks run: in this process, in a local process pool, or on a Dask cluster.

:func:`run_each` is the one loop every caller uses (``analyse`` and ``parse_many``): it submits
``fn(*task, **kwargs)`` for every task and yields ``(index, task, outcome)`` as each finishes, so
the caller aggregates as results arrive. ``outcome`` is the task's result, or the
:class:`~msinspect.errors.MsInspectError` it raised (the caller decides whether to stop or to
keep a partial result); any other exception is a bug and propagates.

Where tasks run:

- ``scheduler`` (``tcp://HOST:PORT``, or ``MSINSPECT_SCHEDULER``): on the workers of an existing
  ``dask.distributed`` cluster, which must see the dump at the same path (shared storage) and
  import the same msinspect. Dask is an extra (``pip install 'msinspect[cluster]'``) and is
  imported only here, only then.
- else ``jobs`` processes (default: every core); one job, or one task, runs in this process.
"""
from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from typing import Any, Callable, Iterator, Sequence

from msinspect import collector
from msinspect.errors import MsInspectError, WorkerError

#: The environment variable naming a Dask scheduler when ``--scheduler`` is not given.
SCHEDULER_ENV = "MSINSPECT_SCHEDULER"
#: Seconds to wait for the scheduler to answer, and for it to have a worker, before giving up.
CONNECT_TIMEOUT_ENV = "MSINSPECT_SCHEDULER_TIMEOUT"
CONNECT_TIMEOUT = 10.0


class SchedulerError(MsInspectError):
    """The Dask scheduler cannot be used: Dask is not installed, the address is wrong or does not
    answer, it has no workers, or the workers cannot run msinspect's tasks."""


#: What :func:`run_each` yields: the task's index, the task, its result or its msinspect error.
Outcome = tuple[int, tuple, Any]


def scheduler_address(scheduler: str | None) -> str | None:
    """The scheduler to use: ``scheduler``, else ``MSINSPECT_SCHEDULER``; None (run locally) when
    neither names one."""
    address = scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV)
    return address.strip() or None if address else None


def run_each(fn: Callable, tasks: Sequence[tuple], *, jobs: int | None = None, scheduler: str | None = None,
             name: Callable[[tuple], str] = lambda task: str(task[0]), **kwargs) -> Iterator[Outcome]:
    """Run ``fn(*task, **kwargs)`` for every task; yield ``(index, task, result or error)`` in the
    order they finish. ``name(task)``: the file a task reads, for the error of a worker that died
    while running it (killed, out of memory), which comes back as an
    :class:`~msinspect.errors.WorkerError` naming that file."""
    tasks = tasks if isinstance(tasks, Sequence) else list(tasks)  # a Sequence may make each when asked
    address = scheduler_address(scheduler)
    if address:
        yield from _on_dask(address, fn, tasks, name, kwargs)
        return
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    if jobs == 1:
        yield from _in_process(fn, tasks, kwargs)
    else:
        yield from _in_pool(fn, tasks, jobs, name, kwargs)


def _in_process(fn, tasks, kwargs) -> Iterator[Outcome]:
    for index, task in enumerate(tasks):
        try:
            yield index, task, fn(*task, **kwargs)
        except MsInspectError as error:
            yield index, task, error


def _died(path: str, where: str) -> WorkerError:
    return WorkerError(path=path, line=0, column=0,
                       message=f"the {where} died while reading this file (killed, or out of memory)")


def _start_method():
    """How the pool's workers start: forked (cheapest: they share what this process has imported)
    while this process runs one thread; else from a fork server, since a fork copies other threads'
    locks in whatever state they are (a Dask client's threads left behind in the process made
    forked workers die)."""
    import multiprocessing  # a run whose ranks are all in the cache starts no process

    return multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")


def _bare(error: MsInspectError) -> MsInspectError:
    """``error`` without the exceptions it was raised from and its traceback, to send between
    processes: a Lark exception in its chain does not unpickle, and picklers that send chains
    (tblib's, which Dask installs in a process that used a client) would break the pool."""
    error.__cause__ = error.__context__ = None
    error.__traceback__ = None
    return error


def _returning_errors(fn: Callable, *args, **kwargs):
    """In a worker: ``fn``'s result, or the msinspect error it raised, returned bare."""
    try:
        return fn(*args, **kwargs)
    except MsInspectError as error:
        return _bare(error)


#: How many tasks a worker of the local pool has queued ahead (:func:`_in_pool`).
AHEAD = 2


def _in_pool(fn, tasks, jobs, name, kwargs) -> Iterator[Outcome]:
    """The tasks on a pool of ``jobs`` processes, at most :data:`AHEAD` a worker queued or
    finished and not yet taken: a caller slower than the workers (the main process spooling each
    rank's rows) makes them wait, not results pile up in memory (docs/performance.md)."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=jobs, mp_context=_start_method(),
                             initializer=collector.own_process) as pool:  # a worker is msinspect's own
        futures: dict = {}  # future -> (task index, task): each task made once (a Sequence may make it)
        queue = iter(range(len(tasks)))
        broken: list[tuple[int, tuple]] = []  # tasks the pool could not take: it lost a worker

        def submit() -> None:
            for index in queue:
                task = tasks[index]
                try:
                    futures[pool.submit(_returning_errors, fn, *task, **kwargs)] = (index, task)
                except BrokenProcessPool:
                    broken.append((index, task))
                    continue
                return

        try:
            for _ in range(jobs * AHEAD):
                submit()
            while futures or broken:
                while broken:
                    index, task = broken.pop(0)
                    yield index, task, _died(name(task), "parser process")
                done, _ = wait(futures, return_when=FIRST_COMPLETED) if futures else ((), ())
                for future in done:
                    index, task = futures.pop(future)  # a done future holds its result: let go once taken
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        result = _died(name(task), "parser process")
                    del future
                    submit()
                    yield index, task, result
                    del result
        finally:  # the caller stopped early (strict mode, an error): drop what has not started
            for future in futures:
                future.cancel()


# ---- Dask

_CWD_LOCK = threading.Lock()


def _in_folder(folder: str, fn: Callable, args: tuple, kwargs: dict):
    """On a Dask worker: run ``fn`` with the client's working folder as the current one, so that
    relative paths name the same files as on the client, and every path in the results is the
    one the user gave. The folder is process-wide, so tasks of one worker process take turns
    (parsing holds Python's lock anyway: give workers one thread and several processes).

    A msinspect error is returned, not raised: it travels by its own pickling, whole, where Dask
    would also send the exceptions it was raised from (a Lark exception that does not travel)
    and, failing, a bare ``Exception`` with the error's repr."""
    with _CWD_LOCK:
        before = os.getcwd()
        try:
            os.chdir(folder)
        except OSError:  # this machine has no such folder: absolute paths still work
            before = None
        try:
            return _returning_errors(fn, *args, **kwargs)
        finally:
            if before is not None:
                os.chdir(before)


def _timeout() -> float:
    try:
        return float(os.environ.get(CONNECT_TIMEOUT_ENV, CONNECT_TIMEOUT))
    except ValueError:
        raise SchedulerError(f"{CONNECT_TIMEOUT_ENV}={os.environ[CONNECT_TIMEOUT_ENV]!r}: "
                             "expected a number of seconds") from None


def _probe(address: str, timeout: float) -> None:
    """:class:`SchedulerError` now when ``address`` is not a scheduler address, nothing listens
    there, or what answers is not a Dask scheduler (a dashboard's port, a web server): said at
    once, where a Dask client would retry until its timeout, or fail reading the answer, and then
    hang in its own clean-up."""
    import asyncio

    from distributed.comm import connect, get_address_host_port, normalize_address

    try:
        address = normalize_address(address)
        host, port = get_address_host_port(address)
    except ValueError as error:
        raise SchedulerError(f"--scheduler {address}: not a Dask scheduler address ({error}); "
                             "expected tcp://HOST:PORT") from None
    if address.startswith("tcp://"):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as error:
            reason = "timed out" if isinstance(error, TimeoutError) else error.strerror or str(error)
            raise SchedulerError(f"cannot reach the Dask scheduler at {address}: {reason}\n"
                                 "  (is 'dask scheduler' running there, and is the port open to this machine?)"
                                 ) from None

    async def identify():
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            await comm.close()

    try:
        answer = asyncio.run(asyncio.wait_for(identify(), timeout))
    except Exception as error:  # noqa: BLE001 - whatever the far end did, it is not our scheduler
        reason = "its answer is not Dask's protocol" if isinstance(error, MemoryError) else \
            str(error).strip() or type(error).__name__
        answer = {"error": reason}
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        said = answer.get("error") if isinstance(answer, dict) and "error" in answer else "another kind of server"
        raise SchedulerError(f"{address} did not answer as a Dask scheduler within {timeout:g} s ({said}); "
                             "give the scheduler's port (8786 by default), not its dashboard's")


def _connect(address: str):
    """A :class:`distributed.Client` of the scheduler at ``address`` with at least one worker, or
    :class:`SchedulerError` within the timeout."""
    try:
        import distributed
    except ImportError:
        raise SchedulerError(f"--scheduler {address}: running on a Dask cluster needs Dask; "
                             "install it with: pip install 'msinspect[cluster]'") from None
    timeout = _timeout()
    _probe(address, timeout)
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        reason = str(error).strip() or type(error).__name__
        raise SchedulerError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s: {reason}\n"
                             f"  (start one with 'dask scheduler', or set {CONNECT_TIMEOUT_ENV} to wait longer)"
                             ) from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as error:
        client.close()
        raise SchedulerError(f"the Dask scheduler at {address} has no workers (waited {timeout:g} s); "
                             f"start some with 'dask worker {address}'") from error
    return client


def _finished(client, address: str, futures, timeout: float):
    """The futures as they finish (``distributed.as_completed``); :class:`SchedulerError` rather
    than waiting for ever when nothing finished for ``timeout`` seconds and the cluster has no
    worker left to run what is pending."""
    from distributed import as_completed

    arriving = as_completed(futures, loop=client.loop)
    last = time.monotonic()
    while not arriving.is_empty():
        if arriving.has_ready():
            yield from arriving.next_batch(block=False)
            last = time.monotonic()
            continue
        time.sleep(0.05)
        if time.monotonic() - last < timeout:
            continue
        try:
            workers = len(client.nthreads())
        except Exception as error:  # noqa: BLE001 - the scheduler went away
            raise SchedulerError(f"lost the Dask scheduler at {address} while running: {error}") from None
        if not workers:
            raise SchedulerError(f"the Dask cluster at {address} has no worker left; "
                                 f"{arriving.count()} task(s) did not run")
        last = time.monotonic()  # still working: a large file takes its time


#: The most tasks one Dask task runs; batches are made smaller where that leaves workers idle
#: (:func:`batches`).
BATCH_MAX = 64
#: Batches per worker process the tasks are cut into, at least: enough that a slow batch does
#: not hold the others up at the end.
BATCHES_PER_WORKER = 4


def batches(count: int, workers: int, most: int | None = None) -> list[range]:
    """``range(count)`` cut into consecutive batches, each of at most ``most`` (default
    :data:`BATCH_MAX`) tasks and at least :data:`BATCHES_PER_WORKER` batches per worker where
    there are tasks enough: one rank per Dask task made the scheduler the bottleneck at thousands
    of ranks (each task some milliseconds of its bookkeeping on a rank that takes tens of
    milliseconds to read)."""
    if count <= 0:
        return []
    most = BATCH_MAX if most is None else most
    size = max(1, min(most, -(-count // max(1, workers * BATCHES_PER_WORKER))))
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def _batch(folder: str, fn: Callable, tasks: list[tuple], kwargs: dict) -> list:
    """On a Dask worker: :func:`_in_folder` for each task of a batch, in order."""
    return [_in_folder(folder, fn, task, kwargs) for task in tasks]


def _workers(client) -> int:
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - the count only sizes the batches
        return 1


def _on_dask(address: str, fn, tasks, name, kwargs) -> Iterator[Outcome]:
    """The tasks in batches (:func:`batches`), each batch one Dask task. A batch whose worker died
    is run again one task at a time, each alone on the cluster's queue, so the file that kills a
    worker is the one named and the files queued beside it are not blamed with it."""
    client = _connect(address)  # first: says how to install Dask where it is missing
    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    folder = os.getcwd()
    futures: dict = {}  # future -> (task indices, their tasks, run alone): each task made once
    alone: list[int] = []  # tasks of batches whose worker died, to run one at a time

    def submit(indices, single: bool = False):  # pure=False: a file may change between two runs
        sent = [tasks[i] for i in indices]
        future = client.submit(_batch, folder, fn, sent, kwargs, pure=False)
        futures[future] = (list(indices), sent, single)
        return future

    try:
        pending = [submit(indices) for indices in batches(len(tasks), _workers(client))]
        while pending:
            for future in _finished(client, address, pending, _timeout()):
                indices, sent, single = futures.pop(future)
                try:
                    outcomes = future.result()  # msinspect's errors come back as values
                except KilledWorker:
                    if not single:
                        alone.extend(indices)
                        continue
                    outcomes = [_died(name(sent[0]), "Dask worker")]
                except ImportError as error:
                    raise SchedulerError(f"the Dask workers of {address} cannot import msinspect ({error}); "
                                         "install the same msinspect on every worker") from None
                except (FutureCancelledError, OSError) as error:
                    raise SchedulerError(f"lost the Dask scheduler at {address} while running: "
                                         f"{str(error).strip() or type(error).__name__}") from None
                for index, task, outcome in zip(indices, sent, outcomes):
                    yield index, task, outcome
            pending = [submit([alone.pop(0)], single=True)] if alone else []
    finally:
        with contextlib.suppress(Exception):
            client.cancel(list(futures))
        with contextlib.suppress(Exception):
            client.close()
