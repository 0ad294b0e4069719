"""Simulated hosts on one machine: each a cgroup (v1 `cpu` controller) with a CPU quota of its own, so that a
daemon and its clients, the primary and each replica run as if on machines of that size, none starved by another.

Needs root and /sys/fs/cgroup/cpu (`available()` says why not). A host's processes and every process they start
later are held to its quota; `close` moves them back to the root group and removes the group."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

CPU = Path("/sys/fs/cgroup/cpu")
GROUP = "memoryd-bench"
PERIOD_US = 100_000


def available() -> str | None:
    """None when hosts can be simulated here, else why not."""
    if not (CPU / "cpu.cfs_quota_us").exists():
        return f"no cgroup v1 cpu controller at {CPU}"
    if not os.access(CPU, os.W_OK):
        return f"{CPU} is not writable (run as root)"
    return None


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (read from /proc: each task's children)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                queue += [int(child) for child in (task / "children").read_text().split()]
    return found


def postmaster(data_dir: Path) -> int:
    """The PID of the PostgreSQL server of a data folder (the first line of its postmaster.pid)."""
    return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])


class Host:
    """A cgroup with `cores` worth of CPU time (a CFS quota per 100 ms period)."""

    def __init__(self, name: str, cores: float) -> None:
        self.name, self.cores = name, cores
        self.path = CPU / GROUP / name
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (self.path / "cpu.cfs_quota_us").write_text(str(max(1000, int(cores * PERIOD_US))))

    def add(self, pid: int) -> None:
        """Move a process (every thread of it), and those it started, into this host."""
        for each in descendants(pid):
            with contextlib.suppress(ProcessLookupError, FileNotFoundError):  # ended meanwhile
                (self.path / "cgroup.procs").write_text(str(each))

    def pids(self) -> list[int]:
        return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]

    def throttled_s(self) -> float:
        """How long this host's processes waited for their quota so far (cpu.stat's throttled_time)."""
        for line in (self.path / "cpu.stat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "throttled_time":
                return int(value) / 1e9
        return 0.0

    def close(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, OSError):
                (CPU / "cgroup.procs").write_text(str(pid))
        with contextlib.suppress(OSError):
            self.path.rmdir()


def load(socket: str, queries_file: str, clients: int, seconds: float) -> dict[str, object]:
    """`clients` connections searching (hybrid) for `seconds`, once "go" is read from stdin (the caller moves this
    process into its host first): searches done, failures, and each one's latency."""
    import json
    import sys
    import threading
    import time

    from memoryd_client import MemoryClient

    queries = json.loads(Path(queries_file).read_text())
    sys.stdin.readline()
    done, failed, latencies = [0], [0], []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(first: int) -> None:
        mine, errors = [], 0
        with MemoryClient(socket, timeout=120) as client:
            i = first
            while time.monotonic() < stop:
                started = time.perf_counter()
                try:
                    client.search(queries[i % len(queries)], mode="hybrid")
                    mine.append(time.perf_counter() - started)
                except Exception:
                    errors += 1
                i += clients
        with lock:
            done[0] += len(mine)
            failed[0] += errors
            latencies.extend(mine)

    began = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"searches": done[0], "failed": failed[0], "seconds": time.perf_counter() - began, "latencies": latencies}


if __name__ == "__main__":
    import json
    import sys

    request = json.loads(sys.argv[1])
    print(json.dumps(load(**request)), flush=True)
