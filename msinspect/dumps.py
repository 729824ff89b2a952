"""Dump folders: a ``rank_N/`` folder of IR files, or a dump root holding several of them.

Files are found by the stage their name states (``step_parallel_end``), never by the numbers
MindSpore puts in names. MindSpore writes its IR files read-only; nothing here writes beside them.
"""
from __future__ import annotations

import os
import re
import stat
import sys
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from msinspect.errors import DumpNotFoundError, IRReadError, MsInspectError, check_path
from msinspect.executors import run_each
from msinspect.model import IRFile
from msinspect.ranks_text import ranks_text
from msinspect.stages import PREFERRED_STAGES, is_ir_file, stage_of

_RANK_DIR = re.compile(r"^rank_(\d+)$")
#: Folders below a rank's folder that are not ranks of their own: ``actor_set`` holds runtime
#: actor listings (not graph IR); ``verbose_ir_files`` holds verbose copies of the backend passes
#: of the rank above it (name the folder itself to read them).
NOT_GRAPH_IR = frozenset({"actor_set", "verbose_ir_files"})
_SEQ = re.compile(r"_(\d+)\.ir(?:\.gz)?$")


def _dump_order(path: Path | str) -> tuple[int, str]:
    """Order files (paths or names) as MindSpore wrote them (its sequence number), for ties
    between stages."""
    name = path if isinstance(path, str) else path.name
    match = _SEQ.search(name)
    return (int(match.group(1)) if match else -1, name)


class DuplicateRanksError(MsInspectError):
    """Two folders under one dump root hold the same rank (a run copied twice, a scrubbed copy
    inside the dump): the dump is ambiguous, so nothing is merged."""


class SeveralRunsError(DuplicateRanksError):
    """The folder holds several runs (``runs/``, the model zoo): the analyses read one job, so
    nothing is merged; the message lists every run found with its folder and rank count."""


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A folder or IR file of a dump that could not be read, and why."""

    path: Path
    """The folder or file."""
    reason: str
    """Why, in words (``Permission denied``, ``a link to x that leads nowhere`` ...)."""
    rank: int | None = None
    """The rank it belongs to, when its path says (``rank_N``)."""

    def format(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(slots=True)
class RankDump:
    """The IR files of one rank (one ``rank_N/`` folder, or one loose folder or file). Made by
    :meth:`at`, from the folder (or file) as text."""

    parent: str
    """The folder holding the rank's folder (or file), as text; one string for the ranks it holds."""
    rank: int | None
    """N of ``rank_N``; None when the folder does not say."""
    names: tuple[str, ...] = ()
    """The names of every readable ``.ir`` / ``.ir.gz`` file, in MindSpore's writing order, in
    :attr:`path` (or beside it, for a rank that is one file): names, not paths, since a dump of
    10,000 ranks writing 100 stages each holds a million (:attr:`files` makes the paths)."""
    unreadable: tuple[Unreadable, ...] = ()
    """IR files of this rank that cannot be read (a link leading nowhere or in a loop, no
    permission, not a regular file): never silently left out, see :func:`load_dump`."""
    single: bool = False
    """Whether :attr:`path` is the rank's one file, not its folder."""
    name: str | None = None
    """The folder's (or file's) own name; None where it is ``rank_N`` of :attr:`rank`, made on
    access (:attr:`where`): a dump of 10,000 ranks holds no string of its own for each."""

    @classmethod
    def at(cls, where: str, rank: int | None, names: tuple[str, ...] = (), unreadable: tuple[Unreadable, ...] = (),
           single: bool = False, parents: dict | None = None) -> RankDump:
        """The rank whose folder (or file) is ``where`` (text); ``parents``: the parent folders of
        the ranks made before, each kept once."""
        parent, name = os.path.split(where)
        if os.path.join(parent, name) != where:  # not written back the same: held whole
            parent, name = "", where
        if parents is not None:
            parent = parents.setdefault(parent, parent)
        return cls(parent, rank, names, unreadable, single,
                   None if rank is not None and name == rank_folder(rank) else name)

    @property
    def where(self) -> str:
        """The folder (or the single file) the files come from, as text (:attr:`path`: as a path)."""
        return os.path.join(self.parent, self.name if self.name is not None else rank_folder(self.rank))

    @property
    def path(self) -> Path:
        """The folder (or the single file) the files come from."""
        return Path(self.where)

    @property
    def files(self) -> list[Path]:
        """Every readable ``.ir`` / ``.ir.gz`` file, in MindSpore's writing order."""
        return [self._file(name) for name in self.names]

    def _file(self, name: str) -> Path:
        """The path of the file of that name."""
        return self.path if self.single else Path(self.where, name)

    @property
    def label(self) -> str:
        """``rank_3``, or the folder name."""
        return rank_folder(self.rank) if self.rank is not None else self.path.name

    def stages(self) -> list[str]:
        """The stages present, in writing order, each once."""
        return list(dict.fromkeys(stage_of(name) for name in self.names))

    def stage_files(self, stage: str) -> list[Path]:
        """Files of that stage, oldest first (a stage can be written once per compiled graph)."""
        return [self._file(name) for name in self.names if stage_of(name) == stage]

    def file_name(self, stage: str) -> str | None:
        """The name of the newest file of that stage; None if there is none."""
        found = [name for name in self.names if stage_of(name) == stage]
        return found[-1] if found else None

    def file_text(self, stage: str) -> str | None:
        """The newest file of that stage as text (no path made: see :func:`_rank_dump`); None if
        there is none."""
        name = self.file_name(stage)
        if name is None:
            return None
        return self.where if self.single else os.path.join(self.where, name)

    def file(self, stage: str) -> Path:
        """The newest file of that stage; :class:`DumpNotFoundError` if there is none."""
        found = self.stage_files(stage)
        if not found:
            have = ", ".join(self.stages()) or "no IR files"
            raise DumpNotFoundError(f"{self.path}: no '{stage}' IR file (stages present: {have})")
        return found[-1]

    def load(self, stage: str, *, lenient: bool = False) -> IRFile:
        """Parse the newest file of that stage."""
        from msinspect.parser import parse_file

        return parse_file(self.file(stage), lenient=lenient)

    def node(self, name: str, stage: str | None = None):
        """The operator with that instance name (or ``scope/name`` selector) in the ``stage`` file,
        by default the stage the analyses read (``validate``, else ``step_parallel_end`` ...)."""
        from msinspect.analysis.dataflow.node_facts import matches
        from msinspect.parser import parse_file

        ir = parse_file(pick_file(self, stage))
        if "/" not in name:
            return ir.node(name)
        for node in ir.nodes():
            if node.index is not None and matches(node, name):
                return node
        raise KeyError(f"no node matching {name!r} in {ir.path}")


