"""What indexing may take from the machine: the priority of its threads."""

from __future__ import annotations

import contextlib
import os
import sys
import threading


def lower_this_thread(nice: int) -> None:
    """Run the calling thread (and the threads it starts later, llama.cpp's among them) at `nice`, so a first
    index of a large workspace leaves the laptop, and searches, the cores they need. Linux sets priority per
    thread; elsewhere this does nothing."""
    if not sys.platform.startswith("linux") or nice <= 0:
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):
        if nice > os.getpriority(os.PRIO_PROCESS, tid):  # only ever lowered: raising it back needs privileges
            os.setpriority(os.PRIO_PROCESS, tid, nice)
