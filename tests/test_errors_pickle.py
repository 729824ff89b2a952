"""msinspect's errors cross process boundaries whole: a bad rank in a process pool comes back as
its own error naming the file, never as BrokenProcessPool."""
from __future__ import annotations

import gzip
import importlib
import pickle
import pkgutil
import shutil
from pathlib import Path

import pytest

import msinspect
from msinspect.data import DataError
from msinspect.dryrun import DryRunError, DryRunSetupError, Problem
from msinspect.dryrun.sweep import SweepError
from msinspect.dumps import DuplicateRanksError, SeveralRunsError, parse_many
from msinspect.errors import (BadArgumentError, ConfigError, DumpNotFoundError, IRDecodeError, IRFileError,
                              IRParseError, IRReadError, IRTooLargeError, MsInspectError, NoMatchError, WorkerError)
from msinspect.executors import SchedulerError
from msinspect.mindspore.records import RecordError, RecordReadError
from msinspect.render import DotNotFoundError, OutputExistsError
from msinspect.report.grid_svg import PngUnavailableError
from msinspect.scrub import ScrubError
from msinspect.spec import SpecError
from msinspect.train import TrainError
from msinspect.train.launcher import JobArgumentError
from tests.conftest import FIXTURES


def _every_module() -> None:
    """Import every module of the package, so that every error class exists whatever the tests
    before this one imported (the MindSpore jobs and ``__main__`` are not modules to import)."""
    for info in pkgutil.walk_packages(msinspect.__path__, "msinspect."):
        if not info.name.endswith("__main__") and not info.name.startswith(
                ("msinspect.train_jobs", "msinspect.grammars", "msinspect.csrc")):
            importlib.import_module(info.name)


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _fields(error: BaseException) -> dict:
    return {"type": type(error), "args": error.args, "str": str(error), **vars(error)}


EXAMPLES = [
    IRParseError(path="rank_3/21_validate_0569.ir", line=77, column=22, message="unexpected '?'",
                 expected=("a node reference like %3",), source_line="  %5(x) = ?"),
    IRDecodeError(path="rank_3/x.ir.gz", line=0, column=0, message="cannot decompress: truncated",
                  lenient_helps=False),
    IRDecodeError(path="rank_3/x.ir", line=2, column=5, message="invalid UTF-8 byte 0xff", source_line="  %1 ="),
    IRReadError(path="rank_3/x.ir", line=0, column=0, message="cannot read: Permission denied"),
    IRTooLargeError(path="rank_3/x.ir", line=0, column=0, message="the file is larger than 100 bytes"),
    WorkerError(path="rank_3/x.ir", line=0, column=0, message="the parser process died while reading this file"),
    IRFileError(path="rank_3/x.ir", line=0, column=0, message="anything about one file"),
    BadArgumentError("a\\x00b: holds a NUL character, which no path can"),
    DumpNotFoundError("runs/x: no such file or folder"),
    NoMatchError("no rank 9 (ranks: 0-7)"),
    ConfigError("MSINSPECT_PARSER must be one of fast, reference, not 'quick'"),
    MsInspectError("anything"),
    DotNotFoundError(Path("out/g.dot"), "svg"),
    OutputExistsError("g.svg exists"),
    PngUnavailableError("PNG output needs cairosvg"),
    SpecError("bad spec: ranks must be an integer"),
    DuplicateRanksError("rank 3 is in both runs/a/rank_3 and runs/a/copy/rank_3"),
    SchedulerError("cannot reach the Dask scheduler at tcp://127.0.0.1:1: Connection refused"),
    SeveralRunsError("runs: holds 2 runs ...:\n  runs/a (8 rank(s): rank_0-rank_7)\n  runs/b (IR files, no rank folders)"),
    ScrubError("dumps/scrubbed: inside the source"),
    DataError(Path("data/mnist"), "no train-images-idx3-ubyte"),
    DryRunError("ranks must be at least 1"),
    SweepError("--grid 'MP': expected NAME=v1,v2 with NAME a variable's name (letters, digits, _)"),
    DryRunSetupError([Problem("the libcuda stand-in is missing", "msinspect setup-dryrun")]),
    TrainError("sharding_propagation: timed out after 60 s", Path("runs/train-x")),
    JobArgumentError("--num-samples 16 is less than one batch of 32: manual_parallel would train no step"),
    RecordError("rank_0/strategy_0.ckpt", "not a strategy checkpoint: cut short or damaged"),
    RecordError("rank_0/parameter_layout_0.json", "not a parameter layout file: Expecting value", 3, 14),
    RecordReadError("rank_0/group_info_0.pb", "cannot read: Permission denied"),
]


def test_examples_cover_every_error_class():
    _every_module()
    assert {type(e) for e in EXAMPLES} >= set(_subclasses(MsInspectError)) | {MsInspectError}


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_pickle_round_trip_keeps_every_field(error):
    back = pickle.loads(pickle.dumps(error))
    assert _fields(back) == _fields(error)


def _raise(error):
    raise error


def test_errors_come_back_from_a_process_pool():
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=2) as pool:
        for error in EXAMPLES:
            with pytest.raises(type(error)) as info:
                pool.submit(_raise, error).result()
            assert _fields(info.value) == _fields(error)


def test_bad_rank_in_a_pool_names_its_file(tmp_path):
    root = tmp_path / "dump"
    shutil.copytree(FIXTURES / "sharding_propagation_dryrun_8rank", root)
    bad = next((root / "rank_3").glob("*validate*"))
    bad.chmod(0o644)
    text = gzip.decompress(bad.read_bytes()).decode()
    bad.write_bytes(gzip.compress(text.replace("PrimFunc_MatMul(", "PrimFunc_MatMul(?", 1).encode()))
    files = sorted(root.glob("rank_*/*validate*"))
    with pytest.raises(IRParseError) as info:
        parse_many(files, jobs=2)
    assert info.value.path == str(bad) and info.value.line > 0
    lenient = parse_many(files, jobs=2, lenient=True)
    assert [ir.complete for ir in lenient] == [f != bad for f in files]
