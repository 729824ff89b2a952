"""The private environment a compile-only dry run needs on a CPU-only machine.

MindSpore refuses ``auto_parallel`` / ``semi_auto_parallel`` on the CPU target, but its
parallel planner is device independent: it only needs the device target to be GPU and a
communication layer. This module prepares, under the user's cache (``$XDG_CACHE_HOME`` or
``~/.cache``, never a system path), a private CUDA_HOME that lets MindSpore's GPU plugin
load on a machine without a GPU:

``<cache>/msinspect/dryrun-cuda/<environment key>/`` (one per Python environment)
    ``bin/nvcc``
        a two-line shell script printing ``Cuda compilation tools, release 11.6, ...``;
        MindSpore reads the CUDA version from ``nvcc --version`` (its Python side passes
        ``"--version | grep release"`` as one argument and reads the first line).
    ``lib64/``
        links to the CUDA 11 libraries of the ``nvidia-*-cu11`` wheels, ``libcudnn.so``,
        version-named links MindSpore's version probe globs for, and ``libcuda.so.1``,
        the no-device stand-in compiled from ``csrc/libcuda_stub.c`` with the machine's
        C compiler.
    ``manifest.json``
        what was built from what, so that a re-run only redoes what changed.

:func:`setup_environment` is idempotent and safe to re-run (and to run twice at once: it
takes a file lock). :func:`check_prerequisites` lists what is missing and how to fix it.
"""
from __future__ import annotations

import dataclasses
import fcntl
import glob
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from msinspect.errors import MsInspectError

#: The CUDA version the fake nvcc reports; MindSpore 2.10 ships plugins for 11.1 and 11.6.
CUDA_RELEASE = "11.6"

#: Shared libraries MindSpore's GPU plugin needs, and the wheel that provides each.
WHEEL_LIBRARIES: dict[str, str] = {
    "libcublas.so.11": "nvidia-cublas-cu11",
    "libcublasLt.so.11": "nvidia-cublas-cu11",
    "libcurand.so.10": "nvidia-curand-cu11",
    "libcudnn.so.8": "nvidia-cudnn-cu11<9",
    "libcudart.so.11.0": "nvidia-cuda-runtime-cu11",
    "libcusolver.so.11": "nvidia-cusolver-cu11",
    "libcufft.so.10": "nvidia-cufft-cu11",
    "libcusparse.so.11": "nvidia-cusparse-cu11",
    "libnvrtc.so.11.2": "nvidia-cuda-nvrtc-cu11",
}

SUPPORTED_PYTHON = ((3, 9), (3, 12))  # MindSpore 2.10: Requires-Python >=3.9,<3.13
MINDSPORE_VERSION = "2.10.0"
STUB_SONAME = "libcuda.so.1"
MANIFEST_VERSION = 1
INSTALL_HINT = 'pip install "msinspect[dryrun]"'


class DryRunSetupError(MsInspectError, RuntimeError):
    """The dry-run environment is missing or cannot be built; the message says how to fix it."""

    def __init__(self, problems: list["Problem"]):
        self.problems = problems
        lines = ["the compile-only dry run cannot run here:"]
        lines += [f"  - {p.what}\n    fix: {p.fix}" for p in problems]
        super().__init__("\n".join(lines))


@dataclasses.dataclass(frozen=True)
class Problem:
    """One reason the dry run cannot work, with the fix."""

    what: str
    """What is missing or wrong, in the user's terms."""
    fix: str
    """The command or action that fixes it."""


