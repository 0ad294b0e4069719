"""Thread pools that last as long as the process.

A search's helpers run on threads kept between searches, not on threads started for each: the stores read
through one connection a thread (PostgreSQL forks a server process for each, SQLite opens the file and loads
its extensions), so a thread per search paid for a new connection every time."""

from __future__ import annotations

import threading
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