def pick_file(rank: RankDump, stage: str | None) -> Path:
    """The file of ``stage``, or of the first of :data:`~msinspect.stages.PREFERRED_STAGES` the
    rank has, else its newest file."""
    if stage:
        return rank.file(stage)
    have = rank.stages()
    for candidate in PREFERRED_STAGES:
        if candidate in have:
            return rank.file(candidate)
    if not rank.files:
        raise DumpNotFoundError(f"{rank.path}: no IR files")
    return rank.files[-1]


@dataclass
class Dump:
    """A dump root: every rank found under one path."""

    path: Path
    """What the user named."""
    ranks: list[RankDump]
    """Ranks in rank order (folders without a rank number last)."""
    unreadable: list[Unreadable] = field(default_factory=list)
    """Folders under the root that could not be listed, and ``rank_N`` entries that are not
    folders one can read (a link leading nowhere or in a loop): ranks the dump has but which
    cannot be read."""

    def problems(self) -> list[Unreadable]:
        """Every folder and IR file of the dump that could not be read."""
        return self.unreadable + [u for r in self.ranks for u in r.unreadable]

    def rank(self, rank: int) -> RankDump:
        """The dump of one rank; :class:`DumpNotFoundError` if absent."""
        for item in self.ranks:
            if item.rank == rank:
                return item
        have = ", ".join(r.label for r in self.ranks)
        raise DumpNotFoundError(f"{self.path}: no rank_{rank} (found: {have})")

    def files(self, stage: str | None = None) -> list[Path]:
        """All files, or those of one stage (newest per rank), across ranks."""
        if stage is None:
            return [f for r in self.ranks for f in r.files]
        return [r.file(stage) for r in self.ranks if r.stage_files(stage)]

    def node(self, name: str, rank: int | None = None, stage: str | None = None):
        """The operator named ``name`` on ``rank`` (default: the first rank)."""
        target = self.rank(rank) if rank is not None else self.ranks[0]
        return target.node(name, stage)


def _why_unreadable(path: Path | str) -> str | None:
    """None when ``path`` is a regular file one can read, else why not."""
    try:
        info = os.stat(path)
    except OSError as error:
        if os.path.islink(path):
            return f"a link to {os.readlink(path)} that cannot be followed ({error.strerror})"
        return error.strerror or str(error)
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if not os.access(path, os.R_OK):
        return "Permission denied"
    return None


