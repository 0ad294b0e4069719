"""What indexing may take from the machine: the priority of its threads and SQLite's memory."""

from __future__ import annotations

import contextlib
import os
import sys
import threading

import apsw


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


def limit_sqlite_memory(megabytes: float) -> None:
    """A soft cap on what SQLite allocates in the whole process (every index's page caches): past it SQLite
    reuses cache pages instead of growing, and reads what it dropped from the OS's file cache. 0: no cap."""
    apsw.soft_heap_limit(int(megabytes * 2**20))


def sqlite_memory_limit() -> int:
    """The cap in force, in bytes, as SQLite reports it."""
    return int(apsw.soft_heap_limit(-1))
