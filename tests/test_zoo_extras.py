"""The zoo's extras (tools/zoo_extras.py): what MindFormers 2.0.0 is installed with, the placeholder
that stands in for hyper-parallel (on no public index), and how tools/regen_zoo.py asks for them.
Nothing here installs or imports MindFormers."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import regen_zoo  # noqa: E402
import zoo_extras  # noqa: E402

#: mindformers 2.0.0's Requires-Dist, as its wheel's METADATA states them (a sample of the kinds).
REQUIRES = ["setuptools>=83.0.0", "sentencepiece>=0.2.1", "pyarrow>=23.0.1", "numpy<2.0.0",
            "transformers==4.57.1", "mindspore~=2.10.0", "hyper-parallel~=1.0.0", "Hyper_Parallel",
            'pytest; extra == "test"', 'pywin32; sys_platform == "win32"']


def test_requirements_leave_out_what_is_not_installed_from_the_index():
    reqs = zoo_extras.mindformers_requirements(REQUIRES)
    assert reqs == ["sentencepiece>=0.2.1", "pyarrow==23.0.1", "numpy<2.0.0", "transformers==4.57.1"]


def test_the_placeholder_imports_every_name_and_does_nothing(tmp_path):
    package = tmp_path / "hyper_parallel"
    package.mkdir()
    (package / "__init__.py").write_text(zoo_extras.PLACEHOLDER.format(version="2.0.0"))
    program = """
import hyper_parallel
from hyper_parallel import DTensor, SkipDTensorDispatch
from hyper_parallel.core.dtensor.dtensor import DTensor as D2, distribute_tensor
from hyper_parallel.platform import get_platform
platform = get_platform()                     # called at import time by mindformers.pynative
platform.differentiable_all_to_all_single_async(1, 2)
class Mine(DTensor):                          # subclassed at import time
    pass
assert hyper_parallel.PLACEHOLDER is True
assert not isinstance(object(), DTensor) and not isinstance(3, D2)
assert callable(distribute_tensor)
try:
    hyper_parallel.__version__
except AttributeError:
    pass
else:
    raise SystemExit("a dunder name must not be invented")
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_net_that_names_an_unknown_extra_is_refused(tmp_path):
    manifest = tmp_path / "zoo.toml"
    manifest.write_text('[[net]]\nname = "x"\nscript = "x.py"\nmode = "dryrun"\nneeds = ["nothing"]\n')
    with pytest.raises(regen_zoo.Failed, match="no such extra"):
        regen_zoo.load_manifest(manifest)


def test_a_missing_extra_stops_the_run_unless_asked_to_install(monkeypatch):
    nets = [regen_zoo.Net(name="11_x", script=Path("x.py"), mode="dryrun", needs=("mindformers",)),
            regen_zoo.Net(name="01_y", script=Path("y.py"), mode="dryrun")]
    installed = []
    monkeypatch.setattr(zoo_extras, "problem", lambda name, python=sys.executable: "MindFormers is not installed")
    monkeypatch.setattr(zoo_extras, "install", lambda name, python=sys.executable: installed.append(name))
    with pytest.raises(regen_zoo.Failed, match=r"11_x need\(s\) mindformers: MindFormers is not installed; "
                                                r"run with --install-extras"):
        regen_zoo.prepare_extras(nets, install=False)
    assert installed == []
    regen_zoo.prepare_extras(nets, install=True)
    assert installed == ["mindformers"]
    regen_zoo.prepare_extras(nets[1:], install=False)  # nothing needed: nothing asked


def test_the_zoo_manifest_names_only_known_extras():
    nets = regen_zoo.load_manifest()
    assert {e for n in nets for e in n.needs} <= set(zoo_extras.EXTRAS)
