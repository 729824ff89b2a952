"""Setup of the private CUDA_HOME, the libcuda stand-in and the prerequisite report."""
from __future__ import annotations

import ctypes
import subprocess

import pytest


@pytest.fixture()
def prepared(tmp_path):
    from msinspect.dryrun import check_prerequisites, setup_environment

    problems = check_prerequisites()
    if problems:
        pytest.skip("; ".join(p.what for p in problems))
    return setup_environment(tmp_path / "cuda")


def test_setup_is_idempotent(prepared, tmp_path):
    from msinspect.dryrun import environment_problems, setup_environment

    assert prepared.actions
    again = setup_environment(tmp_path / "cuda")
    assert again.actions == []
    assert environment_problems(tmp_path / "cuda") == []


def test_setup_repairs_what_was_removed(prepared, tmp_path):
    from msinspect.dryrun import environment_problems, setup_environment

    home = tmp_path / "cuda"
    (home / "lib64" / "libcuda.so.1").unlink()
    (home / "bin" / "nvcc").unlink()
    assert environment_problems(home)
    again = setup_environment(home)
    assert any("libcuda.so.1" in a for a in again.actions)
    assert environment_problems(home) == []


def test_fake_nvcc_reports_release_first(prepared):
    home = prepared.environment.cuda_home
    # MindSpore passes "--version | grep release" as ONE argument and reads the first line.
    out = subprocess.run([str(home / "bin" / "nvcc"), "--version | grep release"], capture_output=True, text=True)
    first = out.stdout.splitlines()[0]
    assert "release 11.6," in first


def test_stub_reports_no_device(prepared):
    lib = ctypes.CDLL(str(prepared.environment.lib_dir / "libcuda.so.1"))
    assert lib.cuInit(0) == 100
    for name in ("cuDeviceGetAttribute", "cuGetErrorName", "cuLaunchKernel", "cuModuleGetFunction",
                 "cuModuleLoadDataEx", "cuModuleUnload", "cuStreamSynchronize"):
        assert hasattr(lib, name), name


def test_env_points_at_private_home(prepared):
    env = prepared.environment.env({"PATH": "/usr/bin", "LD_LIBRARY_PATH": ""})
    assert env["CUDA_HOME"] == str(prepared.environment.cuda_home)
    assert env["PATH"].split(":")[0] == str(prepared.environment.bin_dir)
    assert env["LD_LIBRARY_PATH"] == str(prepared.environment.lib_dir)


def test_cache_location_honours_xdg(monkeypatch, tmp_path):
    from msinspect.dryrun import default_cuda_home
    from msinspect.dryrun.environment import environment_key

    key = environment_key()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cuda_home() == tmp_path / "xdg" / "msinspect" / "dryrun-cuda" / key
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cuda_home() == tmp_path / "home" / ".cache" / "msinspect" / "dryrun-cuda" / key


def test_missing_compiler_is_reported_with_fix(monkeypatch):
    from msinspect.dryrun import environment as envmod

    monkeypatch.setattr(envmod, "find_c_compiler", lambda: None)
    problems = envmod.check_prerequisites()
    compiler = [p for p in problems if "C compiler" in p.what]
    assert compiler and "apt-get install gcc" in compiler[0].fix
    with pytest.raises(envmod.DryRunSetupError) as info:
        envmod.setup_environment("/nonexistent/never-created")
    assert "C compiler" in str(info.value)


def test_missing_wheels_point_at_the_extra(monkeypatch):
    from msinspect.dryrun import environment as envmod

    monkeypatch.setattr(envmod, "find_wheel_libraries", lambda: {})
    problems = envmod.check_prerequisites(need_compiler=False)
    wheels = [p for p in problems if "CUDA 11" in p.what]
    assert wheels and "msinspect[dryrun]" in wheels[0].fix


def test_unprepared_home_is_reported(tmp_path):
    from msinspect.dryrun import DryRunSetupError, load_environment

    with pytest.raises(DryRunSetupError) as info:
        load_environment(tmp_path / "empty")
    assert "msinspect setup-dryrun" in str(info.value)
