"""``msinspect setup-dryrun``: prepare the compile-only dry-run environment (idempotent)."""
from __future__ import annotations

import sys

import click


@click.command("setup-dryrun")
@click.option("--check", "check_only", is_flag=True, help="Only report what is missing; build nothing.")
@click.option("--force", is_flag=True, help="Rebuild the libcuda stand-in even if it is up to date.")
def setup_dryrun(check_only: bool, force: bool) -> None:
    """Prepare the dry-run environment: a private CUDA_HOME under your cache folder.

    It holds a version probe for MindSpore, links to the CUDA 11 wheel libraries and a
    no-device stand-in for libcuda.so.1 built with your C compiler. Safe to re-run: only
    what is missing or stale is redone. Needs `pip install "msinspect[dryrun]"` first.
    """
    from msinspect.dryrun import (DryRunSetupError, default_cuda_home, detect_real_accelerator,
                                  environment_problems, setup_environment)

    accel = detect_real_accelerator()
    if accel:
        click.echo(f"note: a real accelerator is present ({accel}); MindSpore's own msrun runs "
                   "scripts for real here, the dry run is meant for machines without one.", err=True)
    if check_only:
        problems = environment_problems()
        if not problems:
            click.echo(f"dry-run environment ready: {default_cuda_home()}")
            return
        for p in problems:
            click.echo(f"missing: {p.what}\n  fix: {p.fix}", err=True)
        sys.exit(1)
    try:
        result = setup_environment(force=force)
    except DryRunSetupError as exc:
        for p in exc.problems:
            click.echo(f"error: {p.what}\n  fix: {p.fix}", err=True)
        sys.exit(2)
    home = result.environment.cuda_home
    if result.actions:
        for action in result.actions:
            click.echo(f"  {action}")
        click.echo(f"dry-run environment prepared in {result.seconds:.2f} s: {home}")
    else:
        click.echo(f"dry-run environment already up to date ({result.seconds:.2f} s): {home}")
    click.echo("next: msinspect dryrun SCRIPT --ranks 8")
