"""Communication groups by name: which ranks a group holds when the operator that uses it does
not say, and when a rank list it does state cannot be its own.

A group's name often says which ranks it holds, and can be checked against a candidate list:

- MindSpore names the groups its parallel pass creates ``"{size}-{hash}"``, the hash being
  ``std::hash<std::string>`` of the sorted ranks joined by ``-`` (``DeviceManager::
  GenerateGroupNameByRanks`` and ``HashName`` in ``mindspore/ccsrc/frontend/parallel/
  device_manager.cc``): ``"4-6301172352641561019"`` is ranks 0-3. On Linux (GCC's libstdc++) that
  hash is ``_Hash_bytes``, MurmurHash2 64-bit with seed ``0xc70f6907`` (:func:`std_hash`);
  a name made by another C++ library simply matches no candidate here ("cannot tell", never a
  wrong list). The pipeline-interleave pass adds ``Send`` to such a name for its stage group
  (``PipelineInterleave::CreateSendReceiveGroup``).
- MindFormers' MoE names its groups ``sha256("-".join(ranks)).hexdigest()[:48]`` (the token
  dispatcher's ``_ep_group``, the MoE utilities' ``get_group``): :func:`sha256_name`. MindSpore
  2.10 names some groups so too, with a suffix (zoo 13's pipeline-interleave stage group of ranks
  0 and 4 is ``"7e492b9f...db537Send"``, its global-norm group ``"7e492b9f...db537"``).

A rank list is never taken when it contradicts what the operator states of its group: its size
(``rank_size`` / ``dev_num``: MindSpore's comm-op reuse pass can write the whole world as
``rank_list`` / ``group_rank_ids`` of a group of 4), the rank itself (a rank is in every group it
communicates in), or a sha256 name it does not hash to.
"""
from __future__ import annotations

import hashlib
import re
from typing import Iterable

_MASK = (1 << 64) - 1
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
_SEED = 0xC70F6907

#: MindSpore's ``{size}-{std::hash}`` group names, with the suffix some passes add (``Send``).
_MINDSPORE_NAME = re.compile(r"^(\d+)-(\d{1,20})([A-Za-z_]*)$")
#: sha256 group names: the first 48 hex digits, with the suffix some passes add (``Send``).
_SHA256_NAME = re.compile(r"^([0-9a-f]{48})([A-Za-z_]*)$")
#: The world group's name per backend (``HCCL_WORLD_COMM_GROUP`` ... of
#: ``mindspore/python/mindspore/communication/_comm_helper.py``; ``lccl_world_group`` of Ascend's
#: LCCL), and the ``WORLD_GROUP`` MindSpore's comm-op reuse pass writes.
WORLD_GROUPS = frozenset({"nccl_world_group", "hccl_world_group", "mccl_world_group", "lccl_world_group",
                          "WORLD_GROUP"})


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def std_hash(text: str) -> int:
    """``std::hash<std::string>`` of libstdc++ on a 64-bit machine (``_Hash_bytes`` in
    ``libstdc++-v3/libsupc++/hash_bytes.cc``: MurmurHash2 64, seed ``0xc70f6907``)."""
    data = text.encode()
    length = len(data)
    aligned = length & ~7
    value = (_SEED ^ (length * _MUL)) & _MASK
    for start in range(0, aligned, 8):
        block = int.from_bytes(data[start:start + 8], "little")
        block = (_shift_mix((block * _MUL) & _MASK) * _MUL) & _MASK
        value = ((value ^ block) * _MUL) & _MASK
    if length & 7:
        value = ((value ^ int.from_bytes(data[aligned:], "little")) * _MUL) & _MASK
    value = (_shift_mix(value) * _MUL) & _MASK
    return _shift_mix(value)


def mindspore_name(ranks: Iterable[int], suffix: str = "") -> str:
    """The name MindSpore's parallel pass gives the group of ``ranks`` (sorted first)."""
    ordered = sorted(ranks)
    return f"{len(ordered)}-{std_hash('-'.join(str(r) for r in ordered))}{suffix}"


def sha256_name(ranks: Iterable[int]) -> str:
    """The name MindFormers gives the group of ``ranks``, in the order given."""
    return hashlib.sha256("-".join(str(r) for r in ranks).encode()).hexdigest()[:48]


def is_mindspore_name(name) -> bool:
    """Whether ``name`` has the form of a name MindSpore's parallel pass made from a rank list:
    such a name stands for one rank list on every rank of the job."""
    return isinstance(name, str) and _MINDSPORE_NAME.match(name) is not None


def is_sha256_name(name) -> bool:
    """Whether ``name`` has the form of MindFormers' sha256 group names."""
    return isinstance(name, str) and _SHA256_NAME.match(name) is not None


def is_hash_name(name) -> bool:
    """Whether ``name`` has one of the forms made from a rank list (MindSpore's or MindFormers'):
    the names :func:`names_ranks` can check."""
    return is_mindspore_name(name) or is_sha256_name(name)


def names_ranks(name, ranks: tuple[int, ...]) -> bool | None:
    """Whether the group name is the one made from ``ranks``: True, False, or None where the name
    is of no form that can be checked (a user's own name, the world group ...)."""
    match = _SHA256_NAME.match(name) if isinstance(name, str) else None
    if match is not None:
        return match.group(1) in (sha256_name(ranks), sha256_name(sorted(ranks)))
    match = _MINDSPORE_NAME.match(name) if isinstance(name, str) else None
    if match is not None:
        return mindspore_name(ranks, match.group(3)) == name
    return None


