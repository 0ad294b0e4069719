"""What another local user, an editor saving over a note, a symlink or a flood of connections can do to memoryd:
nothing of memoryd's can be read or called by another user, no acknowledged write is lost, a symlink is never
taken for its target, and one process cannot lock other clients out."""

from __future__ import annotations

import os
import random
import re
import signal
import socket as socketlib
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.entry_journal import EntryJournal
from memoryd.memory import AgentMemory
from memoryd_client.http_gate import HEADER_SECONDS
from memoryd_client.stub import MemoryClient
from tests import daemon as d
from tests.conftest import python_for_anyone, run_as, write

SAVE_STYLES = ("rename", "in-place")


def editor(note: Path, rounds: int, style: str, seed: int, done: threading.Event) -> None:
    """What an editor does on save, over and over: read the note, think, write the copy back (its own edit
    included)."""
    rng = random.Random(seed)
    try:
        for n in range(rounds):
            before = note.read_text(encoding="utf-8")
            time.sleep(rng.uniform(0, 0.01))
            after = before.replace("edited by hand", f"edited by hand ({n})", 1)
            if style == "rename":
                partial = note.with_name(f".{note.name}.swp")
                partial.write_text(after, encoding="utf-8")
                os.replace(partial, note)
            else:
                with open(note, "r+", encoding="utf-8") as fh:
                    fh.truncate(0)
                    fh.write(after)
    finally:
        done.set()


@pytest.mark.slow  # waits out the journal's window in real time
@pytest.mark.parametrize("style", SAVE_STYLES)
def test_no_acknowledged_write_is_lost_to_an_editor_saving_over_the_note(
    memory_factory: Callable[..., AgentMemory], workspace: Path, style: str
) -> None:
    note = write(workspace / "memory" / "log.md", "# Log\nedited by hand\n")
    memory = memory_factory()
    memory.journal = EntryJournal(memory.agent, memory._write_lock, memory._restored, window=0.3)  # < the race
    memory.sync()
    rounds, done = 300, threading.Event()
    saver = threading.Thread(target=editor, args=(note, rounds, style, 7, done))
    saver.start()
    rng = random.Random(11)
    written = []
    for n in range(rounds):  # the editor's read lands before some writes and after others: both orders
        written.append(f"decision {n}: the cache key holds tenant {n * 7919}")
        assert memory.write(written[-1], path="memory/log.md")["citation"].startswith("memory/log.md#L")
        time.sleep(rng.uniform(0, 0.004))
    saver.join()
    memory.journal.settle_now()
    text = note.read_text(encoding="utf-8")
    missing = [entry for entry in written if text.count(entry) != 1]
    assert not missing, f"{len(missing)} of {rounds} acknowledged writes lost or doubled"
    assert "edited by hand (" in text  # the editor's own change stands too
    assert memory.search("tenant 2361307", mode="keyword").results  # an entry put back is searchable (n = 299)


def _save_as_editor(note: Path, change: Callable[[str], str]) -> None:
    partial = note.with_name(f".{note.name}.swp")
    partial.write_text(change(note.read_text(encoding="utf-8")), encoding="utf-8")
    os.replace(partial, note)


def test_an_entry_deleted_after_its_window_stays_deleted_while_writes_go_on(
    memory_factory: Callable[..., AgentMemory], workspace: Path
) -> None:
    note = write(workspace / "memory" / "log.md", "# Log\n")
    memory = memory_factory()
    memory.journal = EntryJournal(memory.agent, memory._write_lock, window=0.4)
    memory.write("WRONG: the deploy key is in vault path secret/old", path="memory/log.md")
    for n in range(4):  # the agent keeps writing to the same note while the user takes the wrong line out
        time.sleep(0.25)
        memory.write(f"progress note {n}", path="memory/log.md")
        if n == 2:
            _save_as_editor(note, lambda text: text.replace("WRONG: the deploy key is in vault path secret/old\n", ""))
    memory.journal.settle_now()
    time.sleep(0.5)
    memory.journal.settle_now()
    text = note.read_text(encoding="utf-8")
    assert "WRONG" not in text and all(f"progress note {n}" in text for n in range(4))


