"""Faults around a real daemon: start-up mistakes, a corrupt or vanished index, a full disk, shutdown under load,
client retry semantics, connection bursts and hostile peers."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest

from memoryd.embeddings.models import prepare as prep
from memoryd_client.stub import ConnectionLost, MemoryClient, RemoteError, RequestTooLarge

from . import daemon as d
from .conftest import write
from .test_daemon import _raw, _read_one
from .test_local_model import DATA_DIR

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model

NOTE = "# Auth\nWe decided to use JWT with 24h expiry.\n"


def _run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    return subprocess.run(
        [sys.executable, "-m", "memoryd.daemon.cli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def _one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


@contextlib.contextmanager
def tmpfs(path: Path, size: str, *options: str) -> Iterator[Path]:
    """A small RAM file system of its own: a disk that can really fill up, or be read-only."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join((f"size={size}", *options)), "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


needs_mount = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)")


def test_start_up_mistakes_are_one_line_errors_that_touch_nothing(tmp_path: Path, workspace: Path) -> None:
    run_dir = d.short_dir()
    try:
        config = d.write_config(
            tmp_path / "c.toml", workspace=workspace, data_dir=tmp_path / "data", socket=run_dir / "s"
        )
        base = ["run", "--config", str(config)]

        long_socket = run_dir / ("x" * 120)
        _one_line_error(_run_cli(*base, "--socket", str(long_socket)), str(long_socket), "bytes")
        assert not (tmp_path / "data").exists()  # checked first, before anything was made

        user_file = run_dir / "notes.txt"
        user_file.write_text("the user's data\n")
        _one_line_error(_run_cli(*base, "--socket", str(user_file)), str(user_file), "not a socket")
        assert user_file.read_text() == "the user's data\n"  # never deleted

        folder = run_dir / "folder"
        folder.mkdir()
        _one_line_error(_run_cli(*base, "--socket", str(folder)), str(folder), "a folder")
        assert folder.is_dir()

        victim = tmp_path / "victim.txt"
        victim.write_text("precious\n")
        (run_dir / "s2.lock").symlink_to(victim)
        _one_line_error(_run_cli(*base, "--socket", str(run_dir / "s2")), "s2.lock", "symlink")
        assert victim.read_text() == "precious\n"
    finally:
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)


@needs_mount
def test_a_read_only_data_dir_is_a_one_line_error(tmp_path: Path, workspace: Path) -> None:
    run_dir = d.short_dir()
    with tmpfs(tmp_path / "ro", "1m", "ro") as data:
        config = d.write_config(tmp_path / "c.toml", workspace=workspace, data_dir=data, socket=run_dir / "s")
        _one_line_error(_run_cli("run", "--config", str(config)), str(data), "data-dir")


def _corrupt_pages(db: Path) -> None:
    """Random bytes over every page but the header page."""
    size = db.stat().st_size
    with db.open("r+b") as fh:
        fh.seek(4096)
        fh.write(os.urandom(size - 4096))


def _finds(daemon: d.Daemon, query: str) -> bool:
    try:
        with MemoryClient(daemon.socket) as client:
            return bool(client.search(query, mode="keyword").results)
    except RemoteError as exc:
        assert exc.code == "index_rebuilding", exc
        return False


def test_a_corrupt_or_broken_index_is_rebuilt_without_help(tmp_path: Path, workspace: Path) -> None:
    for i in range(40):
        write(workspace / "memory" / f"n{i}.md", f"# Note {i}\nThe marmot{i} ledger entry.\n" + "filler words\n" * 60)
    daemon = d.start(tmp_path, workspace)
    store = next((tmp_path / "data").rglob("*.sqlite"))
    daemon.stop()
    _corrupt_pages(store)
    daemon = d.start(tmp_path, workspace, data_dir=tmp_path / "data", wait=False)
    try:
        d.wait_ready(daemon)
        d.eventually(lambda: _finds(daemon, "marmot7"))
        state = daemon.wait_idle()
        assert state["files"] == 40 and state["index_healed"]
        assert list(store.parent.glob(f"{store.name}.corrupt-*"))  # the broken file is kept for a post-mortem
    finally:
        daemon.stop()
    with store.open("r+b") as fh:
        fh.write(b"this is not an SQLite header at all")
    daemon = d.start(tmp_path, workspace, data_dir=tmp_path / "data")
    try:
        assert _finds(daemon, "marmot3")
        assert "index unreadable" in daemon.logs()
    finally:
        d.cleanup(daemon)


