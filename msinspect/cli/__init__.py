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
    "cost": "msinspect.cli.cost_cmd:cost",
    "shapes": "msinspect.cli.tables_cmd:shapes",
    "diff": "msinspect.cli.diff_cmd:diff",
    "compare": "msinspect.cli.compare_cmd:compare",
    "check": "msinspect.cli.check_cmd:check",
    "explain": "msinspect.cli.explain_cmd:explain",
    "export": "msinspect.cli.export_cmd:export",
    "render": "msinspect.cli.render_cmd:render",
    "report": "msinspect.cli.report_cmd:report",
    "scrub": "msinspect.cli.scrub_cmd:scrub",
    "train": "msinspect.cli.train_cmd:train",
    "view": "msinspect.cli.view_cmd:view",
    "dryrun": "msinspect.cli.dryrun_cmd:dryrun",
    "sweep": "msinspect.cli.sweep_cmd:sweep",
    "setup-dryrun": "msinspect.cli.setup_cmd:setup_dryrun",
    "cache": "msinspect.cli.cache_cmd:cache",
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

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """The subcommand, once no argument holds a NUL character: no path or name can, so such an
        argument is a usage error (:class:`~msinspect.errors.BadArgumentError`) before any is read."""
        from msinspect.errors import BadArgumentError, shown_path

        for arg in args:
            if "\0" in arg:
                raise BadArgumentError(f"argument {shown_path(arg)}: holds a NUL character, which no path or name can")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context):
        """Run the subcommand; every error it raises ends in a message and an exit code
        (:mod:`msinspect.cli.exits`), never in a traceback unless ``--debug``."""
        from msinspect.cli import exits

        try:
            super().invoke(ctx)
        except (SystemExit, click.exceptions.Exit) as done:
            code = done.code if isinstance(done, SystemExit) else done.exit_code
            ctx.exit(exits.final_code(code))
        except BaseException as error:  # noqa: B036 (sorted by exits.handled)
            if not exits.handled(error):
                raise
            ctx.exit(exits.report(error))
        ctx.exit(exits.final_code(0))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Exit codes: 0 fine; 1 a finding (failed expectation, shape mismatch, IR that does "
                    "not parse or is not text, ranks that could not be read); 2 bad input (no such path, "
                    "no IR files, bad spec or argument, output exists, a setting that cannot be used, a "
                    "file over MSINSPECT_MAX_IR_BYTES); 3 a program msinspect needs is missing (Graphviz's "
                    "dot); 66 an IR file that cannot be read (permissions, I/O error); 70 internal error "
                    "(a bug: please report it); 71 a process reading files died (killed, out of memory).")
@click.version_option(package_name="msinspect")
@click.option("--debug", is_flag=True, help="On an error, also print the Python traceback.")
@click.option("--no-cache", is_flag=True, help="Parse and analyse every file again; neither read nor write the caches "
                                              "of parsed files and analysed ranks (also: MSINSPECT_NO_CACHE=1).")
@click.option("-v", "--verbose", is_flag=True,
              help="Also say how msinspect read the files (which ranks it read by what differs from a rank "
                   "read in full, and why a rank was read in full): notes on stderr, before the answer.")
def main(debug: bool, no_cache: bool, verbose: bool) -> None:  # -v: read by msinspect.cli.reads.verbose
    """Inspect MindSpore IR dumps: what the auto-parallel planner did, per rank."""
    if no_cache:
        import os

        os.environ["MSINSPECT_NO_CACHE"] = "1"  # worker processes inherit it


def run() -> None:
    """The ``msinspect`` program: this process is msinspect's own, so it may pause Python's cycle
    collector around a parse (:mod:`msinspect.collector`); :func:`main` called from another
    program leaves that program's collector alone."""
    from msinspect import collector

    collector.own_process()
    main(prog_name="msinspect")
