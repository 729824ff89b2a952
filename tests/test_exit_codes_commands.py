"""One exit-code table: the same error ends every command with the same code (issue 10: a
DryRunSetupError exited 2 from ``dryrun`` and ``setup-dryrun`` but 1 from ``train``)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from msinspect.cli import main
from msinspect.cli.exits import EXIT_USAGE
from msinspect.dryrun.environment import DryRunSetupError, Problem

PROBLEM = Problem("the libcuda stand-in is missing", "msinspect setup-dryrun")


def _raise(*_args, **_kwargs):
    raise DryRunSetupError([PROBLEM])


@pytest.mark.parametrize("command, patch", [
    (["train", "sharding_propagation", "--no-check"], "msinspect.train.run_job"),
    (["dryrun", "{script}", "--ranks", "2"], "msinspect.dryrun.run_dryrun"),
    (["setup-dryrun"], "msinspect.dryrun.setup_environment"),
])
def test_dryrun_setup_error_exits_usage_everywhere(monkeypatch, tmp_path, command, patch):
    script = tmp_path / "net.py"
    script.write_text("")
    monkeypatch.setattr(patch, _raise)
    result = CliRunner().invoke(main, [c.format(script=script) for c in command])
    assert result.exit_code == EXIT_USAGE, result.output
    assert PROBLEM.fix in result.output
