"""Compile-only dry run of MindSpore's auto-parallel planner on a CPU-only machine.

``setup_environment()`` prepares a private CUDA_HOME under the user's cache once;
``run_dryrun(script, ranks)`` then runs the script as ``ranks`` simulated ranks and returns
a :class:`DryRunReport` of the per-rank strategy IR written. Nothing is computed in a dry
run. See :mod:`msinspect.dryrun.launcher` for what a script must do to run unchanged.

Importing this package does not import MindSpore.
"""
from __future__ import annotations

from .environment import (DryRunEnvironment, DryRunSetupError, Problem, SetupResult, check_prerequisites,
                          default_cuda_home, detect_real_accelerator, environment_problems, load_environment,
                          setup_environment)
from .launcher import DryRunError, DryRunInterrupted, run_dryrun, tagged_processes
from .report import NOTHING_COMPUTED, DryRunReport, RankState, SimulatedRank, find_pass_files, format_summary

__all__ = [
    "DryRunEnvironment", "DryRunError", "DryRunInterrupted", "DryRunReport", "DryRunSetupError",
    "NOTHING_COMPUTED", "Problem", "RankState", "SetupResult", "SimulatedRank", "check_prerequisites",
    "default_cuda_home", "detect_real_accelerator", "environment_problems", "find_pass_files", "format_summary",
    "load_environment", "run_dryrun", "setup_environment", "tagged_processes",
]