def test_an_entry_corrected_in_its_window_is_not_put_back_beside_the_correction(
    memory_factory: Callable[..., AgentMemory], workspace: Path
) -> None:
    note = write(workspace / "memory" / "prefs.md", "# Preferences\n")
    memory = memory_factory()
    memory.write("Alice prefers tabs for indentation", path="memory/prefs.md")
    memory.journal.settle_now()  # the note as written has been read
    _save_as_editor(note, lambda text: text.replace("prefers tabs", "prefers spaces"))
    memory.journal.settle_now()
    text = note.read_text(encoding="utf-8")
    assert "Alice prefers spaces for indentation" in text and "prefers tabs" not in text
    assert memory.journal.pending() == 0


@pytest.mark.slow  # a real daemon
def test_the_daemon_keeps_its_files_private(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Keys\nthe staging password is in the vault\n")
    data_dir = tmp_path / "data"
    old_index = data_dir / "agents" / "main"
    old_index.mkdir(parents=True, mode=0o755)
    os.chmod(data_dir, 0o755)
    os.chmod(old_index, 0o755)
    daemon = d.start(tmp_path, workspace, data_dir=data_dir)
    try:
        with MemoryClient(daemon.socket) as client:
            client.write("the deploy key rotates on Fridays")
        files = [p for p in data_dir.rglob("*") if p.is_file()]
        assert any(p.name == "index.sqlite-wal" for p in files)
        for path in [data_dir, *(p for p in data_dir.rglob("*"))]:
            assert stat.S_IMODE(path.lstat().st_mode) & 0o077 == 0, f"{path} is {oct(path.lstat().st_mode)}"
        written = next((workspace / "memory").glob("*.md"))
        assert stat.S_IMODE(written.stat().st_mode) == 0o600
    finally:
        d.cleanup(daemon)


def test_stopping_removes_only_the_socket_the_daemon_made(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# x\n")
    daemon = d.start(tmp_path, workspace)
    try:
        daemon.socket.unlink()
        daemon.socket.write_text("someone else's file\n")
        daemon.proc.send_signal(signal.SIGTERM)
        daemon.proc.wait(30)
        assert daemon.socket.read_text() == "someone else's file\n"
    finally:
        d.cleanup(daemon)


def test_a_symlink_is_never_taken_for_its_target(tmp_path: Path, workspace: Path) -> None:
    memory_dir = workspace / "memory"
    write(memory_dir / "n5.md", "# Five\nthe quokka migration finished in March\n")
    write(memory_dir / "n7.md", "# Seven\nthe pelican rollout is paused\n")
    outside = write(tmp_path / "elsewhere.md", "# Elsewhere\nnothing to see\n")
    daemon = d.start(tmp_path, workspace)
    try:
        with MemoryClient(daemon.socket) as client:
            assert client.search("quokka migration", mode="keyword").results
            (memory_dir / "alias.md").symlink_to("n5.md")
            (memory_dir / "n7.md").unlink()
            (memory_dir / "n7.md").symlink_to(outside)
            d.eventually(lambda: not client.search("pelican rollout", mode="keyword").results)
            client.sync()
            hits = client.search("quokka migration", mode="keyword").results
            assert [h.path for h in hits] == ["memory/n5.md"]
    finally:
        d.cleanup(daemon)


STORM = """
import socket, sys, time
end = time.monotonic() + float(sys.argv[2])
n = 0
while time.monotonic() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sys.argv[1])
    except OSError:
        pass
    s.close()
    n += 1
print(n)
"""


@pytest.mark.slow
def test_a_connect_close_storm_leaves_other_clients_answered(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Cache\nthe billing cache is Memcached\n")
    daemon = d.start(tmp_path, workspace)
    try:
        storm = subprocess.Popen(
            [sys.executable, "-c", STORM, str(daemon.socket), "5"], stdout=subprocess.PIPE, text=True
        )
        time.sleep(0.5)
        answered = 0
        while storm.poll() is None:
            with MemoryClient(daemon.socket, timeout=10) as client:
                assert client.recall("which cache does billing use?", client="storm-test")["memories"]
                answered += 1
        assert int(storm.stdout.read()) > 1000 and answered > 5  # type: ignore[union-attr]
        refusals = [line for line in daemon.log.read_text().splitlines() if "refused a connection" in line]
        assert len(refusals) < 50, len(refusals)  # one line per ten seconds, with how many were alike
    finally:
        d.cleanup(daemon)


@pytest.mark.slow  # a real daemon and the MCP server over HTTP
def test_mcp_http_needs_the_users_token(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    data_dir = tmp_path / "data"
    daemon = d.start(tmp_path, workspace, data_dir=data_dir)
    server, port = _serve_mcp_http(daemon, data_dir)
    try:
        banner = server.stderr.readline()  # type: ignore[union-attr]
        token_file = Path(re.search(r"the token in (\S+)>", banner).group(1))  # type: ignore[union-attr]
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        url = f"http://127.0.0.1:{port}/mcp"
        d.eventually(lambda: _answers(port), timeout=30)
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        for refused in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
            assert _post(url, listing, refused) == 401
        bearer = {"Authorization": f"Bearer {token}"}
        assert _post(url, listing, {**bearer, "Origin": "http://evil.example"}) == 403
        assert _post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _hello()}, bearer) == 200
        slow = socketlib.create_connection(("127.0.0.1", port), timeout=HEADER_SECONDS + 10)
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
        begun = time.monotonic()
        assert slow.recv(100) == b"" and time.monotonic() - begun < HEADER_SECONDS + 10
        slow.close()
    finally:
        server.terminate()
        server.wait(10)
        d.cleanup(daemon)


def _serve_mcp_http(daemon: d.Daemon, data_dir: Path) -> tuple[subprocess.Popen[str], int]:
    """`memctl mcp --http` on a free port, its token in `data_dir`; its first stderr line names the token file."""
    with socketlib.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(daemon.socket), "mcp", "--http", str(port)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MEMORYD_DATA_DIR": str(data_dir)},
    )
    return server, port


def _post(url: str, body: dict[str, object], headers: dict[str, str]) -> int:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    for name, value in {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}.items():
        request.add_header(name, value)
    for name, value in headers.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _hello() -> dict[str, object]:
    return {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def _answers(port: int) -> bool:
    try:
        with socketlib.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


INTRUDER = "memoryd-intruder"


def _intruder() -> tuple[int, int]:
    """A second local user (made on first use; the tests run as root, as CI does)."""
    import pwd

    try:
        entry = pwd.getpwnam(INTRUDER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", INTRUDER], check=True)
        entry = pwd.getpwnam(INTRUDER)
    return entry.pw_uid, entry.pw_gid


INTRUDER_READS = """
import json, os, socket, sys, urllib.request
out = {}
for path in sys.argv[3:]:
    try:
        with open(path, "rb") as fh:
            out[path] = "read %d bytes" % len(fh.read())
    except OSError as exc:
        out[path] = "refused: %s" % exc.strerror
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
    s.sendall(bytes([0x94, 0x00, 0x01, 0xa4]) + b"ping" + bytes([0x90]))
    out["socket"] = "answered %r" % s.recv(100)
except OSError as exc:
    out["socket"] = "refused: %s" % (exc.strerror or exc)
url, token = sys.argv[2].split(" ", 1)
for label, header in (("mcp-no-token", None), ("mcp-with-token", token)):
    request = urllib.request.Request(url, data=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if header:
        request.add_header("Authorization", "Bearer " + header)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            out[label] = "answered %d" % reply.status
    except urllib.error.HTTPError as exc:
        out[label] = "refused %d" % exc.code
    except OSError as exc:
        out[label] = "refused: %s" % exc
host, port = url.split("/")[2].split(":")
held = []
for _ in range(50):
    c = socket.create_connection((host, int(port)), timeout=5)
    c.sendall(b"POST /mcp HTTP/1.1\\r\\nHost: x\\r\\n")
    held.append(c)
closed = 0
for c in held:
    try:
        closed += c.recv(100) == b""
    except OSError:
        closed += 1
out["half-sent requests closed"] = closed
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="making a second user needs root (CI runs as root)")
def test_another_local_user_can_read_and_call_nothing(workspace: Path) -> None:
    import json
    import shutil
    import tempfile

    uid, gid = _intruder()
    home = Path(tempfile.mkdtemp(prefix="md-home-", dir="/tmp"))  # a home others may list, as most are
    os.chmod(home, 0o755)
    try:
        notes = home / "notes"
        write(notes / "MEMORY.md", "# Creds\nthe staging password is hunter2-staging\n")
        os.chmod(notes, 0o755)
        data_dir = home / ".local" / "share" / "memoryd"
        run_dir = home / "run"
        run_dir.mkdir(mode=0o755)
        os.chmod(run_dir, 0o755)
        daemon = d.start(home, notes, data_dir=data_dir, socket=run_dir / "m.sock")
        mcp, port = _serve_mcp_http(daemon, data_dir)
        try:
            with MemoryClient(daemon.socket) as client:
                client.write("the deploy token is rotated on Fridays")
            d.eventually(lambda: _answers(port), timeout=30)
            token_file = d.eventually(lambda: next(data_dir.glob("*.token"), None), timeout=30)
            token = token_file.read_text().strip()  # as if it had leaked: the uid check still refuses
            secrets = [*data_dir.rglob("index.sqlite*"), token_file, data_dir / "hooks.log"]
            secrets = [p for p in secrets if p.exists()]
            assert any(p.name == "index.sqlite-wal" for p in secrets)

            def attempt() -> dict[str, str]:
                where = [str(daemon.socket), f"http://127.0.0.1:{port}/mcp {token}", *map(str, secrets)]
                done = run_as(uid, gid, [python_for_anyone(), "-c", INTRUDER_READS, *where])
                assert done.returncode == 0, done.stderr
                return json.loads(done.stdout)

            seen = attempt()
            for path in secrets:
                assert seen[str(path)].startswith("refused"), (path, seen[str(path)])
            assert seen["socket"].startswith("refused"), seen["socket"]
            assert seen["mcp-no-token"].startswith("refused"), seen["mcp-no-token"]
            assert seen["mcp-with-token"].startswith("refused"), seen["mcp-with-token"]  # even holding the token
            assert seen["half-sent requests closed"] == 50  # closed as they open: none can hold a descriptor
            os.chmod(daemon.socket, 0o666)  # past the file modes, the daemon itself refuses another uid
            assert not attempt()["socket"].startswith("answered")
        finally:
            mcp.terminate()
            mcp.wait(10)
            d.cleanup(daemon)
    finally:
        shutil.rmtree(home, ignore_errors=True)


class _ServedInProcess:
    """An RPCServer answering every call with a pong, on an event loop of its own thread."""

    def __init__(self, path: Path, rate: float, burst: float) -> None:
        import asyncio

        from memoryd.daemon.admission import ConnectRate
        from memoryd.daemon.rpc import RPCServer

        self.loop = asyncio.new_event_loop()
        self.server = RPCServer(path, lambda method, params: {"pong": True})
        self.server._rate = ConnectRate(burst=burst, rate=rate)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)

    def close(self) -> None:
        import asyncio

        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_a_client_that_connects_too_fast_is_slowed_down_not_failed() -> None:
    folder = d.short_dir()
    served = _ServedInProcess(folder / "s.sock", rate=40, burst=5)
    try:
        for _ in range(60):  # a fresh connection for every call, as a script calling memctl's stub in a loop does
            with MemoryClient(folder / "s.sock", timeout=10) as client:
                assert client.call("ping", {}) == {"pong": True}
        refused = served.server._warn._skipped.get("refused a connection", 0)
        assert refused > 0  # the daemon did turn connections away: the client waited and asked again
    finally:
        served.close()


def test_the_library_keeps_its_index_private_whatever_the_umask(tmp_path: Path, workspace: Path) -> None:
    import memoryd

    write(workspace / "MEMORY.md", "# Creds\nthe staging password is in the vault\n")
    data_dir = tmp_path / "libdata"
    previous = os.umask(0o022)
    try:
        with memoryd.Memory.quick(workspace, data_dir) as memory:
            memory.sync()
            memory.write("the deploy key rotates on Fridays")
    finally:
        os.umask(previous)
    made = [data_dir, *data_dir.rglob("*")]
    assert any(p.name == "index.sqlite" for p in made)
    for path in made:
        assert stat.S_IMODE(path.lstat().st_mode) & 0o077 == 0, f"{path} is {oct(path.lstat().st_mode)}"
