"""Run the training jobs of ``train_jobs/`` into new run folders (real or compile-only dry run).

Importing this package does not import MindSpore.
"""
from msinspect.train.jobs import JOBS, MODES, Job, jobs_dir
from msinspect.train.launcher import (NOTHING_COMPUTED, TAG_VARIABLE, JobResult, TrainError,
                                      TrainInterrupted, parse_losses, run_job, tagged_processes)

__all__ = ["JOBS", "MODES", "Job", "JobResult", "NOTHING_COMPUTED", "TAG_VARIABLE", "TrainError",
           "TrainInterrupted", "jobs_dir", "parse_losses", "run_job", "tagged_processes"]
