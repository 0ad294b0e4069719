"""What indexing may take from the machine: the priority of its threads and SQLite's memory."""

from __future__ import annotations

import os
import sys
import threading

import apsw


def lower_this_thread(nice: int) -> int | None:
    """Run the calling thread (and the threads it starts later, llama.cpp's among them) at `nice`, so a first
    index of a large workspace leaves the laptop, and searches, the cores they need. Linux sets priority per
    thread; elsewhere this does nothing. Returns the thread's nice value, or None where it is not per thread."""
    if not sys.platform.startswith("linux") or nice <= 0:
        return None
    tid = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, tid)
        if nice > current:  # only ever lowered: raising priority back needs privileges
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return None


def limit_sqlite_memory(megabytes: float) -> int:
    """A soft cap on what SQLite allocates in the whole process (every index's page caches): past it SQLite
    reuses cache pages instead of growing, and reads what it dropped from the OS's file cache. 0: no cap.
    Returns the limit in force, in bytes."""
    apsw.soft_heap_limit(int(megabytes * 2**20))
    return sqlite_memory_limit()


def sqlite_memory_limit() -> int:
    return int(apsw.soft_heap_limit(-1))
