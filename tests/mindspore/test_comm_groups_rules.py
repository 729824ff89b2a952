"""The rules of :mod:`msinspect.mindspore.comm_groups`, each on the group names real dumps write.

MindSpore names a group of its parallel pass ``"{size}-{std::hash(sorted ranks joined by '-')}"``
(``DeviceManager::GenerateGroupNameByRanks`` / ``HashName`` in
``mindspore/ccsrc/frontend/parallel/device_manager.cc``; libstdc++'s ``std::hash<std::string>`` is
``_Hash_bytes``, MurmurHash2 64 over 8-byte blocks, then the tail); MindFormers names its MoE
groups ``sha256("-".join(ranks)).hexdigest()[:48]`` (``FFN._get_ep_group_name``). A rank is in
every group it communicates in, so a list without the asking rank is never its group.

The ranks are worked out by hand from the nets' docstrings:

- zoo 16 (fixtures/zoo/nets/16_mf_llama_256.py): dp 32 x mp 8 on 256 ranks, rank = dp_index * 8 +
  mp_index; rank r's tensor-parallel group is 8 * (r // 8) .. + 7, its data-parallel group the 32
  ranks with r's r % 8: rank 131's are 128..135 and 3, 11, ..., 251.
- zoo 15 (fixtures/zoo/nets/15_mf_llama_moe_ep8.py): 8 ranks, expert parallel 4: the expert group of
  rank r is ``r // 4 * 4`` .. + 3, {0, 1, 2, 3} for rank 0, named by sha256.
- zoo 01 (dp 2 x tp 4): rank 0's tensor-parallel group 0-3 is ``"4-6301172352641561019"``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from msinspect.mindspore import comm_groups
from msinspect.mindspore.comm_groups import (StridedSearch, fits, is_hash_name, is_mindspore_name,
                                             is_sha256_name, matching, mindspore_name, names_ranks, resolve,
                                             resolve_strided, stated_size, strided_candidates)
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
WORLD8 = tuple(range(8))
WORLD256 = tuple(range(256))
#: Zoo 01's tensor-parallel group of ranks 0-3 (every rank-0 file writes it with its ranks).
TP0 = "4-6301172352641561019"


def _written(path: Path, op: str | None = None) -> dict[str, str | None]:
    """Group name -> the ``group_ranks`` text the file writes with it (None: none), of every
    operator (of type ``op``) naming a group."""
    found: dict[str, str | None] = {}
    for node in parse_file(path).nodes():
        name = node.primitive_attrs.get("group")
        if isinstance(name, str) and (op is None or node.op == op):
            text = node.primitive_attrs.get("group_ranks")
            found[name] = found.get(name) or (text if isinstance(text, str) else None)
    return found


@pytest.fixture(scope="module")
def zoo16() -> dict[int, dict[str, str | None]]:
    return {rank: _written(next((ZOO / "16_mf_llama_256" / f"rank_{rank}").glob("step_parallel_end_*.ir.gz")))
            for rank in (0, 131, 255)}


@pytest.fixture(scope="module")
def expert_group() -> str:
    """The group zoo 15's rank 0 dispatches tokens over (its AlltoAll's, after the Morph is
    expanded at validate)."""
    names = _written(next((ZOO / "15_mf_llama_moe_ep8" / "rank_0").glob("*_validate_*.ir.gz")), "AlltoAll")
    assert len(names) == 1
    return next(iter(names))


def _tp(rank: int) -> tuple[int, ...]:
    return tuple(range(rank // 8 * 8, rank // 8 * 8 + 8))


def _dp(rank: int) -> tuple[int, ...]:
    return tuple(range(rank % 8, 256, 8))


@pytest.mark.parametrize("rank", [0, 131, 255])
def test_zoo16_names_are_the_hash_of_the_ranks_they_write(zoo16, rank):
    """Each rank's two groups, with the ranks the file writes, are the hand-derived tp and dp
    groups, named by the std::hash of their text: the dp group's text (``3-11-...-251``, 110 bytes
    and more) runs over many of _Hash_bytes' 8-byte blocks, the tp group's ``0-1-...-7`` (15 bytes)
    over one block and a tail of 7."""
    written = {name: text for name, text in zoo16[rank].items() if is_mindspore_name(name)}
    ranks = {name: tuple(int(r) for r in text.split("-")) for name, text in written.items()}
    assert sorted(ranks.values(), key=len) == [_tp(rank), _dp(rank)]
    for name, listed in ranks.items():
        assert mindspore_name(listed) == name
        assert names_ranks(name, listed) is True
        assert stated_size(name) == len(listed)


@pytest.mark.parametrize("rank", [0, 131, 255])
def test_zoo16_a_name_alone_finds_its_strided_list(zoo16, rank):
    """Named only by its hash, each group is found among the strided lists of the 256 ranks
    holding the rank (the dp group at stride 8, the tp group at stride 1); another rank's name is
    no list holding this rank ("cannot tell")."""
    search = StridedSearch()
    for name in zoo16[rank]:
        if is_mindspore_name(name):
            size = stated_size(name)
            assert search.find(name, size, rank, WORLD256) == (_tp(rank) if size == 8 else _dp(rank))
    other = next(name for name in zoo16[0] if stated_size(name) == 32)  # 0, 8, ..., 248
    assert search.find(other, 32, 131, WORLD256) is None


def test_zoo15_the_expert_group_is_named_by_sha256(expert_group):
    """Zoo 15's expert group of rank 0 is {0, 1, 2, 3}, named by MindFormers' sha256 form (48
    hex digits), which states no size."""
    assert is_sha256_name(expert_group) and not is_mindspore_name(expert_group) and is_hash_name(expert_group)
    assert stated_size(expert_group) is None
    assert names_ranks(expert_group, (0, 1, 2, 3)) is True
    assert names_ranks(expert_group, (4, 5, 6, 7)) is False
    assert fits((0, 1, 2, 3), size=4, rank=0, name=expert_group)
    assert not fits((4, 5, 6, 7), size=4, name=expert_group)  # a list the name is not made from
    assert matching(expert_group, [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 2)]) == {(0, 1, 2, 3)}
    assert resolve(expert_group, [(4, 5, 6, 7), (0, 1, 2, 3)], rank=0) == (0, 1, 2, 3)
    assert resolve(expert_group, [(4, 5, 6, 7), (0, 1, 2, 3)], rank=5) is None  # rank 5 is not in it


def test_zoo15_the_expert_group_is_searched_once(expert_group):
    """The strided lists of 4 of the 8 ranks holding rank 0 or 2 include {0, 1, 2, 3} (stride 1),
    whose sha256 is the name; ranks 0 to 3 read what the first search found; rank 5, not in it,
    gets None."""
    search = StridedSearch()
    assert search.find(expert_group, 4, 0, WORLD8) == (0, 1, 2, 3)
    assert [search.find(expert_group, 4, r, WORLD8) for r in (1, 2, 3)] == [(0, 1, 2, 3)] * 3
    assert search.searches == 1
    assert search.find(expert_group, 4, 5, WORLD8) is None


def test_a_search_counts_each_name_and_keeps_at_most_learnt(monkeypatch):
    """Every new name is one search; past :data:`comm_groups.LEARNT` names what was learnt starts
    again (a bound on memory, whatever the job's size)."""
    monkeypatch.setattr(comm_groups, "LEARNT", 2)
    search = StridedSearch()
    names = [mindspore_name(ranks) for ranks in ((0, 1), (2, 3), (4, 5))]
    assert search.find(names[0], 2, 0, WORLD8) == (0, 1)
    assert search.find(names[1], 2, 2, WORLD8) == (2, 3)
    assert search.searches == 2
    assert len(search.learnt) == 2
    assert search.find(names[2], 2, 4, WORLD8) == (4, 5)  # the third: the first two are forgotten
    assert search.searches == 3
    assert len(search.learnt) == 1


def test_the_process_search_answers_the_asking_rank():
    """:func:`resolve_strided`: the group of ranks 1 and 5 (stride 4 of 8 ranks), named by
    MindSpore, is found from rank 5, and is no group of rank 2's."""
    name = mindspore_name((5, 1))
    assert name == f"2-{comm_groups.std_hash('1-5')}"  # sorted before hashing
    assert resolve_strided(name, 2, 5, WORLD8) == (1, 5)
    assert resolve_strided(name, 2, 2, WORLD8) is None


@pytest.mark.parametrize("ranks, kwargs, can", [
    ((), {}, False),                           # no ranks: no group
    ((0, 0, 1, 2), {}, False),                 # a rank twice
    ((0, 1, 2, 3), {}, True),
    ((0, 1, 2, 3), {"size": 4, "rank": 2}, True),
    ((0, 1, 2, 3), {"size": 2}, False),        # the operator states a group of 2
    ((0, 1, 2, 3), {"rank": 5}, False),        # rank 5 cannot use a group it is not in
    ((0, 1, 2, 3), {"name": TP0}, True),       # a MindSpore name is not checked here (another C++ library)
])
def test_what_can_be_a_groups_list(ranks, kwargs, can):
    assert fits(ranks, **kwargs) is can


def test_a_stated_size_against_the_names():
    """The operator's ``rank_size`` is 2 where the name says 4 (0-3): no list is both; without a
    stated size, the name's own (its ``4-``) holds, and a list of another size hashes to another
    name."""
    candidates = [(0, 1, 2, 3), (0, 1), (0, 1, 2, 3, 4, 5, 6, 7)]
    assert matching(TP0, candidates, size=2) == set()
    assert matching(TP0, candidates, size=4) == {(0, 1, 2, 3)}
    assert matching(TP0, candidates) == {(0, 1, 2, 3)}
    assert resolve(TP0, candidates) == (0, 1, 2, 3)  # no rank asks: the one list
    assert resolve(TP0, candidates, size=2) is None
    assert resolve(TP0, candidates, rank=3) == (0, 1, 2, 3)
    assert resolve(TP0, candidates, rank=4) is None


@pytest.mark.parametrize("name", [None, 4, "nccl_world_group", "hccl_world_group", "my_group", "4-", "x-63"])
def test_names_of_no_checkable_form(name):
    """The world group, a user's own name, a non-string: nothing to check, and nothing resolved
    ("cannot tell"), never an error."""
    assert not is_mindspore_name(name) and not is_sha256_name(name) and not is_hash_name(name)
    assert names_ranks(name, (0, 1, 2, 3)) is None
    assert stated_size(name) is None
    assert matching(name, [(0, 1, 2, 3)]) == set()
    assert resolve(name, [(0, 1, 2, 3)]) is None
    assert StridedSearch().find(name, 4, 0, WORLD8) is None


def test_a_suffixed_name_keeps_its_form():
    """The pipeline-interleave pass adds ``Send`` to a stage group's name
    (``PipelineInterleave::CreateSendReceiveGroup``): still MindSpore's form, the suffix kept in
    the name made from the ranks."""
    assert is_mindspore_name(TP0 + "Send")
    assert names_ranks(TP0 + "Send", (0, 1, 2, 3)) is True
    assert names_ranks(TP0 + "Send", (0, 1, 2, 4)) is False


@pytest.mark.parametrize("rank, size, world, lists", [
    # stride 1: (5, 6) and (4, 5); stride 2: (5, 7), (3, 5); stride 3 to 5: only the lists ending at
    # 5 stay inside 0..7; strides 6 and 7 leave it both ways
    (5, 2, WORLD8, [(5, 6), (4, 5), (5, 7), (3, 5), (2, 5), (1, 5), (0, 5)]),
    # a world of ranks 8..11 (first 8): strides 1 to (11 - 8) / 1 = 3
    (9, 2, (8, 9, 10, 11), [(9, 10), (8, 9), (9, 11)]),
    # a world without rank 3: the lists through it are dropped
    (2, 3, (0, 1, 2, 4, 5, 6), [(0, 1, 2), (2, 4, 6), (0, 2, 4)]),
    (3, 1, WORLD8, [(3,)]),   # a group of one: the rank itself
    (3, 0, WORLD8, []),       # no ranks
    (0, 2, (), []),           # no world
])
def test_strided_candidates(rank, size, world, lists):
    """How a device matrix cuts a stage: the lists of ``size`` ranks at one stride holding the
    rank, smallest stride first, each from the rank's place in it."""
    assert list(strided_candidates(rank, size, world)) == lists
