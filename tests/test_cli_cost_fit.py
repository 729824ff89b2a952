"""``msinspect cost --memory / --device-memory / --rank``: the activation estimate and the fit
against zoo 04's numbers derived by hand in tests/analysis/test_activations.py (activations) and
tests/analysis/test_cost.py (static memory), the estimate labelled with what it leaves out, a
size that cannot be read refused with the form expected, and --rank narrowing every table."""
from __future__ import annotations

import json

from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

ZOO04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"


def test_device_memory_fits_and_does_not(tmp_path):
    # hand (test_activations.py): rank 0 (stage 0 of 2) 17,830,912 bytes of activations; its
    # static memory is what `memory` says (tests/analysis/test_cost.py checks it by hand).
    run = msinspect("cost", ZOO04, "--json", "--device-memory", "1GiB", "--rank", "0")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert [a["rank"] for a in out["activations"]] == [0] and out["activations"][0]["activations"] == 17_830_912
    assert {m["rank"] for m in out["memory"]} == {0} and {b["rank"] for b in out["bytes"]} == {0}
    static = out["memory"][0]["total"]
    fit = out["fit"][0]
    assert fit["total"] == static + 17_830_912 and fit["device_memory"] == 2**30 and fit["fits"] == "fits"
    assert "an estimate" in out["activations_estimate"] and "workspace" in out["activations_estimate"]
    # one byte short of static + activations: does not fit, short by 1
    short = json.loads(msinspect("cost", ZOO04, "--json", "--rank", "0", "--device-memory",
                                 f"{static + 17_830_912 - 1}B").stdout)["fit"][0]
    assert short["fits"] == "does not fit" and short["headroom"] == -1


def test_memory_tables_say_estimate():
    run = msinspect("cost", ZOO04, "--memory", "--device-memory", "80GB", "--rank", "5")
    assert run.returncode == 0, run.stderr
    assert "activation memory per rank, bytes (an estimate)" in run.stdout
    assert "19,403,776" in run.stdout  # stage 1 of 2, by hand
    assert "leaves out" in run.stdout and "will it fit" in run.stdout


def test_step_parallel_end_cannot_tell():
    """A file without the gradient graph: the activations and the fit say cannot tell, and why."""
    out = json.loads(msinspect("cost", ZOO04, "--json", "--stage", "step_parallel_end", "--device-memory",
                               "32GiB").stdout)
    assert all(a["activations"] is None and a["why"].startswith("cannot tell") for a in out["activations"])
    assert all(f["fits"].startswith("cannot tell") for f in out["fit"])


def test_bad_device_memory_and_rank():
    for bad in ("32", "lots", "0GiB"):
        run = msinspect("cost", ZOO04, "--device-memory", bad)
        assert run.returncode == 2 and "--device-memory" in run.stderr and "Traceback" not in run.stderr
    run = msinspect("cost", ZOO04, "--rank", "9")
    assert run.returncode == 2 and "no rank 9" in run.stderr