def test_an_index_deleted_while_running_is_rebuilt(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", NOTE)
    daemon = d.start(tmp_path, workspace)
    try:
        store = next((tmp_path / "data").rglob("*.sqlite"))
        store.unlink()
        write(workspace / "memory" / "later.md", "# Later\nThe kestrel rota changed.\n")
        with daemon.client() as client:
            client.sync()
        assert _finds(daemon, "kestrel rota") and _finds(daemon, "JWT")
        assert store.exists() and daemon.status()["index_healed"]
    finally:
        d.cleanup(daemon)


@needs_mount
def fill(disk: Path) -> Path:
    """Fill a disk to the last byte; returns the file to delete for room."""
    filler = disk / "filler"
    with filler.open("wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
    return filler


def test_a_full_disk_pauses_indexing_but_never_searching(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "8m") as disk:
        workspace = disk / "ws"
        write(workspace / "MEMORY.md", NOTE)
        daemon = d.start(tmp_path, workspace, data_dir=disk / "data", extra="", provider="hash")
        try:
            filler = fill(disk)
            client = daemon.client()
            for _ in range(5):
                assert client.search("JWT").results  # reads never need a write
            with pytest.raises(RemoteError) as failed:
                client.write("a note that cannot fit " * 2000, "memory/new.md")
            assert failed.value.code == "invalid_params" and "No space" in failed.value.message
            assert not (workspace / "memory" / "new.md").exists()  # no 0-byte file left behind
            filler.unlink()
            written = client.write("The osprey plan fits now.", "memory/new.md")
            assert written["citation"] == "memory/new.md#L1-L1"
            assert client.search("osprey plan", mode="keyword").results
        finally:
            d.cleanup(daemon)


def test_a_write_saved_while_the_index_disk_is_full_says_so_and_is_indexed_later(
    tmp_path: Path, workspace: Path
) -> None:
    """The note is on another disk than the index: the write succeeds, says it is not indexed yet (a client that
    retried an internal_error appended it twice), and the next sync indexes it once there is room."""
    write(workspace / "MEMORY.md", NOTE)
    with tmpfs(tmp_path / "disk", "8m") as disk:
        daemon = d.start(tmp_path, workspace, data_dir=disk / "data", provider="hash")
        try:
            filler = fill(disk)
            client = daemon.client()
            text = " ".join(f"The kestrel{i} plan is saved." for i in range(3000))
            written = client.write(text, "memory/k.md")
            assert written["indexed"] is False and "full" in written["index_error"], written
            assert (workspace / "memory" / "k.md").read_text().count("kestrel2999 plan") == 1
            assert client.search("JWT").results  # searching goes on
            filler.unlink()
            client.sync()
            assert client.search("kestrel2999", mode="keyword").results[0].path == "memory/k.md"
            assert (workspace / "memory" / "k.md").read_text().count("kestrel2999 plan") == 1
        finally:
            d.cleanup(daemon)


def test_a_folder_at_the_index_path_is_a_one_line_start_error(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", NOTE)
    store = tmp_path / "data" / "agents" / "main" / "index.sqlite"
    store.mkdir(parents=True)
    daemon = d.start(tmp_path, workspace, wait=False)
    assert daemon.proc.wait(60) != 0
    logs = daemon.logs()
    assert f"the index path {store} of agent 'main' is not a file" in logs and "Traceback" not in logs
    assert store.is_dir() and not any(store.iterdir())


def _local_agent(workspace: Path) -> str:
    model = prep.prepare(DATA_DIR).path
    return (
        f'[[agents]]\nid = "main"\nworkspace = "{workspace}"\n'
        f'[agents.embedding]\nprovider = "local"\nmodel_path = "{model}"\n'
    )


def test_sigterm_ends_a_waited_reindex_and_a_first_index_promptly(tmp_path: Path, workspace: Path) -> None:
    """A client waits on reindex(wait=True) while the first index of many notes runs; SIGTERM must end it all."""
    for i in range(600):
        write(workspace / "memory" / f"n{i:04}.md", f"# Note {i}\n" + f"The heron{i} survey counted birds.\n" * 30)
    daemon = d.start(tmp_path, workspace, wait=False, extra=_local_agent(workspace), agent=False)
    answers: list[object] = []
    try:
        d.eventually(lambda: daemon.socket.exists())
        d.eventually(lambda: (daemon.status().get("sync_progress") or {}).get("done", 0) > 0, timeout=60)

        def wait_on_reindex() -> None:
            try:
                with MemoryClient(daemon.socket, timeout=120) as client:
                    answers.append(client.reindex(wait=True))
            except Exception as exc:
                answers.append(exc)

        waiter = threading.Thread(target=wait_on_reindex)
        waiter.start()
        d.eventually(lambda: (daemon.status().get("reindex") or {}).get("done", 0) > 0)
        assert daemon.status()["sync_progress"]["state"] == "deferred to the reindex"  # never both at once
        daemon.proc.send_signal(signal.SIGTERM)
        daemon.proc.wait(timeout=30)  # the brief's bound is 5 s (bench measures it); this only catches a hang
        waiter.join(30)
        assert not waiter.is_alive()
        [answer] = answers
        assert isinstance(answer, RemoteError) and answer.code == "stopping", answer
        assert daemon.proc.returncode == 0
        assert '"stopped"' in daemon.logs() or "stopped" in daemon.logs()
    finally:
        d.cleanup(daemon)


@contextlib.contextmanager
def embedding_a_large_note(tmp_path: Path, workspace: Path) -> Iterator[d.Daemon]:
    """A daemon with the local model, busy embedding a note of about 150 chunks."""
    write(workspace / "MEMORY.md", NOTE)
    daemon = d.start(tmp_path, workspace, extra=_local_agent(workspace), agent=False)
    try:
        big = "\n\n".join(f"## Part {i}\n" + f"Paragraph {i} about the lighthouse logbook. " * 40 for i in range(150))
        write(workspace / "memory" / "big.md", big)
        d.eventually(lambda: daemon.status()["embedding"]["running"])
        yield daemon
    finally:
        d.cleanup(daemon)


def test_ping_and_keyword_search_answer_while_a_large_note_is_embedded(tmp_path: Path, workspace: Path) -> None:
    with embedding_a_large_note(tmp_path, workspace) as daemon, MemoryClient(daemon.socket, timeout=10) as client:
        partial = []
        for _ in range(5):
            assert client.ping()["pong"]
            assert client.search("JWT expiry", mode="keyword").results
            hybrid = client.search("what did we decide about tokens?")  # a query jumps the batch
            assert hybrid.results
            partial.append(hybrid.raw["partial"] and "/" in hybrid.raw["embedded"])
        agent = client.status()["agents"][0]
        assert agent["embedding"]["waiting"]  # the note was still being embedded throughout
        assert all(partial)  # and every hybrid answer said its vectors were not all there yet


class OneShotServer:
    """A socket that reads one request per connection and hangs up without answering."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[list[object]] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            unpacker = msgpack.Unpacker(raw=False)
            with conn:
                while True:
                    data = conn.recv(65536)
                    if not data:
                        break
                    unpacker.feed(data)
                    got = list(unpacker)
                    if got:
                        self.requests.extend(got)
                        break

    def close(self) -> None:
        self.sock.close()


def test_the_client_never_sends_a_write_twice_but_retries_reads(tmp_path: Path) -> None:
    run_dir = d.short_dir()
    server = OneShotServer(run_dir / "s")
    try:
        client = MemoryClient(run_dir / "s", timeout=5)
        with pytest.raises(ConnectionLost, match="may or may not"):
            client.write("append me once")
        d.eventually(lambda: len(server.requests) == 1)
        with pytest.raises(ConnectionLost):
            client.status()
        d.eventually(lambda: len(server.requests) == 3)  # a read is sent again once
        with pytest.raises(ConnectionLost):
            MemoryClient(run_dir / "s", timeout=5).ping()  # a sentinel: anything sent before it arrived before it
        assert [r[2] for r in server.requests] == ["write", "status", "status", "ping", "ping"]
        with pytest.raises(RequestTooLarge):
            client.write("x" * (17 * 1024 * 1024))
        assert len(server.requests) == 5  # never sent
    finally:
        server.close()
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.fixture
def running(tmp_path: Path, workspace: Path) -> Iterator[d.Daemon]:
    write(workspace / "MEMORY.md", NOTE)
    daemon = d.start(tmp_path, workspace)
    yield daemon
    d.cleanup(daemon)


def test_protocol_edges_notifications_msgids_and_error_notifications(running: d.Daemon) -> None:
    sock = _raw(running.socket)
    sock.sendall(msgpack.packb([2, "write", [{"text": "The plover notification note.", "path": "memory/n.md"}]]))
    sock.sendall(msgpack.packb([0, 2**32, "ping", []]))  # msgids are uint32
    reply = _read_one(sock)
    assert reply[:2] == [2, "memoryd.error"] and "2**32-1" in reply[2][0]["message"]
    sock.sendall(msgpack.packb([0, 2**32 - 1, "ping", []]))
    assert _read_one(sock)[:2] == [1, 2**32 - 1]
    sock.sendall(msgpack.packb([0, 5, "search", [{"query": "x", "type": 7}]]))
    assert _read_one(sock)[2]["code"] == "invalid_params"
    sock.sendall(msgpack.packb([0, 6, "search", [{"query": "x", "min_score": float("nan")}]]))
    assert _read_one(sock)[2]["code"] == "invalid_params"
    sock.sendall(msgpack.packb([0, 7, "search", [{"query": "x", "after": float("nan")}]]))
    assert _read_one(sock)[2]["code"] == "invalid_params"
    sock.close()
    client = running.client()
    d.eventually(lambda: client.search("plover notification", mode="keyword").results)  # the notification was run
    many = _raw(running.socket)  # far more requests at once than the in-flight limit: all are answered
    many.sendall(b"".join(msgpack.packb([0, i, "ping", []]) for i in range(300)))
    unpacker = msgpack.Unpacker(raw=False)
    seen: set[int] = set()
    while len(seen) < 300:
        unpacker.feed(many.recv(65536))
        seen.update(m[1] for m in unpacker)
    many.close()


def test_a_connection_burst_never_reads_as_not_running(running: d.Daemon) -> None:
    idle = []
    refused = 0
    for _ in range(400):  # more than the daemon keeps open
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(running.socket))
        idle.append(sock)
    for sock in idle[-20:]:
        sock.settimeout(10)
        reply = _read_one(sock)
        if reply is not None:
            assert reply[:2] == [2, "memoryd.error"] and reply[2][0]["code"] == "too_many_connections"
            refused += 1
    assert refused == 20
    for sock in idle:
        sock.close()
    result = subprocess.run(
        [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(running.socket), "status"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_a_peer_of_another_user_is_refused(running: d.Daemon) -> None:
    if os.geteuid() != 0:
        pytest.skip("switching to another uid needs root (CI runs as root)")
    for folder in (running.socket.parent, running.socket.parent.parent):
        os.chmod(folder, 0o755)  # let the other user reach the socket: the daemon itself must refuse it
    os.chmod(running.socket, 0o666)
    ping = msgpack.packb([0, 1, "ping", []])
    probe = "\n".join(
        [
            "import socket",
            "s = socket.socket(socket.AF_UNIX)",
            f"s.connect({str(running.socket)!r})",
            "try:",
            f"    s.sendall({ping!r})",
            "    print('answered' if s.recv(100) else 'closed')",
            "except (BrokenPipeError, ConnectionResetError):",
            "    print('closed')",
        ]
    )
    other = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert other.stdout.strip() == "closed", other.stdout + other.stderr
    assert "refused a peer of another user" in running.logs()
    assert running.client().ping()["pong"]


def test_write_answers_while_a_long_sync_runs(tmp_path: Path, workspace: Path) -> None:
    """A write indexes its own note and answers; it does not wait for the lane that embeds a large note."""
    with embedding_a_large_note(tmp_path, workspace) as daemon, MemoryClient(daemon.socket, timeout=20) as client:
        written = client.write("The avocet nest count is seven.", "memory/birds.md")
        assert written["citation"] == "memory/birds.md#L1-L1"
        assert client.status()["agents"][0]["embedding"]["waiting"]  # the large note is still being embedded
        hits = client.search("avocet nest count", mode="keyword").results
        assert hits and hits[0].citation == "memory/birds.md#L1-L1"


def test_after_a_kill_mid_index_the_next_daemon_keeps_what_it_committed(tmp_path: Path) -> None:
    """SIGKILL while a first index and a reindex run; the next daemon, on the same data dir and another
    workspace, syncs once and never sees an older index come back."""
    first, second = tmp_path / "first", tmp_path / "second"
    for i in range(300):
        write(first / "memory" / f"a{i:03}.md", f"# A {i}\n" + f"The grebe{i} note about ponds.\n" * 20)
    for i in range(43):
        write(second / "memory" / f"b{i:02}.md", f"# B {i}\nThe plover{i} note about beaches.\n")
    data = tmp_path / "data"
    killed = d.start(tmp_path, first, data_dir=data, wait=False, extra=_local_agent(first), agent=False)
    try:
        d.eventually(lambda: killed.socket.exists())
        d.eventually(lambda: (killed.status().get("sync_progress") or {}).get("done", 0) > 20, timeout=60)
        with MemoryClient(killed.socket) as client:
            client.reindex()
        d.eventually(lambda: (killed.status().get("reindex") or {}).get("done", 0) > 0)
    finally:
        killed.stop(signal.SIGKILL)
        d.cleanup(killed)
    daemon = d.start(tmp_path, second, data_dir=data, extra=_local_agent(second), agent=False)
    try:
        assert daemon.status()["files"] == 43
        with MemoryClient(daemon.socket) as client:
            for _ in range(3):
                report = client.sync(force=True)["report"]
                assert report["files_deleted"] == 0 and report["files_seen"] == 43
            assert client.search("plover7 beaches", mode="keyword").results
            assert not client.search("grebe7 ponds", mode="keyword").results
        assert daemon.status()["files"] == 43
    finally:
        d.cleanup(daemon)


def test_long_calls_never_starve_ping(tmp_path: Path, workspace: Path) -> None:
    """Eight syncs sent at once by one client, waiting on a first index, used to take every RPC worker: another
    client's ping waited 25 s. Long calls now have threads of their own."""
    for i in range(300):
        write(workspace / "memory" / f"n{i:03}.md", f"# N{i}\n" + f"The sandpiper{i} tally by the shore.\n" * 30)
    daemon = d.start(tmp_path, workspace, wait=False, extra=_local_agent(workspace), agent=False)
    try:
        d.eventually(lambda: daemon.socket.exists())
        d.eventually(lambda: (daemon.status().get("sync_progress") or {}).get("done", 0) > 0, timeout=60)
        busy = _raw(daemon.socket)
        busy.sendall(b"".join(msgpack.packb([0, i, "sync", []]) for i in range(8)))
        time.sleep(0.5)  # let all eight reach the daemon and start waiting
        with MemoryClient(daemon.socket, timeout=5) as client:
            for _ in range(5):
                assert client.ping()["pong"]  # a 5 s client timeout: the old daemon needed 25 s here
                agent = client.status()["agents"][0]
                assert agent["syncing"] or agent["embedding"]["waiting"]  # still indexing: the syncs still wait
        busy.close()
    finally:
        d.cleanup(daemon)
