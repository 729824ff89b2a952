"""Shared by the plugin tests: fixture paths, loading the plugin in inner pytest runs, reading IR
lines independently of msinspect."""
from __future__ import annotations

import gzip
import re
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SEED = FIXTURES / "seed_002"
SHARDING = FIXTURES / "sharding_propagation_dryrun_8rank"
MANUAL = FIXTURES / "manual_parallel_8rank"
PLUGIN_MODULE = "msinspect.pytest_plugin"
#: ``path/to/file.ir:12:`` or ``.ir.gz:12:`` in a failure message.
IR_REF = re.compile(r"(\S+\.ir(?:\.gz)?):(\d+): ")


def entry_point_installed() -> bool:
    """Whether the installed distribution declares the plugin under ``pytest11``."""
    return any(ep.value == PLUGIN_MODULE for ep in entry_points(group="pytest11"))


def plugin_args() -> list[str]:
    """What an inner pytest run needs to load the plugin: nothing once the entry point is
    installed (``-p`` would then register the module a second time), else ``-p``."""
    return [] if entry_point_installed() else ["-p", PLUGIN_MODULE]


def ir_refs(message: str) -> list[tuple[Path, int]]:
    """Every ``file:line`` a failure message cites."""
    return [(Path(f), int(n)) for f, n in IR_REF.findall(message)]


def raw_line(path: Path, line: int) -> str:
    """Line ``line`` (1-based) of an IR file, read with the standard library only."""
    path = path if path.is_absolute() else ROOT / path
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()[line - 1]
