"""Extra packages that some networks of the model zoo need, installed by the zoo's own tool.

A network of ``fixtures/zoo/zoo.toml`` names what it needs beyond msinspect's train and dry-run
extras in ``needs = ["mindformers"]``. ``tools/regen_zoo.py`` asks :func:`problem` about each
before it runs anything and, with ``--install-extras``, installs what is missing with
:func:`install` into the Python environment it runs in (the one whose ``msinspect dryrun`` runs
the network scripts). msinspect itself and its tests never need these packages: only the
regeneration of the networks that name them does.

``mindformers``: MindFormers 2.0.0 (the release that pairs with MindSpore 2.10). Its wheel
requires ``hyper-parallel~=1.0.0``, which is on no public index ("from versions: none"), and
``import mindformers`` imports it (for its PyNative code only; the graph-mode models the zoo
builds never call it). So it is installed in four steps:

1. ``pip install --no-deps mindformers==2.0.0``;
2. its other requirements, read from its own metadata (``Requires-Dist``), under constraints that
   keep the environment as the dry run needs it: ``numpy<2`` (MindSpore 2.10's dataset pipeline)
   and the installed MindSpore; ``pyarrow`` is pinned to 23.0.1 (pyarrow 26 "requires NumPy 2.0
   or newer"); ``mindspore`` (installed already), ``hyper-parallel`` (step 3) and ``setuptools``
   (a build-time need: nothing in the wheel imports it) are left out;
3. a placeholder ``hyper_parallel`` package in the environment's site-packages
   (:data:`PLACEHOLDER`): every name imports and does nothing (``import mindformers`` calls some
   of them at import time, e.g. ``hyper_parallel.platform.get_platform()``);
4. a check that ``from mindformers.models.llama import LlamaForCausalLM`` imports and that numpy
   and MindSpore are what they were.

Run alone: ``python tools/zoo_extras.py mindformers`` (``--check`` only reports).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

MINDFORMERS_VERSION = "2.0.0"
#: Requirements of mindformers' metadata that are not installed from the index, and why.
SKIPPED = {
    "mindspore": "installed already (msinspect's train / dry-run extras); never replaced",
    "hyper-parallel": "on no public index; a placeholder package stands in (PyNative code only)",
    "setuptools": "a build-time need: nothing in the mindformers wheel imports it",
}
#: Requirements whose version the index's newest would break here.
PINNED = {"pyarrow": "pyarrow==23.0.1"}  # pyarrow 26 refuses numpy<2

PLACEHOLDER = '''"""Placeholder for hyper-parallel 1.0, which is on no public package index.

Written by msinspect's tools/zoo_extras.py when it installed MindFormers {version}:
``import mindformers`` imports hyper_parallel for MindFormers' PyNative code (and calls some of
it while importing), which graph-mode models (LlamaForCausalLM compiled by MindSpore) never run.
Every name of this package and its submodules imports, and can be called, subclassed and read
from; all of it does nothing, and nothing is an instance of its classes. Delete this folder to
remove it.
"""
import importlib.abc
import importlib.machinery
import sys
import types

PLACEHOLDER = True


class _Meta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _missing(cls.__module__, cls.__qualname__ + "." + name)


class _Missing(metaclass=_Meta):
    """Stands for any class, function or value of hyper_parallel."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _missing(type(self).__module__, type(self).__qualname__ + "." + name)()


def _missing(module, name):
    return _Meta(name.rpartition(".")[2], (_Missing,), {{"__module__": module, "__qualname__": name}})


