"""``python -m msinspect.cli``."""
from msinspect.cli import main

main()
