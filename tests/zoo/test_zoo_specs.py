"""Each parallel network of the model zoo passes its expectation spec (fixtures/zoo/nets/*.toml):
facts worked out by hand from the network script and the device count, written before any dump
was read, checked with ``msinspect.check_dump`` against the kept, scrubbed dump."""
from __future__ import annotations

import pytest

import msinspect
from tests.zoo.zoo_manifest import ZOO, networks

#: Networks whose check fails on an analysis bug, not on a wrong expectation: name -> the bug.
KNOWN_BUGS: dict[str, str] = {}


def _cases():
    for net in networks():
        if "spec" not in net:
            continue
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[net["name"]])] if net["name"] in KNOWN_BUGS else []
        yield pytest.param(net, id=net["name"], marks=marks)


@pytest.mark.parametrize("net", list(_cases()))
def test_zoo_network_passes_its_spec(net):
    report = msinspect.check_dump(ZOO / net["spec"], ZOO / net["name"])
    assert report.ok, report.format(only_failed=True)
