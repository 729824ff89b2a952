"""Peak memory shared by the benchmarks: a process's own peak resident set.

``resource.getrusage(RUSAGE_SELF).ru_maxrss`` is not it for a process started by another: Linux
carries the parent's resident size at the fork into the child's ``ru_maxrss`` (a bench holding a
10 MB text made its child's 28 MB look like 38 MB). ``VmHWM`` of ``/proc/self/status`` is the
high-water mark of the process's own memory; ``ru_maxrss`` where there is no ``/proc``."""
from __future__ import annotations

import resource


def peak_kb() -> int:
    """This process's own peak resident set, in kilobytes."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
