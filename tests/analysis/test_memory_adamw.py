"""Static memory of MindFormers' LLaMA under its ``AdamW`` (zoo 12 and zoo 16), derived by hand
before msinspect read it: an optimizer written in Python, which gives each weight its new value
with ``F.assign`` in the optimizer cell (``mindformers/core/optim/adamw.py`` ``_update_run_op``)
and keeps two states per weight, ``adam_m`` and ``adam_v``, cloned in float32 whatever the
weight's type (``AdamW.clone_state``). The training wrapper holds it as ``self.optimizer``
(``MFTrainOneStepCell``): its scope is ``Default/optimizer-AdamW``.

The model (``fixtures/zoo/nets/mf_llama.py``): 2 layers, hidden 512, FFN 1536, vocabulary 1024,
``param_init_type`` float32 (4 bytes), no optimizer shard. Weights per layer: attention_norm and
ffn_norm (512,) whole; wq, wk, wv (512, 512) cut (mp, 1); wo (512, 512) cut (1, mp); w1, w3
(1536, 512) cut (mp, 1); w2 (512, 1536) cut (1, mp). Besides: the embedding (1024, 512) cut by
its Gather's (mp, 1), the final norm (512,), lm_head (1024, 512) cut (mp, 1). 2 x 9 + 3 = 21
weights.

- zoo 12, mp 4 (``fixtures/zoo/nets/12_mf_llama_tp8.py``), elements a rank: a layer 4 x 128 x 512
  + 3 x 384 x 512 + 2 x 512 = 852,992; the embedding and lm_head 256 x 512 = 131,072 each; the
  final norm 512: 2 x 852,992 + 2 x 131,072 + 512 = 1,968,640, 7,874,560 bytes. Gradients: one per
  weight, not sharded: 7,874,560. States: 2 x 1,968,640 x 4 = 15,749,120.
- zoo 16, mp 8 (``16_mf_llama_256.py``): a layer 4 x 64 x 512 + 3 x 192 x 512 + 1,024 = 427,008;
  the embedding and lm_head 128 x 512 = 65,536 each: 2 x 427,008 + 2 x 65,536 + 512 = 985,600
  elements, 3,942,400 bytes; states 7,884,800.

Both stages hold the optimizer (it is in the forward graph MindSpore cuts): the same at
step_parallel_end.
"""
from __future__ import annotations

import gzip
import re

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
LAYER12 = 4 * 128 * 512 + 3 * 384 * 512 + 2 * 512
ELEMENTS12 = 2 * LAYER12 + 2 * 256 * 512 + 512
LAYER16 = 4 * 64 * 512 + 3 * 192 * 512 + 2 * 512
ELEMENTS16 = 2 * LAYER16 + 2 * 128 * 512 + 512
CASES = [("12_mf_llama_tp8", (0, 5), ELEMENTS12), ("16_mf_llama_256", (0, 131, 255), ELEMENTS16)]


def test_the_numbers_are_the_derivation():
    assert (LAYER12, ELEMENTS12, 4 * ELEMENTS12) == (852_992, 1_968_640, 7_874_560)
    assert (LAYER16, ELEMENTS16, 4 * ELEMENTS16) == (427_008, 985_600, 3_942_400)


@pytest.fixture(scope="module", params=[(c, s) for c in CASES for s in ("validate", "step_parallel_end")],
                ids=lambda p: f"{p[0][0][:2]}-{p[1]}")
def case(request):
    (name, ranks, elements), stage = request.param
    analysis = analyse(msinspect.load_dump(ZOO / name), stage)
    return analysis, ranks, elements


def test_adamw_is_named_and_its_states_expected(case):
    analysis, ranks, elements = case
    memory = memory_per_rank(analysis).set_index("rank")
    assert list(memory.index) == list(ranks)
    for rank in ranks:
        row = memory.loc[rank]
        assert row["optimizer"] == "AdamW"
        assert (row["weight_count"], row["weights"]) == (21, 4 * elements)
        assert (row["gradients"], row["gradients_from"]) == (4 * elements, "one per weight")
        assert row["states"] == row["states_expected"] == 2 * 4 * elements


def test_each_weight_s_update_is_the_assign_that_writes_it(case):
    """Each of the 21 weights' update is an ``Assign`` in the optimizer's cell whose first input
    is that weight (read off the file's own line: ``Assign(%para221_<weight>, ...`` in the
    training step's graph, or at step_parallel_end the free variable
    ``Assign($(@..._construct_192:para4_<weight>), ...``); the states are no weights it trains."""
    analysis, ranks, _ = case
    result = next(r for r in analysis.results if r.rank == ranks[0])
    trained = [row for row in result.held if row["update"]]
    assert len(trained) == 21
    with gzip.open(result.file, "rt") as handle:
        lines = handle.read().splitlines()
    for row in trained:
        assert (row["update"], row["optimizer"]) == ("Assign", "AdamW")
        text = lines[row["update_line"] - 1]
        assert re.search(r"Assign\((%|\$\(@[^:]+:)para\d+_" + re.escape(row["param"]) + r"\)?,", text), text
        assert "optimizer-AdamW" in lines[row["update_line"] + 1]
    assert not any(row["param"].startswith("optimizer.") for row in trained)


def test_the_gradient_check_lists_every_weight_adamw_trains():
    """Zoo 14 (``14_mf_llama_seq_parallel.py``: dp 1, mp 4 on 4 ranks, ranks 0 and 3 kept): the 16
    weights cut by mp (7 Linear weights a layer, the embedding, lm_head) are each held by one rank
    alone: "not replicated", nothing to sum; the 5 RMSNorm weights (2 a layer and the final one,
    strategy (1,)) are whole on all 4: their gradients are summed (the mirror over 0-3). Before
    the Assigns were read, the 16 had no update and no sum, and the check left them out."""
    analysis = analyse(msinspect.load_dump(ZOO / "14_mf_llama_seq_parallel"), "validate")
    rows = analysis.gradient_sync()
    for rank in (0, 3):
        mine = rows[rows["rank"] == rank]
        verdicts = dict(zip(mine["param"], mine["verdict"]))
        assert len(verdicts) == 21
        norms = {p for p in verdicts if p.endswith("norm.weight") or p.endswith("norm_out.weight")}
        assert len(norms) == 5
        assert {verdicts[p] for p in norms} == {"synchronised"}
        assert {v for p, v in verdicts.items() if p not in norms} == {"not replicated"}
        assert set(mine["update"]) == {"Assign"}
