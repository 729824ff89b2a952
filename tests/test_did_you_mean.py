"""Suggestions name what the user can select or write (issue 40, item 9).

By hand, from ``fixtures/zoo/nets/gpt.py`` under zoo 01 (tensor parallel 4 x data parallel 2):
``out_matmul`` and ``ffn_out_matmul`` are row parallel, so the parallel pass inserts an
``AllReduce`` after them; their backward runs in MindSpore's ``Gradients/.../Grad_AllReduce``
scope, a scope of the graph and no operator. The blocks' feed-forward cell is the attribute
``ffn`` of class ``FeedForward``: its scope part is ``ffn-FeedForward``.

The spec language (docs/spec-language.md) names ``in_strategy`` a required key of
``[[expect.strategy]]``: ``in_stratgy`` is that key misspelt, one letter dropped.
"""
from __future__ import annotations

import pytest

from msinspect.spec import SpecError, load_spec
from tests.conftest import FIXTURES, invoke

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"


def _error(result) -> str:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")][-1]


def test_a_misspelt_op_type_is_offered_the_op_type_not_a_scope():
    result = invoke("comm", ZOO01, "--rank", "0", "--op", "AllReduc")
    assert result.exit_code == 2
    error = _error(result)
    assert error.endswith("; did you mean AllReduce?"), error
    assert "Grad_AllReduce" not in error


def test_a_misspelt_scope_is_still_offered_the_scope():
    result = invoke("comm", ZOO01, "--rank", "0", "--op", "ffn-FeedForwrd")
    assert result.exit_code == 2
    assert _error(result).endswith("; did you mean ffn-FeedForward?"), _error(result)


def test_a_misspelt_name_under_a_scope_is_offered_names_under_that_scope():
    """Each of zoo 01's 4 blocks (``.../N-Block/attention-Attention``) has a ``q_matmul``: the name
    under block 1, misspelt, is offered as the table writes it, block 1's first."""
    result = invoke("strategies", ZOO01, "--rank", "0", "--op", "1-Block/.../q_matmal")
    assert result.exit_code == 2
    error = _error(result)
    assert "; did you mean 1-Block/.../q_matmul or " in error, error
    assert invoke("strategies", ZOO01, "--rank", "0", "--op", "1-Block/.../q_matmul").exit_code == 0
    # as many last parts of the scope as given: attention-Attention/q_matmul, not a block's
    error = _error(invoke("strategies", ZOO01, "--rank", "0", "--op", "attention-Attention/q_matmal"))
    assert "; did you mean attention-Attention/q_matmul or " in error and "Block" not in error, error


@pytest.mark.parametrize("args, meant", [
    (["comm", ZOO01, "--kind", "optimiser"], "optimizer"),  # British spelling of a kind
    (["cost", ZOO01, "--by", "axes"], "axis"),
    (["strategies", ZOO01, "--set-by", "users"], "user"),
])
def test_a_misspelt_choice_is_offered_the_value_meant(args, meant):
    result = invoke(*args)
    assert result.exit_code == 2
    assert f"(did you mean {meant}" in result.output, result.output


def test_a_misspelt_spec_key_is_an_unknown_key_with_the_one_meant(tmp_path):
    spec = tmp_path / "typo.toml"
    spec.write_text('[[expect.strategy]]\nop = "q_matmul"\nin_stratgy = [[2, 1], [1, 4]]\n')
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    text = str(caught.value)
    assert "expect.strategy[0]: unknown key(s) in_stratgy (did you mean in_strategy?)" in text
    assert "missing" not in text


def test_a_misspelt_job_key_says_the_one_meant(tmp_path):
    spec = tmp_path / "typo.toml"
    spec.write_text('[job]\nrank = 8\n[[expect.strategy]]\nop = "q_matmul"\nin_strategy = [[2, 1], [1, 4]]\n')
    with pytest.raises(SpecError, match=r"job: unknown key\(s\) rank \(did you mean ranks\?\)"):
        load_spec(spec)


def test_a_key_close_to_nothing_is_named_without_a_guess(tmp_path):
    spec = tmp_path / "typo.toml"
    spec.write_text('[[expect.strategy]]\nop = "q_matmul"\nin_strategy = [[2, 1], [1, 4]]\ncolour = 1\n')
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    assert "unknown key(s) colour (allowed:" in str(caught.value)
