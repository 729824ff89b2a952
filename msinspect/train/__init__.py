"""Run the training jobs of ``train_jobs/`` into new run folders (real or compile-only dry run).

Importing this package does not import MindSpore.
"""
from msinspect.train.jobs import JOBS, MODES, Job, jobs_dir
from msinspect.train.launcher import (NOTHING_COMPUTED, TAG_VARIABLE, JobResult, TrainError,
                                      TrainInterrupted, parse_losses, run_job, tagged_processes)
from msinspect.train.workflow import Trained, check_run, train_and_check

__all__ = ["JOBS", "MODES", "Job", "JobResult", "NOTHING_COMPUTED", "TAG_VARIABLE", "TrainError",
           "TrainInterrupted", "Trained", "check_run", "jobs_dir", "parse_losses", "run_job", "tagged_processes",
           "train_and_check"]