def _attr(module, name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _missing(module, name)


def __getattr__(name):
    return _attr(__name__, name)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(__name__ + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda name, _m=spec.name: _attr(_m, name)
        return module

    def exec_module(self, module):
        pass


sys.meta_path.append(_Finder())
'''


class ExtraError(RuntimeError):
    """An extra could not be installed or is not usable; the message says what to do."""


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    code = subprocess.call(cmd)
    if code != 0:
        raise ExtraError(f"exit status {code}: {' '.join(cmd)}")


def _import_check(python: str) -> str | None:
    """Why ``python`` cannot import MindFormers' LLaMA, or None when it can."""
    code = ("import mindformers, hyper_parallel; from mindformers.models.llama import LlamaForCausalLM, "
            "LlamaConfig; from mindformers.modules.transformer import TransformerOpParallelConfig")
    with tempfile.TemporaryDirectory(prefix="mindformers-import-") as where:
        # MindFormers logs into ./output/log (or $LOCAL_DEFAULT_PATH) as soon as it is imported
        env = dict(os.environ, LOCAL_DEFAULT_PATH=where)
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=where, env=env)
    if proc.returncode == 0:
        return None
    lines = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def mindformers_problem(python: str = sys.executable) -> str | None:
    """What stops the zoo's MindFormers networks here (None: nothing)."""
    version = _version("mindformers")
    if version is None:
        return "MindFormers is not installed"
    if version != MINDFORMERS_VERSION:
        return f"MindFormers {version} is installed; the zoo's networks are made with {MINDFORMERS_VERSION}"
    why = _import_check(python)
    return f"MindFormers {version} does not import: {why}" if why else None


def mindformers_requirements(requires: list[str] | None = None) -> list[str]:
    """MindFormers' own requirements (``requires``, default: its installed metadata's
    ``Requires-Dist``) as this environment installs them: :data:`SKIPPED` left out,
    :data:`PINNED` pinned, an extra's or another platform's requirement dropped."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    out = []
    for text in (importlib.metadata.requires("mindformers") or []) if requires is None else requires:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue  # an extra's requirement, or another platform's
        name = canonicalize_name(req.name)
        if name in SKIPPED:
            continue
        out.append(PINNED.get(name, str(req)))
    return out


def install_mindformers(python: str = sys.executable) -> None:
    """Install MindFormers 2.0.0 into this environment as the module docstring says."""
    if python != sys.executable:
        raise ExtraError("MindFormers is installed into the environment this tool runs in; "
                         f"run it with {python}")
    numpy, mindspore = _version("numpy"), _version("mindspore")
    if mindspore is None:
        raise ExtraError("MindSpore is not installed; install msinspect's dry-run extra first")
    pip = [python, "-m", "pip", "install", "--disable-pip-version-check"]
    if _version("mindformers") != MINDFORMERS_VERSION:
        _run([*pip, "--no-deps", f"mindformers=={MINDFORMERS_VERSION}"])
    with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="mindformers-constraints-") as constraints:
        constraints.write(f"numpy<2\nmindspore=={mindspore}\n")
        constraints.flush()
        _run([*pip, "-c", constraints.name, *mindformers_requirements()])
    purelib = Path(sysconfig.get_paths()["purelib"])
    placeholder = purelib / "hyper_parallel" / "__init__.py"
    if _version("hyper-parallel") is None:  # never over a real installation
        placeholder.parent.mkdir(exist_ok=True)
        placeholder.write_text(PLACEHOLDER.format(version=MINDFORMERS_VERSION), encoding="utf-8")
        print(f"wrote the hyper_parallel placeholder: {placeholder}", flush=True)
    changed = [f"{name} {before} -> {_version(name)}" for name, before in (("numpy", numpy), ("mindspore", mindspore))
               if _version(name) != before]
    if changed:
        raise ExtraError("installing MindFormers changed " + ", ".join(changed))
    why = mindformers_problem(python)
    if why:
        raise ExtraError(why)
    print(f"MindFormers {MINDFORMERS_VERSION} is ready", flush=True)


#: Every extra a zoo network may name in ``needs``: (what stops it, how to install it).
EXTRAS = {"mindformers": (mindformers_problem, install_mindformers)}


def problem(name: str, python: str = sys.executable) -> str | None:
    """Why the extra ``name`` is not usable here (None: it is); ExtraError for an unknown name."""
    if name not in EXTRAS:
        raise ExtraError(f"unknown extra {name!r}; known: {sorted(EXTRAS)}")
    return EXTRAS[name][0](python)


def install(name: str, python: str = sys.executable) -> None:
    """Install the extra ``name`` when it is not usable already."""
    if problem(name, python) is None:
        return
    EXTRAS[name][1](python)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extras", nargs="+", choices=sorted(EXTRAS))
    parser.add_argument("--check", action="store_true", help="only say whether each is usable")
    args = parser.parse_args(argv)
    status = 0
    for name in args.extras:
        try:
            if not args.check:
                install(name)
            why = problem(name)
        except ExtraError as exc:
            why = str(exc)
        print(f"{name}: {why or 'ready'}")
        status |= bool(why)
    return status


if __name__ == "__main__":
    sys.exit(main())
