"""Thread pools that last as long as the process.

A search's helpers run on threads kept between searches, not on threads started for each: the stores read
through one connection a thread (PostgreSQL forks a server process for each, SQLite opens the file and loads
its extensions), so a thread per search paid for a new connection every time.

Work that holds Python's lock for most of its time (ranking in numpy, many small array operations) takes a CPU turn
first: eight searches contending for the lock at once did a third fewer searches a second than two at a time, and
each took more CPU (the lock handed back and forth at every numpy call)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

_pools: dict[str, ThreadPoolExecutor] = {}
_lock = threading.Lock()


def lasting_pool(name: str, workers: int) -> ThreadPoolExecutor:
    """The process's pool called `name` (made with `workers` threads the first time it is asked for)."""
    with _lock:
        pool = _pools.get(name)
        if pool is None:
            pool = _pools[name] = ThreadPoolExecutor(workers, thread_name_prefix=name)
        return pool


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


_turns = threading.BoundedSemaphore(_cores())


@contextlib.contextmanager
def cpu_turn() -> Iterator[None]:
    """Run the block on one of as many turns as the process has cores."""
    with _turns:
        yield


@contextlib.contextmanager
def turn_given_up() -> Iterator[None]:
    """Inside cpu_turn, wait for something else (a server's answer) without holding the turn."""
    _turns.release()
    try:
        yield
    finally:
        _turns.acquire()