def stated_size(name) -> int | None:
    """The size a MindSpore group name states (``4`` of ``"4-6301172352641561019"``)."""
    match = _MINDSPORE_NAME.match(name) if isinstance(name, str) else None
    return int(match.group(1)) if match is not None else None


def fits(ranks: tuple[int, ...] | None, *, size: int | None = None, rank: int | None = None,
         name=None) -> bool:
    """Whether ``ranks`` can be the group's rank list: as many as the group's size where stated,
    holding the rank that uses the group where known, no repeats, and, for a sha256 name (whose
    hash does not depend on the C++ library MindSpore was built with), the list it names."""
    if not ranks or len(set(ranks)) != len(ranks):
        return False
    if size is not None and len(ranks) != size:
        return False
    if rank is not None and rank not in ranks:
        return False
    return not (is_sha256_name(name) and names_ranks(name, ranks) is False)


def strided_candidates(rank: int, size: int, world: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
    """Rank lists of ``size`` ranks of ``world`` holding ``rank`` at a constant stride: how
    MindSpore's device matrices cut a stage (a group is the ranks that differ along one axis),
    tried against a group's name by :func:`resolve`."""
    if size < 1 or not world:
        return
    first, last = min(world), max(world)
    present = set(world)
    if size == 1:
        yield (rank,)
        return
    for stride in range(1, (last - first) // (size - 1) + 1):
        for position in range(size):
            start = rank - position * stride
            ranks = tuple(start + i * stride for i in range(size))
            if present.issuperset(ranks):
                yield ranks


def matching(name, candidates: Iterable[tuple[int, ...]], *, size: int | None = None) -> set[tuple[int, ...]]:
    """The candidate rank lists the group's name is made from that can be the group's (its size
    where stated, no repeats: :func:`fits`, whatever rank asks); empty when the name is of no
    checkable form. A MindSpore name states its size, and a list of another size hashes to another
    name."""
    if not is_hash_name(name):
        return set()
    return {tuple(c) for c in candidates if fits(tuple(c), size=size) and names_ranks(name, tuple(c))}


def resolve(name, candidates: Iterable[tuple[int, ...]], *, size: int | None = None,
            rank: int | None = None) -> tuple[int, ...] | None:
    """The one candidate rank list the group's name hashes to and that fits (:func:`fits`); None
    when the name is of no checkable form, or no candidate (or more than one) matches."""
    found = {c for c in matching(name, candidates, size=size) if rank is None or rank in c}
    return found.pop() if len(found) == 1 else None


#: How many names :class:`StridedSearch` keeps what it learnt of (past that it starts again).
LEARNT = 1 << 14


class StridedSearch:
    """The strided rank list a group's name hashes to, searched once per name.

    A rank is in every group it communicates in, so the list a name stands for holds every rank
    that uses it: where a search among the strided lists holding one such rank finds none, the
    name's list is not strided and no other rank's search would find it; where it finds one, it
    is every rank's. What a name's search found (a list, or None: "cannot tell") is therefore
    kept for the name, not per rank: a search hashes some two lists a rank of the world, and a
    job names each of its groups on every rank of it. What is learnt of a name holds for any job of that world: the name
    is the hash of one list."""

    def __init__(self) -> None:
        self.learnt: dict[tuple, tuple[int, ...] | None] = {}
        self.searches = 0
        """How many names were searched (a name's later ranks read what was learnt)."""

    def find(self, name: str, size: int, rank: int, world: tuple[int, ...]) -> tuple[int, ...] | None:
        """:func:`resolve` of ``name`` against the strided lists of ``world`` holding ``rank``
        (:func:`strided_candidates`), from what was learnt of the name where it was searched."""
        if not is_hash_name(name):
            return None
        key = (name, size, world)
        if key in self.learnt:
            found = self.learnt[key]
        else:
            self.searches += 1
            found = _search(name, size, rank, world)
            if len(self.learnt) >= LEARNT:
                self.learnt.clear()
            self.learnt[key] = found
        return found if found is not None and rank in found else None  # a list of the name's, of size ranks


def _search(name: str, size: int, rank: int, world: tuple[int, ...]) -> tuple[int, ...] | None:
    """The one strided list of ``size`` ranks of ``world`` holding ``rank`` that ``name`` is made
    from (None: none, or several). The lists come in ascending order (a positive stride), so the
    name's hash is compared with each list's text's, made once; no list is built as a name."""
    sha = _SHA256_NAME.match(name)
    if sha is not None:
        target = sha.group(1)

        def made(text: str) -> bool:
            return hashlib.sha256(text.encode()).hexdigest()[:48] == target
    else:
        match = _MINDSPORE_NAME.match(name)
        if int(match.group(1)) != size:
            return None
        target_hash = int(match.group(2))

        def made(text: str) -> bool:
            return std_hash(text) == target_hash
    found = [ranks for ranks in strided_candidates(rank, size, world) if made("-".join(map(str, ranks)))]
    return found[0] if len(found) == 1 else None


#: The search of this process (each worker learns on its own).
_STRIDED = StridedSearch()


def resolve_strided(name: str, size: int, rank: int, world: tuple[int, ...]) -> tuple[int, ...] | None:
    """:func:`resolve` against the strided lists of ``world`` holding ``rank``
    (:func:`strided_candidates`), searched once per name (:class:`StridedSearch`)."""
    return _STRIDED.find(name, size, rank, world)
