"""The counts a worker makes of a rank's rows (msinspect.analysis.engine.tally) are the rows' counts,
also after the groups named by hash only were filled in once every rank had arrived (issue 28:
the summary reads no rows back). Every rank of every fixture of several ranks is checked in
tests/analysis/test_spooled_answers.py, where those dumps are analysed already."""
from __future__ import annotations

import shutil

from msinspect.analysis import analyse
from msinspect.analysis.engine.tally import Tally, tally_of
from msinspect.dumps import load_dump
from tests.conftest import FIXTURES


def _counted(result) -> Tally:
    return tally_of(result.strategies, result.comm, result.params)


def test_ranks_that_agree_share_one_tally():
    analysis = analyse(load_dump(FIXTURES / "zoo" / "01_semi_auto_tp4dp2"), jobs=1, cache=False)
    assert len({id(r.tally) for r in analysis.results}) == len({r.tally for r in analysis.results})


def test_a_tally_counted_again_once_hash_named_groups_are_filled(tmp_path):
    """Zoo 16's ranks without their run record: groups a rank names by hash only get their ranks
    (and wire bytes) from the others when all have arrived; the tally follows."""
    root = tmp_path / "some_ranks"
    shutil.copytree(FIXTURES / "zoo" / "16_mf_llama_256", root, ignore=shutil.ignore_patterns("config.json"))
    for spool in (False, True):
        analysis = analyse(load_dump(root), jobs=1, cache=False, spool=spool)
        for result in analysis.results:
            assert result.tally == _counted(result), result.label


def test_a_result_without_a_tally_is_counted_from_its_rows():
    from msinspect.analysis.job.collect import RankResult
    from msinspect.analysis.engine.tally import tally

    result = RankResult(rank=0, label="rank_0", file="x.ir", stage="validate", family="", status="ok",
                        rows={"strategies": [{"set_by": "user"}, {"set_by": "propagated"}],
                              "comm": [{"kind": "grad_sync", "op": "AllReduce", "tensor_bytes": 4, "wire_bytes": 8},
                                       {"kind": "grad_sync", "op": "AllReduce", "tensor_bytes": None,
                                        "wire_bytes": None}],
                              "params": [{"param": "w"}]})
    assert tally(result) == Tally(2, 1, 2, (("grad_sync", 2),), None, 1, 1, frozenset({"w"}))
