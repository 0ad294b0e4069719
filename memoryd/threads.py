"""Thread pools that last as long as the process.

A search's helpers run on threads kept between searches, not on threads started for each: the stores read
through one connection a thread (PostgreSQL forks a server process for each, SQLite opens the file and loads
its extensions), so a thread per search paid for a new connection every time.

Work that holds Python's lock for most of its time (ranking in numpy, many small array operations) takes a CPU turn
first: eight searches contending for the lock at once did a third fewer searches a second than two at a time, and
each took more CPU (the lock handed back and forth at every numpy call)."""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

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
    """The cores this process may use: its CPU affinity, capped by its cgroup's CPU quota (a container's --cpus, a
    unit's CPUQuota=), which affinity does not show."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        cores = min(cores, math.ceil(quota))
    return max(1, cores)


def _cgroup_quota(root: Path = Path("/sys/fs/cgroup"), own: Path = Path("/proc/self/cgroup")) -> float | None:
    """The smallest CPU quota, in cores, of this process's cgroup and its parents (v2 `cpu.max`, or v1
    `cpu.cfs_quota_us`), or None where none is set."""
    try:
        lines = own.read_text().splitlines()
    except OSError:
        return None
    quotas: list[float] = []
    for line in lines:
        if line.count(":") < 2:
            continue
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            base = root
        elif "cpu" in controllers.split(","):
            base = root / controllers if (root / controllers).is_dir() else root / "cpu"
        else:
            continue
        parts = PurePosixPath(path).parts[1:]
        for depth in range(len(parts), -1, -1):
            quota = _quota_in(base.joinpath(*parts[:depth]), v2=controllers == "")
            if quota is not None:
                quotas.append(quota)
    return min(quotas) if quotas else None


def _quota_in(folder: Path, v2: bool) -> float | None:
    try:
        if v2:  # "max 100000", or "30000 100000"
            limit, period = (folder / "cpu.max").read_text().split()[:2]
            return None if limit == "max" else int(limit) / int(period)
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        return None if quota < 0 else quota / int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None


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
