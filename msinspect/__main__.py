"""``python -m msinspect``: the command line."""
from msinspect.cli import main

main(prog_name="msinspect")
