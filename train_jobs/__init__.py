"""The training jobs (installed as the package ``msinspect.train_jobs``).

Each job is a script run as a file (under msrun, or msinspect's dry run), with its expectation
spec beside it (``MODE.toml``); the scripts import their siblings (``common``, ``networks``) by
plain name. Nothing here is meant to be imported as a package: see
:func:`msinspect.train.jobs.jobs_dir`.
"""
