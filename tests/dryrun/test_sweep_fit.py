"""``msinspect sweep --device-memory``: a setting's ranks held against the device memory, from a
real analysis (zoo 04's dump standing in for a setting's dry-run folder: what ``_analyse`` reads),
the activations derived by hand in tests/analysis/test_activations.py (stage 0 17,830,912, stage 1
19,403,776 bytes), the static memory from the memory analysis (tests/analysis/test_cost.py derives
rank 0's, 35,422,216, by hand)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from click.testing import CliRunner

from msinspect.cli import main
from msinspect.cli.sweep_cmd import format_sweep, sweep_rows
from msinspect.dryrun.sweep import SettingResult, SweepReport, _analyse

from tests.conftest import FIXTURES

ZOO04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"
RANK0 = 35_422_216 + 17_830_912  # 53,253,128: static + activations at rank 0, by hand


def _setting() -> SettingResult:
    result = SettingResult({"MP": "2"}, "MP=2", "MP-2", status="ok", ranks_run=list(range(8)),
                           ranks_ok=list(range(8)), wall_seconds=1.0)
    _analyse(result, SimpleNamespace(run_dir=ZOO04))
    return result


def test_sweep_fit_column(tmp_path):
    setting = _setting()
    assert setting.analysis_error == "" and setting.activations[0] == 17_830_912
    assert setting.activations[4] == 19_403_776
    stage1 = setting.memory[4]["total"] + 19_403_776
    assert stage1 > RANK0  # stage 1 holds more: at rank 0's total exactly, only stage 0 fits

    def cell(device):
        report = SweepReport(Path("04.py"), tmp_path, 8, None, "env", [("MP", ["2"])], [setting],
                             device_memory=device)
        return sweep_rows(report)[0][f"fits {'50.8 MiB' if device < 2**30 else '1.0 GiB'}"], report

    assert cell(RANK0)[0] == "does not fit: ranks 4-7"
    assert cell(RANK0 - 1)[0] == "does not fit: ranks 0-7"
    assert cell(2**30)[0] == "fits"
    text = format_sweep(cell(2**30)[1])
    assert "activations / rank" in text and "fits 1.0 GiB" in text and "an estimate" in text
    assert "17.0 MiB - 18.5 MiB" in text  # 17,830,912 and 19,403,776 bytes


def test_sweep_refuses_a_bad_size(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("")
    run = CliRunner().invoke(main, ["sweep", str(script), "--ranks", "2", "--grid", "A=1", "--device-memory", "8"])
    assert run.exit_code == 2 and "--device-memory" in run.output and "Traceback" not in run.output
