"""Which ranks form a pipeline stage, told from what each rank's file says of its Send / Receive and
its groups, by MindSpore's rule (where the weights grouping of
:func:`~msinspect.analysis.job.collect.stage_groups` cannot: some ranks only, or weights alike).

MindSpore's rule: ``pipeline_stages`` splits the world into that many equal blocks of consecutive
ranks, in order: with ``n = world / stages`` ranks a stage (``DeviceManager``'s
``stage_device_num``), stage ``s`` is ranks ``s*n .. s*n + n - 1``. A Send / Receive goes to the
rank at the same place in another stage (``PipelineTransformer::InsertSend``: ``dest_rank =
global_rank + (user_stage - stage) * per_stage_rank_num``); every other collective the parallel
pass inserts (the gradient mirrors, the optimizer shards' gathers and scatters, an operator's own
tensor-parallel collectives, redistributions) stays within the stage.

What a file says of its rank ``r`` (:func:`facts_of`, a few ints: :class:`StageFacts`):

- its stage index ``s``: the pipeline-interleave pass writes it on each Send / Receive
  (``cnode_primal_attrs: {stage: I64(s)}``, ``PipelineInterleave::InsertSendReceive``);
- its peers ``d`` (``dst_global_rank`` / ``src_global_rank``, or ``dest_rank`` / ``src_rank`` in
  the world group: :func:`~msinspect.analysis.rank.comm.peer_of`), and where the file says it, a peer's
  stage: ``PipelineTransformer`` writes it as the ``dest_rank`` / ``src_rank`` primal attribute
  (``user_node_stage`` / ``node_stage``), the interleave pass as the stage-relative
  ``dest_rank`` / ``src_rank`` in its stage group;
- the ranks of its in-stage groups (:data:`IN_STAGE_KINDS`; not the AllReduce a global norm
  makes between stages, nor a collective of the user's code or of unknown origin, such as the
  world-group AllReduce of an overflow check or a pipeline's result broadcast).

The stage size ``n`` is then a divisor of the world size ``W`` with ``r // n == s``, every peer
``(d - r) % n == 0`` and ``d // n != s`` (for ``d != r`` the first gives the second), a peer said to
be of stage ``p``: ``d // n == p``, and every group member ``g // n == s``
(:func:`stage_sizes`). A job has one ``n``: the job's is the one every rank allows
(:func:`stages_from_ir`); where several or none are left, the stages cannot be told, and the
answer says why."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import gcd
from typing import NamedTuple

from msinspect.mindspore.comm_groups import WORLD_GROUPS
from msinspect.mindspore.vocabulary import PIPELINE_OPS
from msinspect.rank_lists import compact

#: The kinds of collective the parallel pass keeps within a pipeline stage
#: (:mod:`msinspect.mindspore.vocabulary`): an operator's own (tensor-parallel), redistributions
#: and their gradients, gradient mirrors, optimizer shards.
IN_STAGE_KINDS = frozenset({"forward", "redistribution", "backward", "gradient", "optimizer"})
#: The instance name of the AllReduce the parallel pass adds to a global norm to sum its partial
#: squares *between* stages (over the ranks at one place in every stage): of kind ``forward``, but
#: not in-stage.
BETWEEN_STAGES = "PARALLEL_GLOBALNORM_BETWEEN_STAGES"

#: A fact the file does not state.
UNKNOWN = -1
#: A fact the file states twice, differently (two stages of its own rank): no stage size fits.
SEVERAL = -2


class StageFacts(NamedTuple):
    """What one rank's file says of its pipeline stage, as a few ints (sent from the worker with
    the rank's result, held in columns for many ranks: :mod:`msinspect.analysis.engine.spooled_results`). Enough
    for :func:`stage_sizes`: ``n`` divides every ``d - r`` where it divides their gcd, every group
    member is in the rank's stage where the lowest and highest are, and where the peers are at the
    rank's place in other stages one peer's stage tells the rank's for each ``n``."""

    stage: int
    """The rank's stage index the file states; :data:`UNKNOWN`; :data:`SEVERAL`."""
    step: int
    """The gcd of ``|d - r|`` over the rank's peers ``d``; 0: no peer."""
    peer: int
    """A peer whose stage the file states (the lowest such); :data:`UNKNOWN`: none."""
    peer_stage: int
    """That peer's stage; :data:`SEVERAL` where the file states two (or the peer is the rank)."""
    low: int
    """The lowest rank of the rank's in-stage groups (the rank itself where it has none)."""
    high: int
    """The highest."""


