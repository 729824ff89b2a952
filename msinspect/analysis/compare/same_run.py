"""Whether two ranks come from one run: run folder, run record, world, passes dumped and when
each rank built its network.

What tells two runs apart, and what does not:

* The run folder (the folder holding the ``rank_N/`` folders) and the run record beside the rank
  folders (``config.json``, written by ``msinspect train`` / ``dryrun``): two sides in different
  folders, or with different records, come from different runs.
* The world: the record's ``ranks``, else the size the IR states over the world group.
* The passes dumped: the IR file names of each rank folder less MindSpore's numbers
  (:func:`msinspect.stages.stage_of`). Different passes mean different dump settings, so
  different runs (or a folder pruned by hand).
* The numbers in the file names are *not* a run's mark: MindSpore numbers its dump files with a
  per-process graph counter that also counts graphs it does not write, so ranks that compile one
  program (one pipeline stage, or a job without a pipeline) hold the same names, but ranks of
  different pipeline stages compile different programs and their counters part ways
  (``21_validate_0587.ir`` on stage 0, ``21_validate_0628.ir`` on stage 1 of one run). The whole
  names are compared only between ranks known to compile one program.
* When each rank built its network: MindSpore's ``compile_phase`` attribute in every file's header
  (``train.<creation time in ns>.<object id>.<arguments>``) carries the time the top cell was
  created in that rank's process. Every rank of a run builds its network while the run lasts, so
  two sides built further apart than the whole run took (the record's ``wall_seconds``) come from
  different runs, even in one folder (a rank folder copied in from another run). Without a
  record's duration this is not judged: ranks of one run may start minutes apart.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from msinspect.analysis.job.collect import RankResult
from msinspect.dumps import RankDump
from msinspect.stages import stage_of

#: ``compile_phase: train.1795403070431228928.139842726472944.0``: the phase, the top cell's
#: creation time in nanoseconds since the epoch, its object id, its arguments key.
_COMPILE_PHASE = re.compile(r"^compile_phase: [^.\s]+\.(\d{16,})\.\d+\.", re.MULTILINE)
#: Seconds added to a run's duration before two ranks' build times are called too far apart.
BUILD_SLACK_S = 60.0


def run_folder(rank: RankDump) -> Path:
    """The folder of the run a rank belongs to: the one holding its ``rank_N/`` folder, or its
    own folder when it has no rank number."""
    folder = rank.path if rank.path.is_dir() else rank.path.parent
    return folder.parent if rank.rank is not None and folder.name == f"rank_{rank.rank}" else folder


def run_record(rank: RankDump) -> dict | None:
    """The run record (``config.json``) beside the rank folders; None when there is none or it
    cannot be read as a JSON object."""
    path = run_folder(rank) / "config.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _names(rank: RankDump) -> list[str] | None:
    if not rank.path.is_dir():
        return None
    return sorted(p.name for p in rank.files) + sorted(u.path.name for u in rank.unreadable)


def graph_set(rank: RankDump) -> str | None:
    """A short hash of the IR file names of a rank folder (numbers included: the same for ranks
    that compile one program); None for a single file."""
    names = _names(rank)
    return None if names is None else hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]


def passes(rank: RankDump) -> frozenset[str] | None:
    """The passes a rank folder holds dumps of, by name less MindSpore's numbers
    (``validate``, ``step_parallel_end``); None for a single file."""
    names = _names(rank)
    return None if names is None else frozenset(stage_of(n) for n in names)


def built_at(file: str | os.PathLike) -> float | None:
    """When the rank built its network, in seconds since the epoch: the creation time in the
    file's ``compile_phase`` header attribute; None when the file does not say."""
    from msinspect.parser.reading import Unclean, text_pieces

    try:
        head = next(text_pieces(file), "")
    except Unclean:
        return None
    found = _COMPILE_PHASE.search(head)
    return int(found.group(1)) / 1e9 if found else None


def _world(record: dict | None, result: RankResult) -> int | None:
    ranks = record.get("ranks") if record else None
    if isinstance(ranks, int) and not isinstance(ranks, bool) and ranks > 0:
        return ranks
    return result.world_size


def _duration(record: dict | None) -> float | None:
    took = record.get("wall_seconds") if record else None
    return float(took) if isinstance(took, (int, float)) and not isinstance(took, bool) and took >= 0 else None


def run_warnings(left: RankDump, right: RankDump, lr: RankResult, rr: RankResult,
                 labels: tuple[str, str], one_program: bool = False) -> list[str]:
    """Why ``left`` and ``right`` may come from different runs, in words (empty: nothing says so).
    ``one_program``: both sides are known to compile one program (one pipeline stage, or a job
    without a pipeline), so their dump files must have the same names, numbers included."""
    found = []
    lf, rf = run_folder(left), run_folder(right)
    same_folder = os.path.realpath(lf) == os.path.realpath(rf)
    if not same_folder:
        found.append(f"{labels[0]} and {labels[1]} lie in different run folders ({lf}, {rf}): "
                     "they may come from different runs")
    l_rec, r_rec = run_record(left), run_record(right)
    if not same_folder:
        if l_rec is not None and r_rec is not None and l_rec != r_rec:
            found.append(f"their run records differ ({lf / 'config.json'}, {rf / 'config.json'}): different runs")
        elif (l_rec is None) != (r_rec is None):
            has = lf if l_rec is not None else rf
            found.append(f"only one side has a run record ({has / 'config.json'})")
    lw, rw = _world(l_rec, lr), _world(r_rec, rr)
    if lw is not None and rw is not None and lw != rw:
        found.append(f"their worlds differ ({labels[0]}: {lw} ranks, {labels[1]}: {rw}): different jobs")
    lp, rp = passes(left), passes(right)
    if lp is not None and rp is not None and lp != rp:
        only = sorted(lp ^ rp)
        found.append(f"their rank folders hold dumps of different passes ({', '.join(only[:4])}"
                     f"{' ...' if len(only) > 4 else ''} on one side only): different dump settings or different runs")
    elif one_program:
        lg, rg = graph_set(left), graph_set(right)
        if lg is not None and rg is not None and lg != rg:
            found.append(f"their rank folders hold differently numbered IR files ({lg} vs {rg}), though both "
                         "compile one program: different runs or different dump settings")
    took = _duration(l_rec) if same_folder else None
    lt, rt = (built_at(lr.file), built_at(rr.file)) if took is not None else (None, None)
    if lt is not None and rt is not None and abs(lt - rt) > took + BUILD_SLACK_S:
        first, then = (labels[0], labels[1]) if lt <= rt else (labels[1], labels[0])
        found.append(f"{then} built its network {abs(lt - rt):,.0f} s after {first} (compile_phase), longer than "
                     f"the whole run took ({took:,.0f} s, {lf / 'config.json'}): a rank folder from another run?")
    return found
