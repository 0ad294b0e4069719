"""No request freezes the daemon: while a hostile or huge request runs, another client's ping and search answer,
and SIGTERM still stops it. Client timeouts here are hang guards (the old daemon took minutes), not speed checks."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import msgpack
import pytest

from memoryd_client.stub import MemoryClient

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model


def _raw(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    return sock


def _stops_on_sigterm(daemon: d.Daemon, within: float = 15.0) -> None:
    daemon.proc.send_signal(signal.SIGTERM)
    try:
        daemon.proc.wait(within)
    except subprocess.TimeoutExpired:
        daemon.proc.kill()
        raise AssertionError(f"SIGTERM did not stop the daemon within {within} s") from None


def test_a_one_word_write_of_a_million_characters_never_holds_the_daemon(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    daemon = d.start(tmp_path, workspace)
    try:
        answers: dict[str, object] = {}

        def big_write() -> None:
            with MemoryClient(daemon.socket, timeout=120) as client:
                answers["write"] = client.write("w" * 999_000, "memory/blob.md")

        writer = threading.Thread(target=big_write)
        writer.start()
        with MemoryClient(daemon.socket, timeout=10) as client:
            while writer.is_alive():
                assert client.ping()["pong"]
                assert client.search("JWT", mode="keyword").results
            writer.join()
            assert answers["write"]["indexed"], answers  # type: ignore[index]
            assert client.get("memory/blob.md")["truncated"]
            assert client.search("JWT expiry").results
        _stops_on_sigterm(daemon)
        again = d.start(tmp_path, workspace)  # the note stays: a restart reads it again without freezing
        d.cleanup(again)
    finally:
        d.cleanup(daemon)


def test_unread_gets_from_many_clients_starve_no_one(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    write(workspace / "memory" / "wide.md", ("lorem ipsum dolor sit amet " * 40 + "\n") * 1000)  # ~1 MB
    daemon = d.start(tmp_path, workspace)
    hostile: list[socket.socket] = []
    try:
        request = [msgpack.packb([0, i, "get", [{"path": "memory/wide.md"}]]) for i in range(64)]
        for _ in range(10):
            sock = _raw(daemon.socket)
            sock.sendall(b"".join(request))  # and never read a reply
            hostile.append(sock)
        with MemoryClient(daemon.socket, timeout=10) as client:
            for _ in range(10):
                assert client.ping()["pong"]
                assert client.status()["agents"][0]["files"] == 2
                assert client.search("JWT expiry").results
        for sock in hostile[:5]:
            sock.close()
        with MemoryClient(daemon.socket, timeout=10) as client:
            assert client.ping()["pong"]
        _stops_on_sigterm(daemon)  # with five of them still open, their replies unread
    finally:
        for sock in hostile:
            sock.close()
        d.cleanup(daemon)


HOLDER = """
import socket, sys
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    held.append(s)
print("held", flush=True)
sys.stdin.read()
"""


def test_past_the_connection_limit_a_client_is_told_the_daemon_is_busy(tmp_path: Path, workspace: Path) -> None:
    from memoryd.daemon.rpc import MAX_CONNECTIONS, MAX_PER_PROCESS

    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    daemon = d.start(tmp_path, workspace)
    holders: list[subprocess.Popen[str]] = []
    try:
        each = MAX_PER_PROCESS - 1  # no process past its own share: together they fill the daemon
        for _ in range(-(-MAX_CONNECTIONS // each)):
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLDER, str(daemon.socket), str(each)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            holders.append(holder)
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        out = d.eventually(lambda: (done := _status(daemon)).returncode == 1 and done, timeout=30)
        assert "busy" in out.stderr and "too_many_connections" in out.stderr and "not running" not in out.stderr
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
        d.cleanup(daemon)


def _status(daemon: d.Daemon) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(daemon.socket), "status"],
        capture_output=True,
        text=True,
        timeout=60,
    )
