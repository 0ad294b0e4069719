"""A real `memoryd run` process, as the tests and the benches start it (one harness for both): launched with a
config, waited on until it answers, until it is idle, and stopped. How each writes its config is its own
(tests/daemon.py for the tests, bench/harness.py for the benches)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from memoryd import heap
from memoryd_client.stub import ClientError, MemoryClient


def rss_mb(pid: int) -> float:
    """Resident set size of a process (NaN where it cannot be read)."""
    value = heap.rss_mb(pid)
    return float("nan") if value is None else value


def indexing(state: dict) -> bool:
    """An agent's status says it is syncing, reindexing, or adding vectors on its embedding lane."""
    lane = state.get("embedding") or {}
    embedding = lane.get("running") or (lane.get("waiting") and not lane.get("error"))
    return bool(state["syncing"] or (state.get("reindex") or {}).get("state") == "running" or embedding)


@dataclass
class Daemon:
    """A real `memoryd run` process, as the tests and the benches start it (one harness for both)."""

    proc: subprocess.Popen
    socket: Path
    data_dir: Path
    workspace: Path
    config: Path
    log: Path
    started: float = field(default_factory=time.monotonic)
    clients: list[MemoryClient] = field(default_factory=list)

    def client(self, timeout: float = 600.0) -> MemoryClient:
        """A client closed with the daemon."""
        client = MemoryClient(self.socket, timeout=timeout)
        self.clients.append(client)
        return client

    def logs(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def status(self) -> dict:
        with MemoryClient(self.socket) as client:
            return client.status()["agents"][0]

    def check_running(self) -> None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"daemon exited with {self.proc.returncode}:\n{self.logs()[-3000:]}")

    def wait_idle(self, timeout: float = 7200.0, poll: float = 0.05) -> dict:
        """Wait until no agent has pending changes, a sync, a reindex or vectors still to add; returns the first
        agent's status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_running()
            try:
                with MemoryClient(self.socket, timeout=30) as client:
                    states = client.status()["agents"]
            except ClientError:
                time.sleep(poll)
                continue
            if not any(indexing(s) or s["dirty"] for s in states):
                return states[0]
            time.sleep(poll)
        raise TimeoutError(f"daemon not idle: {self.status()}")

    def rss_mb(self) -> float:
        return rss_mb(self.proc.pid)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        for client in self.clients:
            client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def launch(
    config: Path, socket: Path, data_dir: Path, workspace: Path, log: Path, args: tuple[str, ...] = ()
) -> Daemon:
    """Start `memoryd run --config CONFIG` with no MEMORYD_* variables of the caller's, logging (JSON) to `log`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memoryd.daemon.cli", "run", "--config", str(config), "--log-json", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_die_with_parent,
        )
    return Daemon(proc, socket, data_dir, workspace, config, log)


def wait_answering(daemon: Daemon, timeout: float = 120.0) -> Daemon:
    """Wait until the daemon answers `ping`; a daemon that exits or never answers is an error naming its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        daemon.check_running()
        try:
            with MemoryClient(daemon.socket, timeout=5) as client:
                client.ping()
            return daemon
        except (ClientError, OSError):
            time.sleep(0.05)
    daemon.stop(signal.SIGKILL)
    raise RuntimeError(f"daemon did not start:\n{daemon.logs()[-3000:]}")


PR_SET_PDEATHSIG = 1  # Linux prctl option
_LIBC = ctypes.CDLL(None) if sys.platform == "linux" else None  # loaded here: the forked child only calls it


def _die_with_parent() -> None:
    """A bench that dies hard (a C library's abort) must not leave its daemon running: a stray daemon still
    indexing would skew every later measurement on this machine. Linux sends the signal when the thread that
    started the daemon ends, so benches start daemons from their main thread."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