def facts_from(rank: int, stages: Iterable[int], peers: Iterable[int], members: Iterable[Iterable[int]],
               peer_stages: Mapping[int, int] | Iterable[tuple[int, int]] = ()) -> StageFacts:
    """The :class:`StageFacts` of rank ``rank``: the stage indexes its file states of it
    (``stages``), its peers, the rank lists of its in-stage groups (``members``), and peers'
    stages where stated (``peer_stages``: peer -> stage, or ``(peer, stage)`` pairs)."""
    own = set(stages)
    stage = UNKNOWN if not own else own.pop() if len(own) == 1 else SEVERAL
    step = 0
    stated: dict[int, int] = {}
    for peer in peers:
        step = gcd(step, abs(peer - rank))
        if peer == rank:  # never MindSpore's: no stage size fits
            stated[peer] = SEVERAL
    pairs = peer_stages.items() if isinstance(peer_stages, Mapping) else peer_stages
    for peer, stage_of_peer in pairs:
        stated[peer] = stage_of_peer if stated.get(peer, stage_of_peer) == stage_of_peer else SEVERAL
    low = high = rank
    for group in members:
        for member in group:
            low, high = min(low, member), max(high, member)
    peer = min(stated, default=UNKNOWN)
    return StageFacts(stage, step, peer, stated.get(peer, UNKNOWN), low, high)


def stage_sizes(rank: int, world_size: int, facts: StageFacts) -> tuple[int, ...]:
    """Every stage size ``n`` (ascending) that MindSpore's rule (see the module) allows rank
    ``rank`` of a world of ``world_size`` ranks, by what its file says (``facts``): ``n`` divides
    ``world_size``; the rank's stage ``s = rank // n`` is the one the file states; each peer is at
    the rank's place in another stage (``n`` divides ``facts.step``); a peer whose stage the file
    states is in that stage; the rank's in-stage groups are within ``s*n .. s*n + n - 1``."""
    fits = []
    for n in range(1, world_size + 1):
        if world_size % n:
            continue
        s = rank // n
        if facts.stage != UNKNOWN and facts.stage != s:
            continue
        if facts.step and facts.step % n:
            continue
        if facts.peer != UNKNOWN and facts.peer // n != facts.peer_stage:
            continue
        if facts.low // n != s or facts.high // n != s:
            continue
        fits.append(n)
    return tuple(fits)


def facts_of(rank: int | None, comm: list[dict], nodes: Sequence) -> StageFacts | None:
    """The :class:`StageFacts` of a rank from its comm rows (``comm``) and their operators
    (``nodes``, one a row, in order: :func:`~msinspect.analysis.rank.comm.comm_nodes`); None where the
    rank is not known or the file has no Send / Receive (no pipeline)."""
    if rank is None:
        return None
    stages, peers, peer_stages = [], [], []
    for row, node in zip(comm, nodes):
        if row["op"] not in PIPELINE_OPS:
            continue
        stated = _int(node.cnode_primal_attrs.get("stage"))
        if stated is not None:
            stages.append(stated)
        peer = row.get("peer")
        if peer is None:
            continue
        peers.append(peer)
        other = _peer_stage(node)
        if other is not None:
            peer_stages.append((peer, other))
    if not peers and not stages:
        return None
    return facts_from(rank, stages, peers, in_stage_groups(rank, comm), peer_stages)


def with_groups(facts: StageFacts, rank: int, comm: list[dict]) -> StageFacts:
    """``facts`` with its groups told again by ``comm`` (the rank's comm rows, their groups filled
    in once every rank was read: :class:`~msinspect.analysis.job.collect.Gathered`)."""
    low = high = rank
    for group in in_stage_groups(rank, comm):
        low, high = min(low, *group), max(high, *group)
    return facts._replace(low=low, high=high)


