"""``python -m msinspect``: the command line."""
from msinspect.cli import run

run()
