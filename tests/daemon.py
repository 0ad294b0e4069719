"""Start and stop a real `memoryd run` process for tests."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from bench.harness import indexing  # one rule for 'done indexing', shared with the benchmarks
from memoryd.client.stub import ClientError, MemoryClient

T = TypeVar("T")


@dataclass
class Daemon:
    proc: subprocess.Popen
    socket: Path
    data_dir: Path
    workspace: Path
    config: Path
    log: Path
    clients: list[MemoryClient] = field(default_factory=list)

    def client(self, timeout: float = 30.0) -> MemoryClient:
        client = MemoryClient(self.socket, timeout=timeout)
        self.clients.append(client)
        return client

    def logs(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
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

    def status(self) -> dict:
        with MemoryClient(self.socket) as client:
            return client.status()["agents"][0]

    def wait_idle(self, timeout: float = 60.0) -> dict:
        """Wait until the agent has no pending changes, nothing syncing or reindexing, and every vector it can
        have (the embedding lane follows each sync)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.status()
            if not state["dirty"] and not indexing(state):
                return state
            time.sleep(0.05)
        raise TimeoutError(f"daemon not idle: {self.status()}")


def eventually(predicate: Callable[[], T], timeout: float = 30.0) -> T:
    """The predicate's first truthy value, polled every 50 ms; AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def short_dir() -> Path:
    """Unix socket paths are limited to ~100 bytes: keep them short."""
    return Path(tempfile.mkdtemp(prefix="md-", dir="/tmp"))


def write_config(
    path: Path,
    *,
    workspace: Path,
    data_dir: Path,
    socket: Path,
    provider: str = "hash",
    debounce: float = 0.3,
    extra: str = "",
    agent: bool = True,
) -> Path:
    """`extra` goes into [daemon] and may bring its own [[agents]] (then pass agent=False)."""
    default_agent = f'[[agents]]\nid = "main"\nworkspace = "{workspace}"\n[agents.embedding]\nprovider = "{provider}"\n'
    path.write_text(
        f"""
data_dir = "{data_dir}"
socket = "{socket}"
[daemon]
debounce_seconds = {debounce}
reconcile_seconds = 0
{extra}
{default_agent if agent else ""}
"""
    )
    return path


def start(
    tmp: Path,
    workspace: Path,
    *,
    provider: str = "hash",
    debounce: float = 0.3,
    extra: str = "",
    socket: Path | None = None,
    data_dir: Path | None = None,
    wait: bool = True,
    args: tuple[str, ...] = (),
    agent: bool = True,
) -> Daemon:
    run_dir = short_dir()
    socket = socket or run_dir / "run" / "m.sock"  # memoryd creates the "run" folder itself
    data_dir = data_dir or tmp / "data"
    config = write_config(
        tmp / "config.toml",
        workspace=workspace,
        data_dir=data_dir,
        socket=socket,
        provider=provider,
        debounce=debounce,
        extra=extra,
        agent=agent,
    )
    log = tmp / f"daemon-{time.monotonic_ns()}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memoryd.service.cli", "run", "--config", str(config), "--log-json", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    daemon = Daemon(proc, socket, data_dir, workspace, config, log)
    if wait:
        wait_ready(daemon)
    return daemon


def wait_ready(daemon: Daemon, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if daemon.proc.poll() is not None:
            raise RuntimeError(f"daemon exited with {daemon.proc.returncode}:\n{daemon.logs()}")
        try:
            with MemoryClient(daemon.socket, timeout=5) as client:
                client.ping()
            daemon.wait_idle(timeout)
            return
        except (ClientError, OSError):
            time.sleep(0.05)
    daemon.stop(signal.SIGKILL)
    raise RuntimeError(f"daemon did not become ready:\n{daemon.logs()}")


def cleanup(daemon: Daemon) -> None:
    daemon.stop()
    for folder in (daemon.socket.parent, daemon.socket.parent.parent):
        if folder.name.startswith("md-"):
            shutil.rmtree(folder, ignore_errors=True)