def _as_pathlib_writes(folder: str) -> str:
    """``folder`` (as :func:`os.walk` gives it) as pathlib writes it (``./rank_0``: ``rank_0``),
    made a path only where the two differ."""
    parts = folder.split(os.sep)
    if "." in parts[1:] or "" in parts[1:] or (parts[0] == "." and len(parts) > 1):
        return str(Path(folder))
    return folder


def _rank_dump(folder: str, names: list[str], same: dict) -> RankDump:
    """The rank of the folder ``folder`` (text: a path per rank of 10,000 puts each ``rank_N`` in
    pathlib's interned names for good) holding ``names``; ``same``: the name tuples and parent
    folders of the ranks before, each kept once (every rank writes the same names)."""
    rank = rank_of_name(os.path.basename(folder))
    files, unreadable = [], []
    for name in names:
        if not is_ir_file(name):
            continue
        why = _why_unreadable(os.path.join(folder, name))
        if why is None:
            files.append(sys.intern(name))  # every rank writes the same names: one string each
        else:
            unreadable.append(Unreadable(Path(folder, name), why, rank))
    files = tuple(sorted(files, key=_dump_order))
    return RankDump.at(folder, rank, same.setdefault(files, files),
                       tuple(sorted(unreadable, key=lambda u: _dump_order(u.path))), parents=same)


def load_dump(path: str | os.PathLike, *, one_job: bool = True) -> Dump:
    """Find the IR files under ``path``: one file, a ``rank_N/`` folder, a folder of IR files, or a
    root with ``rank_N/`` folders at any depth. :class:`DumpNotFoundError` when there are none.

    Nothing is left out without a word: folders that cannot be listed, ``rank_N`` entries that
    are links leading nowhere, and IR files that cannot be read are kept in
    :attr:`Dump.unreadable` / :attr:`RankDump.unreadable`. Links to folders are followed (once
    each). ``one_job`` (what the analyses need): the path is one job's dump, and two folders
    holding the same rank raise :class:`DuplicateRanksError`; without it (``parse``, which reads
    files, not ranks) any folders of IR files are found, several runs included.
    """
    check_path(path)
    root = Path(path)
    if not root.exists():
        if root.is_symlink():
            raise DumpNotFoundError(f"{root}: a link to {os.readlink(root)}, which cannot be followed")
        raise DumpNotFoundError(f"{root}: no such file or folder")
    if root.is_file():
        if not is_ir_file(root):
            raise DumpNotFoundError(f"{root}: not an IR file (expected a name ending in .ir or .ir.gz)")
        why = _why_unreadable(root)
        if why:
            raise IRReadError(path=str(root), line=0, column=0, message=f"cannot read: {why}")
        return Dump(root, [RankDump.at(str(root), _rank_of(root.parent), (root.name,), single=True)])
    ranks: list[RankDump] = []
    unreadable: list[Unreadable] = []
    seen: set[str] = set()
    same: dict = {}

    def cannot_list(error: OSError) -> None:
        folder = Path(error.filename)
        unreadable.append(Unreadable(folder, f"cannot be read: {error.strerror or error}", _rank_of(folder)))

    for folder, dirs, names in os.walk(root, onerror=cannot_list, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a link back to a folder already read: read once
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d not in NOT_GRAPH_IR)
        for name in names:  # a rank_N that is not a folder: a link leading nowhere, or in a loop
            if not _RANK_DIR.match(name) or is_ir_file(name):
                continue
            entry = Path(folder, name)
            if entry.is_symlink() or not entry.is_file():
                unreadable.append(Unreadable(entry, _why_unreadable(entry) or "not a folder", _rank_of(entry)))
        if any(is_ir_file(n) for n in names):
            ranks.append(_rank_dump(_as_pathlib_writes(folder), names, same))
    if not ranks:
        if unreadable:
            raise DumpNotFoundError(f"{root}: no IR file could be read:\n  "
                                    + "\n  ".join(u.format() for u in unreadable))
        raise DumpNotFoundError(
            f"{root}: no MindSpore IR files (.ir or .ir.gz) here or below; "
            "dumps are written with MS_DEV_SAVE_GRAPHS=2 into MS_DEV_SAVE_GRAPHS_PATH/rank_N/")
    ranks.sort(key=lambda r: (r.rank is None, r.rank if r.rank is not None else 0, r.where))
    dump = Dump(root, ranks, sorted(unreadable, key=lambda u: str(u.path)))
    if one_job:
        _refuse_several_runs(dump)
    return dump


@dataclass(frozen=True)
class Run:
    """One run found under a folder: the folder holding its ``rank_N/`` folders (or a folder of IR
    files without a rank number, a run of its own)."""

    path: Path
    ranks: tuple[int | None, ...]
    """The rank numbers found there (None for a folder of IR files without one)."""

    def format(self) -> str:
        if self.ranks == (None,):
            return f"{self.path} (IR files, no rank folders)"
        return f"{self.path} ({len(self.ranks)} rank(s): {ranks_text(self.ranks)})"


