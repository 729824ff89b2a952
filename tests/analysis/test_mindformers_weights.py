"""Every weight of MindFormers' LLaMA gets its slice, though the model body is a @lazy_inline
subgraph called with the weights as arguments and every weight is cast to float16 (a Cast
without a strategy) before its MatMul. Before calls were bound and casts passed, only the
embedding table had a row.

Expected slices from the facts the zoo scripts state (fixtures/zoo/nets/12_mf_llama_tp8.py,
16_mf_llama_256.py, written before the dumps): a weight (out, in) read by
``MatMul(transpose_b=True)``; wq / wk / wv / w1 / w3 / lm_head cut on ``out`` by mp, wo / w2 on
``in``; rank = dp_index * mp + mp_index."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
HIDDEN, FFN, VOCAB = 512, 1536, 1024


def _rows(name: str, rank: int) -> dict:
    slices = analyse(msinspect.load_dump(ZOO / name)).slices()
    return {r.param: r for r in slices[slices["rank"] == rank].itertuples()}


def _part(size: int, mp: int, k: int) -> tuple[int, int]:
    step = size // mp
    return (step * k, step * (k + 1))


@pytest.mark.parametrize("name, rank, dp, mp", [("12_mf_llama_tp8", 5, 2, 4), ("16_mf_llama_256", 131, 32, 8)])
def test_every_linear_weight_has_its_slice(name, rank, dp, mp):
    rows = _rows(name, rank)
    k = rank % mp
    for layer in (0, 1):
        stem = f"model.layers.{layer}"
        for w in ("attention.wq", "attention.wk", "attention.wv"):
            assert rows[f"{stem}.{w}.weight"].slice == (_part(HIDDEN, mp, k), (0, HIDDEN))
        assert rows[f"{stem}.attention.wo.weight"].slice == ((0, HIDDEN), _part(HIDDEN, mp, k))
        for w in ("w1", "w3"):
            assert rows[f"{stem}.feed_forward.{w}.weight"].slice == (_part(FFN, mp, k), (0, HIDDEN))
        assert rows[f"{stem}.feed_forward.w2.weight"].slice == ((0, HIDDEN), _part(FFN, mp, k))
        assert rows[f"{stem}.attention.wq.weight"].consumer == "matmul"
    assert rows["lm_head.weight"].slice == (_part(VOCAB, mp, k), (0, HIDDEN))
    # MatMul ((dp, 1), (mp, 1)) with transpose_b: [dp, 1, mp], the weight (out, in) mapped [0, 1];
    # as MindSpore's parameter_layout_dict states it: [dp, mp] and [0, -1]
    wq = rows["model.layers.0.attention.wq.weight"]
    assert (tuple(wq.device_matrix), tuple(wq.tensor_map)) == ((dp, mp), (0, -1))


def test_at_step_parallel_end_every_weight_has_its_global_shape():
    """step_parallel_end holds the weights cut in place; the embedding's consumer is the Gather the
    parallel pass made (no origin_input_shapes), whose global shape came out as the rank's (256,
    512). The rank's step_parallel_begin says the whole: vocabulary 1024 x hidden 512, cut by mp 4
    on the vocabulary."""
    slices = analyse(msinspect.load_dump(ZOO / "12_mf_llama_tp8"), "step_parallel_end").slices()
    rows = {r.param: r for r in slices[slices["rank"] == 0].itertuples()}
    table = rows["model.tok_embeddings.embedding_weight"]
    assert (tuple(table.global_shape), tuple(table.rank_shape)) == ((VOCAB, HIDDEN), (VOCAB // 4, HIDDEN))
    norm = rows["model.layers.0.attention_norm.weight"]
    assert (tuple(norm.global_shape), tuple(norm.rank_shape)) == ((HIDDEN,), (HIDDEN,))
    assert all(r.global_shape is not None for r in rows.values())


def test_which_weights_each_pipeline_stage_holds():
    """Zoo 13 (fixtures/zoo/nets/13_mf_llama_pp_interleave.py: 4 layers, 2 stages, interleave 2):
    stage 0 (rank 0) holds layers 0 and 2 and the embedding, stage 1 (rank 7) layers 1 and 3, the
    final norm and the head; every Linear weight of a stage has its slice there, and so has its
    gradient accumulator (``accu_grads.<weight>``: the pipeline accumulates each micro-batch's
    gradient in a clone of the weight, laid out as the weight, but not cut again by the optimizer
    shard: mf_llama.start sets ``gradient_accumulation_shard`` False, so the rank stores the
    layout's whole slice of it)."""
    slices = analyse(msinspect.load_dump(ZOO / "13_mf_llama_pp_interleave")).slices()

    def held(rank):
        names = set(slices[slices["rank"] == rank]["param"])
        return {int(n.split(".")[2]) for n in names if n.startswith("model.layers.")}, names

    layers0, names0 = held(0)
    layers7, names7 = held(7)
    assert (layers0, layers7) == ({0, 2}, {1, 3})
    assert "model.tok_embeddings.embedding_weight" in names0 and "lm_head.weight" in names7
    assert "lm_head.weight" not in names0 and "model.tok_embeddings.embedding_weight" not in names7
    linear = slices[slices["param"].str.contains(r"^(?:model\.layers\..*\.(?:wq|wk|wv|wo|w1|w2|w3)\.weight|lm_head\.weight)$")]
    assert len(linear) == 2 * 7 * 2 + 1 and linear["slice"].notna().all()
    rows = {(row["rank"], row["param"]): row for row in slices.to_dict("records")}
    for row in linear.to_dict("records"):
        accumulator = rows[(row["rank"], f"accu_grads.{row['param']}")]
        for key in ("device_matrix", "tensor_map", "slice_shape"):
            assert tuple(accumulator[key]) == tuple(row[key])
        assert not accumulator["opt_shard_group"]
        assert tuple(b - a for a, b in accumulator["slice"]) == tuple(row["slice_shape"])
