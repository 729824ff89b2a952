"""The zoo's MindFormers networks (12 - 16: MindFormers 2.0.0's own LlamaForCausalLM, see
fixtures/zoo/nets/mf_llama.py): what their specs cannot state, checked against the kept dumps.

- every weight's per-rank slice, worked out by hand from MindFormers' source and each
  configuration (the reasoning is in each script's docstring), read from the parameter
  declarations of the rank's validate file. msinspect's own weight table (``shapes --params``)
  does not list these weights yet: they reach their MatMuls as arguments of the lazy-inlined
  ``LlamaForCausalLM`` body;
- MindFormers' training wrapper writes an overflow-check line no plain script produces
  (``= Partial( primitive_attrs: {...}) primitive_attrs: {...}``): the kept dumps hold it and the
  parser reads them strictly;
- each run record names the MindFormers release that made the dump.
The specs (tests/zoo/test_zoo_specs.py) and the strict parse of every kept file
(tests/zoo/test_zoo_parse.py) cover these networks like the others.
"""
from __future__ import annotations

import gzip
import json

import pytest

from msinspect import parse_file
from msinspect.stages import files_of_stage
from tests.zoo.zoo_manifest import ZOO, networks

MINDFORMERS = [n for n in networks() if "mindformers" in n.get("needs", ())]

#: Per-rank weight slices by hand: {network: {rank: {weight: shape}}}. "L" in a name stands for
#: every layer the rank holds (all of them without pipeline). Global shapes: wq / wo (512, 512),
#: w1 / w3 (1536, 512), w2 (512, 1536), embedding and lm_head (1024, 512), norms (512,); a Linear
#: weight is (out, in) and its MatMul strategy's second entry cuts it.
_TP8 = {"model.layers.L.attention.wq.weight": (128, 512),      # (4, 1)
        "model.layers.L.attention.wo.weight": (512, 128),      # (1, 4)
        "model.layers.L.feed_forward.w1.weight": (384, 512),   # (4, 1)
        "model.layers.L.feed_forward.w3.weight": (384, 512),
        "model.layers.L.feed_forward.w2.weight": (512, 384),   # (1, 4)
        "model.layers.L.attention_norm.weight": (512,),        # (1,): whole
        "lm_head.weight": (256, 512),                          # (4, 1), vocab_emb_dp False
        "model.tok_embeddings.embedding_weight": (256, 512)}   # Gather ((4, 1), (2, 1))
# zoo 13: mp 2 in a stage, then optimizer parallel cuts dimension 0 once more over the
# data-parallel group of 2 (Linear weights only: the table and the norms have
# parallel_optimizer False).
_PP_STAGE = {"model.layers.L.attention.wq.weight": (128, 512),  # (256, 512) / 2
             "model.layers.L.attention.wo.weight": (256, 256),  # (512, 256) / 2
             "model.layers.L.feed_forward.w1.weight": (384, 512),  # (768, 512) / 2
             "model.layers.L.feed_forward.w2.weight": (256, 768),  # (512, 768) / 2
             "model.layers.L.ffn_norm.weight": (512,)}
WEIGHTS = {
    "12_mf_llama_tp8": {0: _TP8, 5: _TP8},
    "13_mf_llama_pp_interleave": {
        0: {**_PP_STAGE, "model.tok_embeddings.embedding_weight": (512, 512)},  # (2, 1), not opt-cut
        7: {**_PP_STAGE, "lm_head.weight": (256, 512), "model.norm_out.weight": (512,)},  # (512, 512) / 2
    },
    "14_mf_llama_seq_parallel": {r: {"model.layers.L.attention.wq.weight": (128, 512),
                                     "model.layers.L.attention.wo.weight": (512, 128),
                                     "model.layers.L.feed_forward.w2.weight": (512, 384),
                                     "lm_head.weight": (256, 512),
                                     "model.tok_embeddings.embedding_weight": (256, 512)} for r in (0, 3)},
    "15_mf_llama_moe_ep8": {r: {"model.layers.L.attention.wq.weight": (256, 512),   # mp 2
                                "model.layers.L.attention.wo.weight": (512, 256),
                                "model.layers.L.feed_forward.ffn.w1": (1, 512, 3072),  # one expert a rank
                                "model.layers.L.feed_forward.ffn.w2": (1, 1536, 512),
                                "model.layers.L.feed_forward.router_dense.weight": (4, 512),  # (1, 1)
                                "lm_head.weight": (1024, 512),  # vocab_emb_dp True: whole
                                "model.tok_embeddings.embedding_weight": (1024, 512)} for r in (0, 5)},
    "16_mf_llama_256": {r: {"model.layers.L.attention.wq.weight": (64, 512),    # (8, 1)
                            "model.layers.L.attention.wo.weight": (512, 64),    # (1, 8)
                            "model.layers.L.feed_forward.w1.weight": (192, 512),
                            "model.layers.L.feed_forward.w2.weight": (512, 192),
                            "lm_head.weight": (128, 512),
                            "model.tok_embeddings.embedding_weight": (128, 512)} for r in (0, 131, 255)},
}
#: The layers each rank holds (zoo 13: stage 0 has layers 0 and 2, stage 1 layers 1 and 3).
LAYERS = {"13_mf_llama_pp_interleave": {0: (0, 2), 7: (1, 3)}}


def _stage_file(name: str, rank: int, stage: str):
    (path,) = files_of_stage(ZOO / name / f"rank_{rank}", stage)
    return path


def test_the_mindformers_networks_are_kept():
    assert sorted(n["name"] for n in MINDFORMERS) == sorted(WEIGHTS)
    for net in MINDFORMERS:
        record = json.loads((ZOO / net["name"] / "config.json").read_text())
        assert record["mindformers"] == "2.0.0" and record["ranks"] == net["ranks"]
        assert sorted(WEIGHTS[net["name"]]) == record["run_ranks"]


@pytest.mark.parametrize(("name", "rank"), [(n, r) for n in WEIGHTS for r in WEIGHTS[n]])
def test_weight_slices_are_as_worked_out_by_hand(name, rank):
    path = _stage_file(name, rank, "validate")
    ir = parse_file(path)
    held = {p.short_name: p.abstract.shape for p in ir.params if p.has_default and p.abstract}
    layers = LAYERS.get(name, {}).get(rank, (0, 1))
    want, found = {}, {}
    for weight, shape in WEIGHTS[name][rank].items():
        for layer in layers if ".L." in weight else (None,):
            full = weight.replace(".L.", f".{layer}.") if layer is not None else weight
            want[full], found[full] = tuple(shape), held.get(full)
    assert found == want


# Needs strict parsing of MindFormers' overflow-check line (`%0(CNode_...) = Partial(
# primitive_attrs: {...}) primitive_attrs: {...}`): this failed to parse before the parser read
# a primitive operand printed by its attributes alone. Kept strict on purpose, not lenient.
@pytest.mark.parametrize("name", sorted(WEIGHTS))
def test_the_overflow_check_line_is_kept_and_read_strictly(name):
    rank = min(WEIGHTS[name])
    path = _stage_file(name, rank, "step_parallel_end")
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    partials = [line for line in text.splitlines() if "= Partial( primitive_attrs:" in line]
    assert partials, f"{path}: MindFormers' overflow-check line is not in the kept dump"
    ir = parse_file(path)
    assert ir.diagnostics == [] and ir.status == "complete"
    assert ir.cnode_count == ir.stated_cnodes
