"""Each parallel network of the model zoo passes its expectation spec (fixtures/zoo/nets/*.toml):
facts worked out by hand from the network script and the device count, written before any dump
was read, checked with ``msinspect.check_dump`` against the kept, scrubbed dump. One test per
spec entry, so that an entry failing on a known msinspect bug is marked alone."""
from __future__ import annotations

from functools import lru_cache

import pytest

import msinspect
from msinspect.spec import load_spec
from tests.zoo.zoo_manifest import ZOO, networks

#: Entries that fail on an msinspect bug, not on a wrong expectation: (network, entry) -> the bug.
KNOWN_BUGS: dict[tuple[str, str], str] = {}


def _specced():
    return [net for net in networks() if "spec" in net]


@lru_cache(maxsize=None)
def _report(name: str):
    net = next(n for n in _specced() if n["name"] == name)
    return msinspect.check_dump(ZOO / net["spec"], ZOO / name)


def _cases():
    for net in _specced():
        spec = load_spec(ZOO / net["spec"])
        labels = (["job"] if spec.ranks is not None else []) + [e.label for e in spec.expectations]
        for label in labels:
            bug = KNOWN_BUGS.get((net["name"], label))
            marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
            yield pytest.param(net["name"], label, id=f"{net['name']}-{label}", marks=marks)


@pytest.mark.parametrize(("name", "label"), list(_cases()))
def test_zoo_spec_entry_holds(name, label):
    outcomes = [o for o in _report(name).outcomes
                if (o.expectation.label if o.expectation.kind != "job" else "job") == label]
    assert len(outcomes) == 1, f"{name}: no single outcome for {label}"
    o = outcomes[0]
    evidence = "\n".join(ev.format() for ev in o.evidence[:4])
    assert o.passed, f"{name} {label} {o.expectation.target}\nexpected: {o.expected}\nfound:    {o.found}\n{evidence}"


def test_every_spec_entry_is_by_hand():
    for net in _specced():
        spec = load_spec(ZOO / net["spec"])
        assert {e.basis for e in spec.expectations} == {"by_hand"}, net["name"]
