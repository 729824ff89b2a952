"""``python -m msinspect.cli``."""
from msinspect.cli import run

run()
