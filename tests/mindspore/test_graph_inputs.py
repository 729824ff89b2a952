"""The graph's inputs (the dataset's tensors, parameters without a value) as rows of their own kind
beside the weights: their layout is the ``_VirtualDataset``'s (``virtual_dataset_info.cc``), which
MindSpore's ``parameter_layout_dict`` records beside the weights. Each expectation below was worked
out from the network script and the device count before msinspect was run on the dump; the
comparison with MindSpore's record over every dump is in test_records_everywhere.py."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.params import weights_of
from msinspect.analysis.engine.tally import tally_of
from msinspect.mindspore.layouts import Call, layout_of
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


def _inputs(dump, stage="validate"):
    slices = analyse(msinspect.load_dump(ZOO / dump), stage).slices()
    return {(row["rank"], row["param"]): row for row in slices[slices["kind"] == "input"].to_dict("records")}


def test_a_data_parallel_batch_is_the_ranks_share():
    # zoo 19 (the documentation's optimizer-parallel sample): 8 ranks, no full_batch, 32 rows a
    # rank, so a global batch of 256 cut along the batch over all 8 devices: rank r holds rows
    # 32r .. 32r + 31 of the images (256, 1, 28, 28) and of the labels (256,)
    rows = _inputs("19_doc_optimizer_parallel")
    images, labels = rows[(5, "inputs")], rows[(5, "targets")]
    assert images["global_shape"] == (256, 1, 28, 28) and images["rank_shape"] == (32, 1, 28, 28)
    assert images["device_matrix"] == (8,) and images["tensor_map"] == (0, -1, -1, -1)
    assert images["slice"] == ((160, 192), (0, 1), (0, 28), (0, 28))
    assert labels["slice"] == ((160, 192),) and labels["tensor_map"] == (0,)
    assert rows[(0, "inputs")]["slice"][0] == (0, 32)


def test_a_full_batch_is_whole_on_every_rank():
    # zoo 01 (gpt.py): full_batch=True, batch 8, sequence 64, vocabulary 1024: every rank holds the
    # whole ids (8, 64) and one-hot labels (8, 64, 1024); the dataset strategy is all ones, so the
    # matrix is the stage's 8 devices repeating it and nothing is cut
    rows = _inputs("01_semi_auto_tp4dp2")
    for rank in range(8):
        ids, labels = rows[(rank, "inputs0")], rows[(rank, "inputs1")]
        assert ids["global_shape"] == ids["rank_shape"] == (8, 64)
        assert ids["device_matrix"] == (8,) and ids["tensor_map"] == (-1, -1)
        assert ids["slice"] == ((0, 8), (0, 64))
        assert labels["slice"] == ((0, 8), (0, 64), (0, 1024))


def test_inputs_are_told_where_the_weights_cannot_be():
    # zoo 20 (2-D tensor parallel): at validate no weight can be told (the replaced MatMuls share a
    # name), yet the input's share is: 1024 rows a rank of 8192, rank 3 rows 3072 .. 4095
    rows = _inputs("20_doc_high_dimension_tp")
    assert rows[(3, "args0")]["global_shape"] == (8192, 256)
    assert rows[(3, "args0")]["slice"] == ((3072, 4096), (0, 256))
    assert rows[(6, "args0")]["slice"] == ((6144, 7168), (0, 256))
    # (the analysis then reads the weights at the step_parallel_end beside it: tests/analysis/test_params_at_end.py)


def test_a_dynamic_dimension_has_no_slice():
    # zoo 17: the batch dimension is dynamic (None in the script's input signature): its extent
    # is known at run time only, so the slice is "cannot tell", the layout is told
    rows = _inputs("17_dynamic_shape_8")
    row = rows[(0, "inputs0")]
    assert row["global_shape"] == (-1, 64) and row["tensor_map"] == (-1, -1)
    assert row["slice"] is None and row["slice_text"] == "cannot tell"


def test_before_the_parallel_pass_the_share_is_not_told():
    # at step_parallel_begin the inputs are not cut yet: the whole shape is known, the rank's part not
    rows = _inputs("19_doc_optimizer_parallel", "step_parallel_begin")
    row = rows[(5, "inputs")]
    assert row["global_shape"] == (256, 1, 28, 28) and row["rank_shape"] is None and row["slice"] is None


def test_inputs_are_not_counted_as_weights():
    analysis = analyse(msinspect.load_dump(ZOO / "19_doc_optimizer_parallel"), "validate")
    result = analysis.results[0]
    assert {r["param"] for r in result.params} - {r["param"] for r in weights_of(result.params)} == {"inputs", "targets"}
    assert "inputs" not in tally_of([], [], result.params).weights_read


@pytest.mark.parametrize("strategy, devices, matrix, maps", [
    # the dataset cut in 4 over 8 devices: the repeated axis on the right (MindSpore's standard
    # form drops the size-1 axis: [4, 2], the batch on axis 1)
    (((4, 1), (4,)), 8, (4, 1, 2), ((2, -1), (2,))),
    # an image input of four dimensions and a label of one: the label's cut maps to the image's axis
    (((8, 1, 1, 1), (8,)), 8, (8, 1, 1, 1), ((3, -1, -1, -1), (3,))),
    # full batch: all ones
    (((1, 1),), 8, (1, 1, 8), ((-1, -1),)),
])
def test_the_virtual_dataset_rule(strategy, devices, matrix, maps):
    layout = layout_of(Call("_VirtualDataset", strategy), devices)
    assert layout.device_matrix == matrix and layout.tensor_maps == maps


def test_a_dataset_cut_along_two_dimensions_has_no_rule():
    # virtual_dataset_info.cc refuses it ("shard in one dim")
    assert layout_of(Call("_VirtualDataset", ((2, 4),)), 8) is None