def runs_of(dump: Dump) -> list[Run]:
    """The runs under the dump, in path order: the ``rank_N`` folders found, grouped by the folder
    that holds them (one run writes every ``rank_N/`` into one folder), and each folder of IR
    files without a rank number. One entry for a dump of one job."""
    by_parent: dict[Path, list[int | None]] = {}
    loose: list[Path] = []
    parents: dict[str, Path] = {}  # one path a parent folder, not one a rank (text: see _rank_dump)
    for rank in dump.ranks:
        if rank.rank is None:
            loose.append(rank.path)
        else:
            parent = rank.parent
            if parent not in parents:
                parents[parent] = Path(parent)
            by_parent.setdefault(parents[parent], []).append(rank.rank)
    for item in dump.unreadable:  # a rank_N that cannot be read still belongs to its run
        if item.rank is not None and item.path.parent in by_parent:
            by_parent[item.path.parent].append(item.rank)
    runs = [Run(folder, tuple(sorted(set(ranks)))) for folder, ranks in by_parent.items()]
    runs += [Run(folder, (None,)) for folder in loose if folder not in by_parent]
    return sorted(runs, key=lambda r: str(r.path))


def _refuse_several_runs(dump: Dump) -> None:
    """:class:`SeveralRunsError` listing the runs when the dump holds more than one (or holds a
    rank twice in one place, which no single run does)."""
    runs = runs_of(dump)
    if len(runs) > 1:
        listed = "\n  ".join(r.format() for r in runs[:20])
        more = f"\n  ... and {len(runs) - 20} more" if len(runs) > 20 else ""
        raise SeveralRunsError(f"{dump.path}: holds {len(runs)} runs (or a copy of one inside it), and an "
                               f"analysis reads one; name the folder of one run:\n  {listed}{more}")
    _refuse_duplicates(dump)


def duplicate_ranks(dump: Dump) -> str | None:
    """Which ranks the dump holds more than once, and where, in words; None when each once."""
    by_rank: dict[int, list[str]] = {}
    for rank in dump.ranks:
        if rank.rank is not None:
            by_rank.setdefault(rank.rank, []).append(rank.where)
    twice = {n: paths for n, paths in by_rank.items() if len(paths) > 1}
    if not twice:
        return None
    lines = [f"rank {n}: " + " and ".join(str(p) for p in paths) for n, paths in sorted(twice.items())]
    return (f"{dump.path}: holds {len(twice)} rank(s) more than once (two runs, or a copy inside the dump?)"
            ":\n  " + "\n  ".join(lines[:8]) + (f"\n  ... and {len(lines) - 8} more" if len(lines) > 8 else ""))


def _refuse_duplicates(dump: Dump) -> None:
    twice = duplicate_ranks(dump)
    if twice:
        head, _, rest = twice.partition(":\n")
        raise DuplicateRanksError(f"{head}; name the folder of one run:\n{rest}")


def _rank_of(folder: Path) -> int | None:
    return rank_of_name(folder.name)


def rank_folder(rank: int) -> str:
    """``rank_N``: the name of the folder MindSpore writes rank N's files in, and the rank's label."""
    return f"rank_{rank}"


def rank_of_name(name: str) -> int | None:
    """N of a folder (or label) named ``rank_N``; None for any other name."""
    match = _RANK_DIR.match(name)
    return int(match.group(1)) if match else None


def parse_many(paths: Iterable[Path], *, lenient: bool = False, jobs: int | None = None,
               progress: Callable[[Path], None] | None = None, scheduler: str | None = None) -> list[IRFile]:
    """Parse files in a process pool (``jobs`` workers, default: every core), or on the Dask
    cluster of ``scheduler`` (see :mod:`msinspect.executors`); results in input order,
    ``progress(path)`` called as each file's arrives.

    In strict mode the first :class:`~msinspect.errors.IRParseError` to arrive is raised; it names
    its file (msinspect's errors pickle back from the workers whole).
    """
    from msinspect.parser import parse_file  # Lark is loaded when something is parsed

    paths = list(paths)
    results: list[IRFile | None] = [None] * len(paths)
    with closing(run_each(parse_file, [(p,) for p in paths], jobs=jobs, scheduler=scheduler,
                          lenient=lenient)) as outcomes:
        for index, (path,), outcome in outcomes:
            if isinstance(outcome, MsInspectError):
                raise outcome
            results[index] = outcome
            if progress:
                progress(path)
    return results
