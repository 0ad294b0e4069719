"""Start and stop a real `memoryd run` process for tests, through the harness the benches share (tests/harness.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from .harness import Daemon, launch, wait_answering

__all__ = [
    "Daemon",
    "cleanup",
    "eventually",
    "memctl",
    "short_dir",
    "start",
    "start_with_notes",
    "wait_ready",
    "write_config",
]

T = TypeVar("T")


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
    daemon = launch(config, socket, data_dir, workspace, log, args)
    if wait:
        wait_ready(daemon)
    return daemon


def wait_ready(daemon: Daemon, timeout: float = 60.0) -> None:
    """Answering, and done with its first sync."""
    wait_answering(daemon, timeout)
    daemon.wait_idle(timeout)


def cleanup(daemon: Daemon) -> None:
    daemon.stop()
    for folder in (daemon.socket.parent, daemon.socket.parent.parent):
        if folder.name.startswith("md-"):
            shutil.rmtree(folder, ignore_errors=True)


def start_with_notes(tmp: Path, notes: Mapping[str, str]) -> Daemon:
    """A daemon (hashing embedder) on a workspace `tmp/ws` holding `notes` (relative path -> text), first sync done."""
    workspace = tmp / "ws"
    for path, text in notes.items():
        target = workspace / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return start(tmp, workspace)


def memctl(daemon: Daemon, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """memctl as a user runs it against `daemon`, through MEMORYD_SOCKET and MEMORYD_DATA_DIR alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env["MEMORYD_SOCKET"] = str(daemon.socket)
    env["MEMORYD_DATA_DIR"] = str(daemon.data_dir)
    return subprocess.run(
        [sys.executable, "-m", "memoryd_client.memctl", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
