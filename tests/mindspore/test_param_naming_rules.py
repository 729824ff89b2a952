"""The parameter and cell naming rules of :mod:`msinspect.mindspore.naming` on real names of the
zoo: which weight an optimizer state or an accumulated gradient belongs to, and the class of the
optimizer cell a scope lies in.

Where each fact comes from:

- MindSpore's optimizers clone a state per weight as ``ParameterTuple.clone(prefix=...)``, named
  ``<prefix>.<weight>`` (``nn.AdamWeightDecay``: ``adam_m`` / ``adam_v``; ``nn.Momentum``:
  ``moments``); MindFormers' ``AdamW.clone_state(prefix="adam_m")`` names its ``adam_m.<weight>``
  and MindSpore prefixes the optimizer cell's attribute: zoo 12's
  ``optimizer.adam_v.model.tok_embeddings.embedding_weight``;
- a pipeline's accumulated gradient is ``accu_grads.<weight>`` (zoo 04, zoo 18);
- a cell's scope part is ``<attribute>-<Class>`` and the training wrappers hold the optimizer as
  ``self.optimizer`` (``nn.TrainOneStepCell``, MindFormers' ``MFTrainOneStepCell``): zoo 12's
  ``Default/optimizer-AdamW``, zoo 11's ``Default/optimizer-Momentum``.
"""
from __future__ import annotations

from msinspect.mindspore.naming import ACCUMULATED, optimizer_cell, state_of, weight_in, with_states

#: Zoo 12 rank 0's first weights, as the file names them (para4_..., para5_...).
WEIGHTS = ("model.tok_embeddings.embedding_weight", "model.layers.0.attention_norm.weight", "lm_head.weight")


def test_a_state_under_the_optimizer_cell_belongs_to_its_weight():
    assert state_of("optimizer.adam_m.model.tok_embeddings.embedding_weight", WEIGHTS) == WEIGHTS[0]
    assert state_of("optimizer.adam_v.lm_head.weight", WEIGHTS) == "lm_head.weight"


def test_the_prefix_is_the_last_part_before_the_weight():
    # a wrapper cell's name before the optimizer's: the state's prefix is still the last part
    assert state_of("network.optimizer.adam_m.lm_head.weight", WEIGHTS) == "lm_head.weight"
    assert state_of("adam_m.optimizer.lm_head.weight", WEIGHTS) is None


def test_a_state_of_mindspore_s_own_optimizers_belongs_to_its_weight():
    assert state_of("moments.lm_head.weight", WEIGHTS) == "lm_head.weight"
    assert state_of("adam_m.lm_head.weight", WEIGHTS) == "lm_head.weight"
    assert state_of("accum.lm_head.weight", WEIGHTS) == "lm_head.weight"
    assert state_of("stat.lm_head.weight", WEIGHTS) == "lm_head.weight"


def test_a_prefix_no_optimizer_clones_under_is_no_state():
    # the accumulated gradient is the weight's name with a prefix too, but no optimizer state
    assert state_of("accu_grads.lm_head.weight", WEIGHTS) is None
    assert weight_in("accu_grads.lm_head.weight", WEIGHTS) == "lm_head.weight"
    assert state_of("optimizer.global_step", WEIGHTS) is None


def test_a_weight_is_no_state_of_itself_nor_of_a_weight_it_ends_like():
    assert state_of("lm_head.weight", WEIGHTS) is None
    assert weight_in("lm_head.weight", WEIGHTS) is None
    # "weight" ends "lm_head.weight" but the rest is a name's part, not a state's prefix
    assert state_of("model.layers.0.attention_norm.weight", ("weight", "attention_norm.weight")) is None


def test_the_longest_weight_named_at_the_end_is_the_one():
    # "adam_m.a.b": the weight "a.b" comes before "b" (the first cut after the prefix)
    assert weight_in("adam_m.a.b", ("b", "a.b")) == "a.b"
    assert state_of("adam_m.a.b", ("b", "a.b")) == "a.b"


def test_the_accumulated_prefixes_are_pipeline_s():
    assert "accu_grads.layer2.bias".startswith(ACCUMULATED)
    assert not "adam_m.layer2.bias".startswith(ACCUMULATED)


def test_the_optimizer_cell_is_read_off_the_scope():
    assert optimizer_cell("Default/optimizer-AdamW") == "AdamW"
    assert optimizer_cell("Default/optimizer-AdamW/Assign-op2") == "AdamW"
    assert optimizer_cell("Default/optimizer-Momentum") == "Momentum"
    assert optimizer_cell("optimizer-AdamWeightDecay/hyper_map") == "AdamWeightDecay"


def test_a_scope_in_no_optimizer_cell_names_none():
    assert optimizer_cell("Default/network-WithLossCell/_backbone-GPT") is None
    assert optimizer_cell("Default/my_optimizer-AdamW") is None  # another attribute's name
    assert optimizer_cell("Default/optimizer-") is None
    assert optimizer_cell("") is None
    assert optimizer_cell(None) is None


def test_the_weights_with_states_are_those_cloned_in_their_shape():
    # zoo 12's embedding and its two AdamW states, each (256, 512) at the rank; lm_head's state
    # of another shape is no clone of it; the global step clones nothing
    shapes = {WEIGHTS[0]: (256, 512), "optimizer.adam_m." + WEIGHTS[0]: (256, 512),
              "optimizer.adam_v." + WEIGHTS[0]: (256, 512), "lm_head.weight": (256, 512),
              "optimizer.adam_m.lm_head.weight": (512, 256), "optimizer.global_step": (1,)}
    assert with_states(shapes) == {WEIGHTS[0]}
