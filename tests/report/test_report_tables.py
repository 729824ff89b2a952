"""Merging rows across ranks and collapsing repeats, on rows written by hand."""
from __future__ import annotations

import pandas as pd

from msinspect.report.tables import blocks, merged_rows, text

SHOWN = ["name", "op", "scope", "micro", "in_strategy"]


def _frame(rows):
    return pd.DataFrame(rows, columns=["rank"] + SHOWN)


def test_text_of_cells():
    assert text((2, 4)) == "(2, 4)" and text((4,)) == "(4,)" and text(((2, 4), (4, 1))) == "((2, 4), (4, 1))"
    assert text(None) == "" and text(float("nan")) == "" and text(3.0) == "3" and text(True) == "yes"


def test_layers_of_a_cell_list_collapse_into_one_block_per_operator():
    # 3 layers of a CellList, each with the same MatMul strategy, on 2 ranks that agree; a 4th
    # layer with another strategy stays apart
    rows = []
    for rank in (0, 1):
        for layer in range(3):
            rows.append([rank, f"MatMul-op{layer}", "MatMul", f"Default/layers-CellList/{layer}-Block/dense",
                         None, ((2, 1), (1, 4))])
        rows.append([rank, "MatMul-op3", "MatMul", "Default/layers-CellList/3-Block/dense", None, ((8, 1), (1, 1))])
    merged = merged_rows(_frame(rows), SHOWN)
    assert len(merged) == 4 and all(r.ranks == [0, 1] for r in merged)
    found = blocks(merged)
    assert [len(b.rows) for b in found] == [3, 1]
    head = found[0].head_cells()
    assert head["name"] == "MatMul" and head["scope"] == "Default/layers-CellList/*-Block/dense"
    assert found[0].varying() == "3 scopes, 3 instances"


def test_ranks_that_disagree_are_not_merged_and_not_collapsed_together():
    rows = [[0, "matmul", "MatMul", "s", 0, ((2, 1),)], [1, "matmul", "MatMul", "s", 0, ((1, 2),)],
            [0, "matmul", "MatMul", "s", 1, ((2, 1),)], [1, "matmul", "MatMul", "s", 1, ((1, 2),)]]
    merged = merged_rows(_frame(rows), SHOWN)
    assert [(r.ranks, r.cells["micro"]) for r in merged] == [([0], "0"), ([1], "0"), ([0], "1"), ([1], "1")]
    found = blocks(merged)
    # per rank, the two micro-batches are one block
    assert [[r.cells["micro"] for r in b.rows] for b in found] == [["0", "1"], ["0", "1"]]
    assert found[0].head_cells()["micro"] == "0-1"


def test_weight_names_of_repeated_layers():
    from msinspect.report.tables import compressed_names, indices_text, name_pattern

    names = [f"blocks.{i}.attention.wq" for i in range(124)]
    assert name_pattern(names[7]) == "blocks.*.attention.wq"
    assert indices_text(names) == "blocks 0-123"
    assert compressed_names(names + ["w", "w2"]) == ["blocks.*.attention.wq (blocks 0-123, x 124)", "w", "w2"]
    # two indices: only the one that varies is named; a digit inside a word is not an index
    assert indices_text(["layers.0.experts.3.w1", "layers.1.experts.3.w1"]) == "layers 0-1"
    assert name_pattern("w2") == "w2" and name_pattern("ln1_gamma") == "ln1_gamma"
