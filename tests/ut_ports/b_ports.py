"""The second share of the ports of MindSpore's own parallel unit tests (issue 27): the networks of
``fixtures/ut/ut_b.toml`` (AlltoAll, pipeline and pipeline inference with lazy_inline, optimizer
shard, the Layout extension, dynamic shape), each with its scrubbed dump ``fixtures/ut/<name>/`` and
its spec ``fixtures/ut/<name>.toml`` (facts derived by hand, and the UT's own assertions where they
hold on MindSpore 2.10).

:func:`check_port` checks a port's dump against its spec with ``msinspect.check_dump`` (once per
port and session) and fails with every entry that does not hold, its evidence and the IR line.
Entries that fail on a known gap of msinspect are listed in :data:`KNOWN_GAPS`, with the gap;
the gaps' own tests (``test_known_gap_*``) pass (XPASS) once a gap closes, a sign to drop it. A
spec the reader refuses fails its port: the language has every key the ports use."""
from __future__ import annotations

import gzip
import re
from functools import lru_cache
from pathlib import Path

import pytest

import msinspect
from msinspect.spec import load_spec

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

UT = Path(__file__).resolve().parents[2] / "fixtures" / "ut"
MANIFEST = UT / "ut_b.toml"

#: (port, entry) -> the gap in msinspect that makes the entry fail; each entry was checked by hand
#: against the IR line named here.
KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("b_test_pipeline_inference__test_pipeline_inference_first_stage", "expect.record[0]"):
        "network.fc0.weight's layout cannot be told: rank 0 of 4 sends to rank 2 and names no group, and its "
        "file (step_parallel_end: 'Send(%6) {instance name: Send} primitive_attrs: {shape: [2, 32], dest_rank: "
        "I64(2), group: \"nccl_world_group\" ...} cnode_primal_attrs: {pipeline_end: I64(1), micro: I64(1), "
        "freeze: Bool(0)}': no stage) states neither its stage nor its peer's, so stages of 1 or 2 ranks both "
        "fit; MindSpore's record says device matrix [2] (2 stages of 2)",
}


def ports(*prefixes: str) -> list[str]:
    """The names of the manifest's networks that start with ``b_<prefix>``, in manifest order."""
    nets = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["net"]
    return [n["name"] for n in nets if any(n["name"].startswith(f"b_{p}") for p in prefixes)]


def gaps_of(names: list[str]) -> list:
    """One pytest param per known gap of these ports, for ``test_known_gap_*``."""
    return [pytest.param(port, label, id=f"{port}-{label}")
            for (port, label) in KNOWN_GAPS if port in names]


@lru_cache(maxsize=None)
def _report(name: str):
    return msinspect.check_dump(UT / f"{name}.toml", UT / name)


def _spec(name: str) -> None:
    """The port's spec reads: an error of the reader fails the port, never an expected failure."""
    load_spec(UT / f"{name}.toml")


def _describe(o) -> str:
    evidence = "\n".join(f"      {ev.format()}" for ev in o.evidence[:3])
    return (f"  {o.expectation.label} {o.expectation.target} [{o.expectation.basis}]\n"
            f"    expected: {o.expected}\n    found:    {o.found}\n{evidence}")


def check_port(name: str) -> None:
    """The port's dump passes its spec, but for the entries of :data:`KNOWN_GAPS`."""
    _spec(name)
    failed = [o for o in _report(name).outcomes
              if not o.passed and (name, o.expectation.label) not in KNOWN_GAPS]
    assert not failed, f"{name}: {len(failed)} entr(ies) fail\n" + "\n".join(map(_describe, failed))


def check_known_gap(name: str, label: str) -> None:
    """The entry passes (it will, once msinspect closes the gap; until then an expected failure)."""
    outcome = next(o for o in _report(name).outcomes if o.expectation.label == label)
    assert outcome.passed, _describe(outcome)


def dump_of(name: str):
    """The port's dump, loaded once a session (for the pytest-API forms)."""
    return _loaded(name)


@lru_cache(maxsize=None)
def _loaded(name: str):
    return msinspect.load_dump(UT / name)


def msinspect_helper(helper: str):
    """``msinspect.testing.<helper>``, or an expected failure where it is not there yet."""
    import msinspect.testing

    found = getattr(msinspect.testing, helper, None)
    if found is None:
        pytest.xfail(f"msinspect.testing.{helper} (docs/spec-language.md) is not there yet")
    return found


def ir_line(name: str, rank: int, stage: str, number: int) -> str:
    """Line ``number`` (1-based) of the port's kept IR file of ``stage`` on ``rank``, as MindSpore wrote it."""
    files = sorted((UT / name / f"rank_{rank}").glob(f"*{stage}_*.ir.gz"))
    assert len(files) == 1, f"{name} rank {rank}: one {stage} file expected, found {files}"
    return gzip.decompress(files[0].read_bytes()).decode().splitlines()[number - 1]


def ir_lines(name: str, rank: int, stage: str, pattern: str) -> list[int]:
    """The numbers of the lines of that file that match ``pattern`` (a regular expression)."""
    files = sorted((UT / name / f"rank_{rank}").glob(f"*{stage}_*.ir.gz"))
    text = gzip.decompress(files[0].read_bytes()).decode().splitlines()
    return [i for i, line in enumerate(text, 1) if re.search(pattern, line)]


def fails(name: str, kind: str, raw: dict, stage: str | None = None):
    """Check one expectation (a spec entry as a dict) on the port's dump; return its outcome, which
    the caller expects to fail: a UT assertion that does not hold on 2.10."""
    from msinspect.spec import Spec, expectation_from

    entry = dict(raw, **({"stage": stage} if stage else {}))
    spec = Spec(UT / f"{name}.toml", name, None, "step_parallel_end", [expectation_from(kind, 0, entry)])
    return msinspect.check_dump(spec, UT / name).outcomes[0]
