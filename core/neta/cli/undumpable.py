"""Make a ``neta`` process undumpable, so that the same user's other processes cannot read it.

A process's environment and memory (where the token and the API keys are) can be read by any
process of the same user through ``/proc/PID/environ`` and ``/proc/PID/mem``: a shell command
a model runs, for one. An undumpable process's ``/proc`` files belong to root and only a
process with ``CAP_SYS_PTRACE`` may read them; it leaves no core dump either. Programs it runs
are dumpable again (``execve`` resets the flag). Linux only; elsewhere nothing is done.
"""

from __future__ import annotations

import sys

_PR_SET_DUMPABLE = 4


def make_undumpable() -> bool:
    """Mark this process undumpable (``prctl(PR_SET_DUMPABLE, 0)``) on Linux.

    Returns:
        Whether it is now undumpable (``False`` elsewhere, or if the call failed).
    """
    if sys.platform != "linux":
        return False
    import ctypes  # here: only a Linux neta process pays for loading it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # no libc with prctl (a static or unusual build)
        return False