@dataclasses.dataclass(frozen=True)
class DryRunEnvironment:
    """A prepared private CUDA_HOME; :meth:`env` gives the variables a dry-run process needs."""

    cuda_home: Path
    """The private CUDA_HOME folder under the user's cache."""

    @property
    def lib_dir(self) -> Path:
        """``lib64/`` with the wheel libraries and the stand-in libcuda."""
        return self.cuda_home / "lib64"

    @property
    def bin_dir(self) -> Path:
        """``bin/`` holding the fake ``nvcc``."""
        return self.cuda_home / "bin"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Return a copy of ``base`` (default ``os.environ``) set up for a dry-run process."""
        env = dict(os.environ if base is None else base)
        env["CUDA_HOME"] = str(self.cuda_home)
        env["PATH"] = _prepend(str(self.bin_dir), env.get("PATH", ""))
        env["LD_LIBRARY_PATH"] = _prepend(str(self.lib_dir), env.get("LD_LIBRARY_PATH", ""))
        return env


def _prepend(entry: str, value: str) -> str:
    parts = [p for p in value.split(os.pathsep) if p and p != entry]
    return os.pathsep.join([entry, *parts])


# --------------------------------------------------------------------------- locations


def environment_key() -> str:
    """A short name for this Python environment (its links point into this environment's wheels)."""
    prefix = os.path.realpath(sys.prefix)
    digest = hashlib.sha256(prefix.encode()).hexdigest()[:10]
    return f"py{sys.version_info.major}{sys.version_info.minor}-{digest}"


def default_cuda_home(cache: Path | str | None = None) -> Path:
    """Where the private CUDA_HOME lives: ``<cache>/msinspect/dryrun-cuda/<environment key>``, the
    cache being msinspect's (:func:`msinspect.cache.cache_root`) unless ``cache`` names one.

    One folder per Python environment, so that two virtual environments (each with its own
    CUDA wheels) never re-point each other's links.
    """
    from msinspect.cache import cache_root

    root = Path(cache) / "msinspect" if cache is not None else cache_root()
    return root / "dryrun-cuda" / environment_key()


def stub_source() -> Path:
    """The C source of the no-device libcuda stand-in.

    Found as package data of ``msinspect.csrc`` (the top-level ``csrc/`` folder, installed as
    ``msinspect/csrc/libcuda_stub.c``, or mapped there by an editable install), else at
    ``csrc/libcuda_stub.c`` at the top of a source checkout (an editable install made before
    ``msinspect.csrc`` existed).
    """
    candidates = []
    try:
        candidates.append(Path(str(importlib.resources.files("msinspect.csrc") / "libcuda_stub.c")))
    except ImportError:
        pass
    here = Path(__file__).resolve().parent
    candidates += [here.parent / "csrc" / "libcuda_stub.c", here.parents[1] / "csrc" / "libcuda_stub.c"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise DryRunSetupError([Problem(
        "the C source of the libcuda stand-in (csrc/libcuda_stub.c) is not in this installation",
        "reinstall msinspect: " + INSTALL_HINT)])


# --------------------------------------------------------------------------- probes
def find_c_compiler() -> str | None:
    """The C compiler to build the stand-in with: ``$CC``, then cc, gcc, clang."""
    cc_env = os.environ.get("CC", "").split()
    if cc_env and shutil.which(cc_env[0]):
        return shutil.which(cc_env[0])
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return found
    return None


def wheel_library_dirs() -> list[Path]:
    """Folders ``nvidia/*/lib`` of the installed ``nvidia-*-cu11`` wheels."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs: list[Path] = []
    for root in spec.submodule_search_locations:
        dirs += sorted(Path(p) for p in glob.glob(os.path.join(root, "*", "lib")) if os.path.isdir(p))
    return dirs


def find_wheel_libraries() -> dict[str, Path]:
    """Map each library of :data:`WHEEL_LIBRARIES` to its file in the wheels (found ones only)."""
    found: dict[str, Path] = {}
    for lib_dir in wheel_library_dirs():
        for name in WHEEL_LIBRARIES:
            if name not in found and (lib_dir / name).exists():
                found[name] = lib_dir / name
    return found


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def detect_real_accelerator() -> str | None:
    """Describe a real GPU or Ascend device on this machine, or return None.

    Where one is present the dry run is the wrong tool: MindSpore's own ``msrun`` runs the
    same scripts for real there.
    """
    ascend = sorted(glob.glob("/dev/davinci[0-9]*"))
    if ascend:
        return f"Ascend NPU ({', '.join(ascend[:4])}{' ...' if len(ascend) > 4 else ''})"
    if os.path.exists("/dev/nvidia0"):
        return "NVIDIA GPU (/dev/nvidia0)"
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        gpus = [line for line in out.stdout.splitlines() if line.startswith("GPU ")]
        if out.returncode == 0 and gpus:
            return f"NVIDIA GPU ({gpus[0].strip()})"
    return None


def check_prerequisites(*, need_compiler: bool = True) -> list[Problem]:
    """Everything that stops the dry run from working here, each with its fix (empty: all good)."""
    problems: list[Problem] = []
    system, machine = platform.system(), platform.machine()
    if system != "Linux" or machine not in ("x86_64", "AMD64"):
        problems.append(Problem(
            f"this is {system} {machine}; the dry run needs x86_64 Linux (MindSpore's GPU plugin "
            "and the CUDA 11 wheels exist only there)",
            "run it on an x86_64 Linux machine or container"))
    lo, hi = SUPPORTED_PYTHON
    if not (lo <= sys.version_info[:2] <= hi):
        problems.append(Problem(
            f"Python {sys.version_info.major}.{sys.version_info.minor} is not supported by "
            f"MindSpore {MINDSPORE_VERSION} (it needs {lo[0]}.{lo[1]} to {hi[0]}.{hi[1]})",
            f"use a Python {lo[0]}.{lo[1]}-{hi[0]}.{hi[1]} virtual environment, then {INSTALL_HINT}"))
    ms_version = _dist_version("mindspore")
    if ms_version is None:
        problems.append(Problem("MindSpore is not installed", INSTALL_HINT))
    elif ms_version != MINDSPORE_VERSION:
        problems.append(Problem(
            f"MindSpore {ms_version} is installed; the dry run is verified with {MINDSPORE_VERSION}",
            f'pip install "mindspore=={MINDSPORE_VERSION}"'))
    np_version = _dist_version("numpy")
    if np_version is not None and int(np_version.split(".")[0]) >= 2:
        problems.append(Problem(
            f"numpy {np_version} is installed; MindSpore {MINDSPORE_VERSION}'s dataset pipeline needs numpy<2",
            'pip install "numpy<2"'))
    found = find_wheel_libraries()
    missing = sorted({WHEEL_LIBRARIES[name] for name in WHEEL_LIBRARIES if name not in found})
    if missing:
        problems.append(Problem(
            "CUDA 11 user-space wheels missing: " + ", ".join(missing),
            INSTALL_HINT + "  (or: pip install " + " ".join(f'"{m}"' for m in missing) + ")"))
    if need_compiler and find_c_compiler() is None:
        problems.append(Problem(
            "no C compiler found (tried $CC, cc, gcc, clang); one is needed once, to build the "
            "no-device stand-in for libcuda.so.1",
            "install one, e.g. `sudo apt-get install gcc` (Debian/Ubuntu) or `sudo dnf install gcc`, "
            "or set CC=/path/to/compiler"))
    return problems


# --------------------------------------------------------------------------- setup
@dataclasses.dataclass
class SetupResult:
    """What :func:`setup_environment` did."""

    environment: DryRunEnvironment
    """The prepared environment."""
    actions: list[str]
    """What was created or rebuilt this time (empty: everything was already in place)."""
    seconds: float
    """Wall time of the setup."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _nvcc_script() -> str:
    return (
        "#!/bin/sh\n"
        "# msinspect dry run: not a compiler. MindSpore reads the CUDA version from the first\n"
        "# line of `nvcc --version`; nothing else is ever compiled with it.\n"
        f'echo "Cuda compilation tools, release {CUDA_RELEASE}, V{CUDA_RELEASE}.124"\n'
        'echo "nvcc: NVIDIA (R) Cuda compiler driver (msinspect dry-run stand-in)"\n'
    )


def _write_if_changed(path: Path, text: str, mode: int, actions: list[str]) -> None:
    if path.is_file() and path.read_text() == text and (path.stat().st_mode & 0o777) == mode:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    actions.append(f"wrote {path}")


def _link(path: Path, target: str, actions: list[str]) -> None:
    if path.is_symlink() and os.readlink(path) == target:
        return
    tmp = path.with_name(path.name + ".tmp-link")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, path)
    actions.append(f"linked {path.name} -> {target}")


def _build_stub(source: Path, out: Path, compiler: str) -> None:
    with tempfile.TemporaryDirectory(dir=out.parent) as tmpdir:
        tmp_out = Path(tmpdir) / out.name
        cmd = [compiler, "-shared", "-fPIC", "-O2", f"-Wl,-soname,{STUB_SONAME}", "-o", str(tmp_out), str(source)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise DryRunSetupError([Problem(
                f"building the libcuda stand-in failed ({' '.join(cmd)}):\n{proc.stderr.strip()}",
                "check that the C compiler works (e.g. `cc --version`), or set CC to another compiler")])
        os.replace(tmp_out, out)


def setup_environment(cuda_home: Path | str | None = None, *, force: bool = False) -> SetupResult:
    """Prepare (or refresh) the private CUDA_HOME; idempotent and safe to re-run.

    Raises :class:`DryRunSetupError` listing every problem found, each with its fix.
    """
    start = time.monotonic()
    problems = check_prerequisites(need_compiler=True)
    if problems:
        raise DryRunSetupError(problems)
    home = Path(cuda_home) if cuda_home is not None else default_cuda_home()
    home = home.expanduser().absolute()
    home.mkdir(parents=True, exist_ok=True)
    actions: list[str] = []
    with open(home / ".setup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        bin_dir, lib_dir = home / "bin", home / "lib64"
        bin_dir.mkdir(exist_ok=True)
        lib_dir.mkdir(exist_ok=True)
        manifest_path = home / "manifest.json"
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError):
            manifest = {}

        _write_if_changed(bin_dir / "nvcc", _nvcc_script(), 0o755, actions)

        libraries = find_wheel_libraries()
        lib_dirs = sorted({str(p.parent) for p in libraries.values()})
        # Every library file of the wheels' lib folders (cuDNN loads its sub-libraries by name).
        for lib_dir_src in lib_dirs:
            for entry in sorted(Path(lib_dir_src).iterdir()):
                if ".so" in entry.name:
                    _link(lib_dir / entry.name, str(entry), actions)
        # Names MindSpore's Python side looks for: libcudnn.so / libcuda.so in the library path,
        # and lib*/libcudart.so.X.Y.Z whose X.Y selects the plugin folder (gpu11.6).
        _link(lib_dir / "libcudnn.so", "libcudnn.so.8", actions)
        cudnn_version = _dist_version("nvidia-cudnn-cu11") or "8.0.0"
        _link(lib_dir / ("libcudnn.so." + ".".join(cudnn_version.split(".")[:3])), "libcudnn.so.8", actions)
        _link(lib_dir / f"libcudart.so.{CUDA_RELEASE}.0", "libcudart.so.11.0", actions)
        _link(lib_dir / "libcuda.so", STUB_SONAME, actions)

        source = stub_source()
        compiler = find_c_compiler()
        assert compiler is not None  # checked above
        stub = lib_dir / STUB_SONAME
        stub_hash = _sha256(source)
        if force or not stub.is_file() or manifest.get("stub_source_sha256") != stub_hash:
            _build_stub(source, stub, compiler)
            actions.append(f"built {stub} from {source.name} with {compiler}")

        new_manifest = {
            "manifest_version": MANIFEST_VERSION,
            "cuda_release": CUDA_RELEASE,
            "stub_source_sha256": stub_hash,
            "compiler": compiler,
            "wheel_library_dirs": lib_dirs,
            "mindspore": _dist_version("mindspore"),
            "python": sys.executable,
        }
        if new_manifest != manifest:
            manifest_path.write_text(json.dumps(new_manifest, indent=2) + "\n")
            if manifest:
                actions.append(f"updated {manifest_path}")
    return SetupResult(DryRunEnvironment(home), actions, time.monotonic() - start)


def environment_problems(cuda_home: Path | str | None = None) -> list[Problem]:
    """What is missing from a prepared environment (empty: ready to use). Does not build anything."""
    home = Path(cuda_home) if cuda_home is not None else default_cuda_home()
    problems = check_prerequisites(need_compiler=False)
    fix = "msinspect setup-dryrun"
    needed = [home / "bin" / "nvcc", home / "lib64" / STUB_SONAME, home / "lib64" / "libcudnn.so"]
    needed += [home / "lib64" / name for name in WHEEL_LIBRARIES]
    absent = [p for p in needed if not p.exists()]  # exists() follows links: a dangling link counts
    if absent:
        problems.append(Problem(
            f"the dry-run CUDA_HOME {home} is not set up or is stale (missing: "
            + ", ".join(p.name for p in absent[:4]) + (" ..." if len(absent) > 4 else "") + ")",
            fix))
    else:
        try:
            manifest = json.loads((home / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {}
        try:
            current = _sha256(stub_source())
        except DryRunSetupError:
            current = manifest.get("stub_source_sha256")
        if manifest.get("stub_source_sha256") != current:
            problems.append(Problem("the libcuda stand-in is older than its source", fix))
        wheel_dirs = sorted({str(p.parent) for p in find_wheel_libraries().values()})
        if wheel_dirs and manifest.get("wheel_library_dirs") != wheel_dirs:
            problems.append(Problem(
                f"the dry-run CUDA_HOME {home} links the CUDA wheels of another Python environment "
                f"({manifest.get('python', 'unknown')})", fix + "  (with this environment's Python)"))
    return problems


def load_environment(cuda_home: Path | str | None = None) -> DryRunEnvironment:
    """The prepared environment, or :class:`DryRunSetupError` saying what to run."""
    problems = environment_problems(cuda_home)
    if problems:
        raise DryRunSetupError(problems)
    home = Path(cuda_home) if cuda_home is not None else default_cuda_home()
    return DryRunEnvironment(home.expanduser().absolute())
