"""Where a real GPU or Ascend is present the dry run refuses and points at msrun."""
from __future__ import annotations

import pytest
from dryrun_helpers import SEED002


def test_real_gpu_points_at_msrun(monkeypatch, tmp_path):
    from msinspect.dryrun import DryRunError, launcher, run_dryrun

    monkeypatch.setattr(launcher, "detect_real_accelerator", lambda: "NVIDIA GPU (/dev/nvidia0)")
    with pytest.raises(DryRunError) as info:
        run_dryrun(SEED002, 8, out_root=tmp_path)
    assert "msrun" in str(info.value) and "/dev/nvidia0" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # refused before creating anything


def test_ascend_devices_are_detected(monkeypatch):
    from msinspect.dryrun import environment as envmod

    monkeypatch.setattr(envmod.glob, "glob", lambda pattern: ["/dev/davinci0"] if "davinci" in pattern else [])
    assert "Ascend" in envmod.detect_real_accelerator()


def test_nvidia_smi_without_gpu_is_not_a_gpu(monkeypatch):
    from msinspect.dryrun import environment as envmod

    monkeypatch.setattr(envmod.glob, "glob", lambda pattern: [])
    monkeypatch.setattr(envmod.os.path, "exists", lambda path: False)
    monkeypatch.setattr(envmod.shutil, "which", lambda name: None)
    assert envmod.detect_real_accelerator() is None