def in_stage_groups(rank: int, comm: list[dict]) -> list[tuple[int, ...]]:
    """The rank lists of the rank's collectives that stay within its stage (see the module)."""
    found = set()
    for row in comm:
        ranks = row.get("group_ranks")
        if (row["op"] in PIPELINE_OPS or not row.get("moves_data") or ranks is None or not len(ranks)
                or row.get("kind") not in IN_STAGE_KINDS or (row.get("name") or "").startswith(BETWEEN_STAGES)):
            continue
        ranks = tuple(ranks)
        if rank in ranks:
            found.add(ranks)
    return sorted(found)


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _peer_stage(node) -> int | None:
    """The stage of a Send's or Receive's peer where the file states it: ``PipelineTransformer``'s
    ``dest_rank`` (a Send's) / ``src_rank`` (a Receive's) primal attribute, which its gradient
    keeps (the gradient of a Send is a Receive from the same peer); else the stage-relative
    ``dest_rank`` / ``src_rank`` of the interleave pass's stage group (not the world group, where
    they are global ranks)."""
    send = node.op == "Send"
    keys = ("dest_rank", "src_rank") if send else ("src_rank", "dest_rank")
    for key in keys:
        found = _int(node.cnode_primal_attrs.get(key))
        if found is not None:
            return found
    group = node.primitive_attrs.get("group")
    if isinstance(group, str) and group and group not in WORLD_GROUPS:
        return _int(node.primitive_attrs.get(keys[0]))
    return None


class RankKeys(Mapping):
    """A read-only mapping keyed by ranks, held as a range where they are one (no entry a rank);
    a subclass says what a rank maps to."""

    def __init__(self, ranks: Iterable[int]):
        held = compact(tuple(sorted(set(ranks))))
        self._ranks = held if isinstance(held, range) else frozenset(held)

    def __iter__(self):
        return iter(sorted(self._ranks) if isinstance(self._ranks, frozenset) else self._ranks)

    def __len__(self) -> int:
        return len(self._ranks)


class StageBlocks(RankKeys):
    """Each of ``ranks`` -> the ranks of its stage, stages of ``size`` consecutive ranks, as a
    read-only mapping made when looked up (one tuple a stage; no entry a rank)."""

    def __init__(self, ranks: Iterable[int], size: int):
        super().__init__(ranks)
        self.size = size
        self._stages: dict[int, tuple[int, ...]] = {}

    def __getitem__(self, rank: int) -> tuple[int, ...]:
        if rank not in self._ranks:
            raise KeyError(rank)
        first = rank // self.size * self.size
        found = self._stages.get(first)
        if found is None:
            found = self._stages[first] = tuple(range(first, first + self.size))
        return found

    def __repr__(self) -> str:
        return f"StageBlocks({self._ranks!r}, size={self.size})"


class StagesTold(NamedTuple):
    """The stages the IR tells, or why not."""

    stages: Mapping[int, tuple[int, ...]]
    """Each rank -> the ranks of its stage; empty: cannot tell."""
    note: str | None
    """Why they cannot be told; None where they are."""


def _sizes_text(sizes) -> str:
    sizes = [str(n) for n in sizes]
    return sizes[0] if len(sizes) == 1 else f"{', '.join(sizes[:-1])} or {sizes[-1]}"


def stages_from_ir(ranks: Iterable[tuple[int, StageFacts | None]], world: Sequence[int] | None) -> StagesTold:
    """The stages of a pipelined job from what each rank's file says (``(rank, facts)`` of each
    rank read; facts None: the file says nothing, e.g. read before the parallel pass) in a world
    of ranks ``0 .. W-1``: the stage size every rank allows (:func:`stage_sizes`; the world being
    a pipeline's, not the whole world, ``n < W``), where there is one. Ranks read one at a time:
    a job of many ranks holds the sizes still allowed, not the ranks' facts."""
    if not world or tuple(world) != tuple(range(len(world))):
        return StagesTold({}, "the world's ranks are not known")
    size = len(world)
    allowed = set(stage_sizes(0, size, StageFacts(UNKNOWN, 0, UNKNOWN, UNKNOWN, 0, 0))) - {size}
    present: list[int] = []
    first: tuple[int, tuple[int, ...]] | None = None  # the first rank that narrowed the sizes down
    for rank, facts in ranks:
        present.append(rank)
        if facts is None:
            continue
        fits = stage_sizes(rank, size, facts)
        if not fits:
            return StagesTold({}, f"rank {rank}'s Send / Receive and groups fit no stage size of a world of {size}")
        narrowed = allowed & set(fits)
        if not narrowed:
            before = (f"rank {first[0]} allows stages of {_sizes_text(first[1])} ranks" if first
                      else "a pipeline has at least 2 stages")
            return StagesTold({}, f"ranks disagree on the stage size: {before}, rank {rank} of "
                                  f"{_sizes_text(fits)}")
        if narrowed != allowed and first is None:
            first = (rank, fits)
        allowed = narrowed
    if len(allowed) != 1:
        return StagesTold({}, f"the IR allows stages of {_sizes_text(sorted(allowed))} ranks")
    return StagesTold(StageBlocks(present, allowed.pop()), None)
