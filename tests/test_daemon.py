"""A real `memoryd run` process on a temporary socket, driven through the stub and raw sockets."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest

from memoryd_client.stub import DaemonNotRunning, MemoryClient, RemoteError

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model


@pytest.fixture
def running(tmp_path: Path, workspace: Path) -> Iterator[d.Daemon]:
    write(workspace / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    daemon = d.start(tmp_path, workspace)
    yield daemon
    d.cleanup(daemon)


def _eventually(predicate, timeout: float = 10.0) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_edit_is_searchable_after_debounce_and_delete_is_final(running: d.Daemon) -> None:
    client = running.client()
    note = running.workspace / "memory" / "travel.md"
    write(note, "# Travel\nFlight to Hanoi, hotel near Hoan Kiem lake.\n")
    # No search in between (that would sync on demand): the watcher and debounce alone must index it.
    _eventually(lambda: running.status()["files"] == 2)
    assert client.search("Hoan Kiem", mode="keyword").results[0].path == "memory/travel.md"
    # Editor-style save: write to a temp file, rename over the note.
    tmp = note.with_name(".travel.md.swp")
    tmp.write_text("# Travel\nFlight to Da Nang instead, beach hotel.\n")
    os.replace(tmp, note)
    _eventually(lambda: bool(client.search("Da Nang", mode="keyword").results))
    assert not client.search("Hoan Kiem", mode="keyword").results
    note.unlink()
    _eventually(lambda: running.status()["files"] == 1)
    for _ in range(3):
        assert not client.search("Da Nang beach hotel").results
    running.stop()
    again = d.start(running.data_dir.parent, running.workspace, socket=running.socket, data_dir=running.data_dir)
    try:
        assert not again.client().search("Da Nang beach hotel").results
    finally:
        d.cleanup(again)


def test_workspace_below_an_ignored_folder_name_is_still_watched(tmp_path: Path) -> None:
    workspace = tmp_path / ".cache" / "node_modules" / "ws"  # only folders below the workspace are ignored
    write(workspace / "MEMORY.md", "# Start\nfirst note\n")
    daemon = d.start(tmp_path, workspace)
    try:
        write(workspace / "memory" / "later.md", "# Later\nwatched all the same\n")
        write(workspace / "memory" / "node_modules" / "pkg.md", "# Ignored\nnot memory\n")
        _eventually(lambda: daemon.status()["files"] == 2)
        write(workspace / "memory" / "sentinel.md", "# Sentinel\nwritten after the ignored one\n")
        _eventually(lambda: daemon.status()["files"] >= 3)  # every earlier event has been handled by now
        assert daemon.status()["files"] == 3
    finally:
        d.cleanup(daemon)


def test_burst_of_saves_is_one_sync(tmp_path: Path, workspace: Path) -> None:
    daemon = d.start(tmp_path, workspace, debounce=1.0)
    try:
        before = daemon.status()["sync_runs"]
        note = workspace / "memory" / "burst.md"
        for i in range(50):
            write(note, f"# Burst\nsave number {i}\n")
            time.sleep(0.005)
        state = None
        _eventually(lambda: daemon.status()["files"] == 1)
        state = daemon.wait_idle()
        assert state["sync_runs"] == before + 1
        write(workspace / "memory" / "sentinel.md", "# Sentinel\nafter the burst\n")  # events are handled in order:
        _eventually(lambda: daemon.status()["files"] == 2)  # once this one is in, no burst event is left
        assert daemon.wait_idle()["sync_runs"] == before + 2
        assert daemon.client().search("save number 49", mode="keyword").results
    finally:
        d.cleanup(daemon)


def test_search_after_write_finds_it_and_file_is_on_disk(running: d.Daemon) -> None:
    client = running.client()
    done = client.write("Decided: Postgres for the billing service.", path="decisions.md")
    assert done["citation"] == "memory/decisions.md#L1-L1"
    assert (running.workspace / "memory" / "decisions.md").read_text() == "Decided: Postgres for the billing service.\n"
    assert client.search("Postgres billing", mode="keyword").results[0].citation == done["citation"]
    got = client.get("memory/decisions.md", 1, 1)
    assert got["text"] == "Decided: Postgres for the billing service."


def test_methods_and_shapes(running: d.Daemon) -> None:
    client = running.client()
    assert client.ping()["pong"] is True
    found = client.search("JWT expiry")
    assert found.mode == "hybrid" and found.provider == "hash"
    hit = found.results[0]
    assert (hit.path, hit.start_line, hit.end_line, hit.source) == ("MEMORY.md", 1, 2, "memory")
    assert hit.citation == "MEMORY.md#L1-L2" and hit.vector_score is not None and hit.text_score == 1.0
    assert set(found.raw) >= {"results", "mode", "provider", "model", "took_ms"}
    status = client.status()
    agent = status["agents"][0]
    for key in (
        "files",
        "chunks",
        "provider",
        "model",
        "dims",
        "vector_available",
        "fts_available",
        "fallback_reason",
        "dirty",
        "last_sync",
        "watcher",
        "reindex",
    ):
        assert key in agent
    assert agent["watcher"] == "watching" and agent["files"] == 1
    assert client.agents() == [
        {"id": "main", "workspace": str(running.workspace), "sources": ["memory"], "default": True}
    ]
    assert client.sync(force=True)["report"]["files_indexed"] == 1
    assert client.call("search", ["JWT"])["results"][0]["path"] == "MEMORY.md"  # positional params
    with pytest.raises(RemoteError) as err:
        client.search("JWT", agent="ghost")
    assert err.value.code == "not_found"


def _raw(sock_path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(sock_path))
    return sock


def _read_one(sock: socket.socket) -> object:
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    while True:
        data = sock.recv(65536)
        if not data:
            return None
        unpacker.feed(data)
        for message in unpacker:
            return message


def test_bad_input_gets_errors_and_the_daemon_keeps_serving(running: d.Daemon) -> None:
    good = running.client()
    sock = _raw(running.socket)
    sock.sendall(msgpack.packb([0, 7, "no_such_method", []]))
    reply = _read_one(sock)
    assert reply[:2] == [1, 7] and reply[2]["code"] == "method_not_found" and reply[3] is None
    sock.sendall(msgpack.packb([0, 8, "search", [{"query": 12}]]))
    assert _read_one(sock)[2]["code"] == "invalid_params"
    sock.sendall(msgpack.packb([0, 9, "search", [{"query": "x", "max_results": "many"}]]))
    assert _read_one(sock)[2]["code"] == "invalid_params"
    sock.sendall(msgpack.packb([0, 10, "search", [{"bogus": 1}]]))
    assert _read_one(sock)[2]["code"] == "invalid_params"
    sock.sendall(msgpack.packb([0, 11, "get", [{"path": "../../etc/passwd"}]]))
    assert "not a file inside" in _read_one(sock)[2]["message"]
    sock.sendall(msgpack.packb([0, 14, "status", [[]]]))  # Lua's {} arrives as an empty array
    assert _read_one(sock)[2] == {
        "code": "invalid_params",
        "message": "status: 'agent': input should be a valid string",
    }
    sock.sendall(msgpack.packb([0, 12, "search", "not-an-array"]))
    assert _read_one(sock)[2]["code"] == "invalid_params"
    sock.sendall(msgpack.packb({"not": "a request"}))
    assert _read_one(sock)[:2] == [2, "memoryd.error"]
    sock.sendall(msgpack.packb([0, 13, "ping", []]))
    assert _read_one(sock)[3]["pong"] is True  # the same connection still works
    sock.close()

    broken = _raw(running.socket)
    broken.sendall(b"\xc1\xc1\xc1 definitely not msgpack")
    assert _read_one(broken)[2][0]["code"] == "parse_error"
    assert _read_one(broken) is None  # closed
    broken.close()

    huge = _raw(running.socket)
    header = b"\xc6" + (100 * 1024 * 1024).to_bytes(4, "big")  # bin32 of 100 MB
    try:
        huge.sendall(b"\x94\x00\x01\xa6search\x91" + header)
        chunk = b"\0" * (1 << 20)
        for _ in range(100):
            huge.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    huge.close()
    assert good.search("JWT", mode="keyword").results
    assert running.proc.poll() is None


def test_concurrent_requests_and_out_of_order_responses(running: d.Daemon) -> None:
    sock = _raw(running.socket)
    batch = b"".join(msgpack.packb([0, i, "search", [{"query": "JWT", "mode": "keyword"}]]) for i in range(1, 41))
    sock.sendall(batch + msgpack.packb([0, 99, "ping", []]))
    unpacker = msgpack.Unpacker(raw=False)
    seen: dict[int, object] = {}
    while len(seen) < 41:
        unpacker.feed(sock.recv(65536))
        for message in unpacker:
            seen[message[1]] = message
    assert set(seen) == {*range(1, 41), 99}
    assert all(seen[i][2] is None and seen[i][3]["results"] for i in range(1, 41))
    sock.close()


def test_second_daemon_refuses_and_stale_socket_is_replaced(running: d.Daemon, tmp_path: Path) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "memoryd.daemon.cli", "run", "--config", str(running.config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode != 0 and "another memoryd" in second.stderr
    assert running.client().ping()["pong"]
    mode = stat.S_IMODE(os.stat(running.socket).st_mode)
    assert mode == 0o600 and stat.S_IMODE(os.stat(running.socket.parent).st_mode) == 0o700
    shared = running.socket.parent
    os.chmod(shared, 0o755)

    running.stop(signal.SIGKILL)
    assert running.socket.exists()  # a crash leaves the socket behind
    with pytest.raises(DaemonNotRunning):
        MemoryClient(running.socket).ping()
    again = d.start(tmp_path, running.workspace, socket=running.socket, data_dir=running.data_dir)
    try:
        assert again.client().search("JWT", mode="keyword").results
    finally:
        again.stop()
        assert not running.socket.exists()  # a clean stop removes it
        assert stat.S_IMODE(os.stat(shared).st_mode) == 0o755  # an existing folder is never re-permissioned
        d.cleanup(again)


def test_client_reconnects_to_a_restarted_daemon(running: d.Daemon, tmp_path: Path) -> None:
    client = MemoryClient(running.socket)
    assert client.ping()["pong"]
    running.stop()
    again = d.start(tmp_path, running.workspace, socket=running.socket, data_dir=running.data_dir)
    try:
        assert client.ping()["pong"]
    finally:
        client.close()
        d.cleanup(again)


def test_search_during_full_reindex(tmp_path: Path, workspace: Path) -> None:
    for i in range(1500):
        write(workspace / "memory" / f"n{i:04d}.md", f"# Note {i}\n" + f"topic{i % 17} detail {i} " * 20 + "\n")
    daemon = d.start(tmp_path, workspace)
    try:
        client = daemon.client()
        assert client.reindex()["started"] is True
        answered = 0
        while (daemon.status().get("reindex") or {}).get("state") == "running":
            assert client.search("topic3 detail", mode="keyword").results
            answered += 1
        assert answered > 0
        assert daemon.status()["reindex"]["state"] == "done"
        assert client.search("topic5 detail 5").results
        assert not list(daemon.data_dir.rglob("*.reindex-*"))
    finally:
        d.cleanup(daemon)


def test_sigkill_during_reindex_leaves_a_consistent_index(tmp_path: Path, workspace: Path) -> None:
    for i in range(1500):
        write(workspace / "memory" / f"n{i:04d}.md", f"# Note {i}\n" + f"kiwi{i % 13} entry {i} " * 20 + "\n")
    daemon = d.start(tmp_path, workspace)
    client = daemon.client()
    before = daemon.status()
    client.reindex()
    _eventually(lambda: (daemon.status().get("reindex") or {}).get("done", 0) > 100, timeout=60)
    assert list(daemon.data_dir.rglob("*.reindex-*"))  # the temp index exists mid-reindex
    daemon.stop(signal.SIGKILL)
    again = d.start(tmp_path, workspace, socket=daemon.socket, data_dir=daemon.data_dir)
    try:
        assert not list(again.data_dir.rglob("*.reindex-*"))
        after = again.status()
        assert (after["files"], after["chunks"]) == (before["files"], before["chunks"])
        assert again.client().search("kiwi7 entry 7", mode="keyword").results
    finally:
        d.cleanup(again)


def test_sighup_reloads_the_config(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# One\nfirst agent\n")
    daemon = d.start(tmp_path, workspace)
    try:
        other = tmp_path / "other"
        write(other / "MEMORY.md", "# Two\nthe second agent knows about wombats\n")
        text = (
            daemon.config.read_text() + f'\n[[agents]]\nid = "second"\nworkspace = "{other}"\n'
            '[agents.embedding]\nprovider = "hash"\n'
        )
        daemon.config.write_text(text)
        daemon.proc.send_signal(signal.SIGHUP)
        _eventually(lambda: len(daemon.client().agents()) == 2)
        client = daemon.client()
        _eventually(lambda: bool(client.search("wombats", agent="second", mode="keyword").results))
        assert client.search("wombats", mode="keyword").results == []  # agents stay isolated
        assert daemon.proc.poll() is None
    finally:
        d.cleanup(daemon)


def test_a_saved_note_is_synced_alone(running: d.Daemon) -> None:
    for i in range(30):
        write(running.workspace / "memory" / f"n{i}.md", f"# N{i}\nfiller {i}\n")
    running.client().sync()
    running.wait_idle()  # the watcher's events for those 30 files have been synced too
    write(running.workspace / "memory" / "n7.md", "# N7\nThe saved note mentions the quetzal.\n")
    client = running.client()
    _eventually(lambda: bool(client.search("quetzal", mode="keyword").results))
    state = running.wait_idle()
    assert state["sync_progress"]["kind"] == "sync of changed files"
    assert state["last_sync_report"]["files_seen"] == 1  # no walk over the other 31 files
