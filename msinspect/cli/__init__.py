"""The ``msinspect`` command line: a thin layer over the public API.

Subcommands live in their own modules and are imported only when used, so
``msinspect --help`` stays fast and ``msinspect parse`` never imports MindSpore.
"""
from __future__ import annotations

import importlib

import click

# name -> "module:attribute"; one line per subcommand.
COMMANDS: dict[str, str] = {
    "parse": "msinspect.cli.parse_cmd:parse",
    "summary": "msinspect.cli.summary_cmd:summary",
    "strategies": "msinspect.cli.tables_cmd:strategies",
    "comm": "msinspect.cli.tables_cmd:comm",
    "shapes": "msinspect.cli.tables_cmd:shapes",
    "diff": "msinspect.cli.diff_cmd:diff",
    "check": "msinspect.cli.check_cmd:check",
    "render": "msinspect.cli.render_cmd:render",
    "scrub": "msinspect.cli.scrub_cmd:scrub",
    "train": "msinspect.cli.train_cmd:train",
    "dryrun": "msinspect.cli.dryrun_cmd:dryrun",
    "setup-dryrun": "msinspect.cli.setup_cmd:setup_dryrun",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="msinspect")
def main() -> None:
    """Inspect MindSpore IR dumps: what the auto-parallel planner did, per rank."""
