"""One owner per index: a second daemon or library user on the same data dir or index is refused and changes
nothing; a workspace that does not exist is refused at start, and one that vanishes never empties the index."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from memoryd.config import quickstart_agent
from memoryd.memory import AgentMemory, RequestError
from memoryd.store.lock import Locked

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model


def _index_rows(store: Path) -> tuple[list, list]:
    conn = apsw.Connection(f"file:{store}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        files = list(conn.execute("SELECT path, hash FROM files ORDER BY path"))
        chunks = list(conn.execute("SELECT hash, text FROM chunks ORDER BY id"))
        return files, chunks
    finally:
        conn.close()


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memoryd.daemon.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_a_second_daemon_on_the_same_data_dir_refuses_and_changes_nothing(tmp_path: Path, workspace: Path) -> None:
    for i in range(40):
        write(workspace / "memory" / f"n{i:02}.md", f"# Note {i}\nkestrel{i} perched on the fence\n")
    (tmp_path / "a").mkdir()
    first = d.start(tmp_path / "a", workspace)
    try:
        store = first.data_dir / "agents" / "main" / "index.sqlite"
        before = _index_rows(store)
        assert len(before[0]) == 40
        empty = tmp_path / "empty"
        empty.mkdir()
        other_socket = d.short_dir() / "b.sock"
        second = _run(
            "run", "--workspace", str(empty), "--socket", str(other_socket), "--data-dir", str(first.data_dir)
        )
        assert second.returncode != 0
        last = second.stderr.strip().splitlines()[-1]
        assert f"memoryd pid {first.proc.pid}" in last and str(first.socket) in last, second.stderr
        assert not other_socket.exists()
        assert _index_rows(store) == before  # files and chunks identical
        with first.client() as client:
            assert [h.path for h in client.search("kestrel7", mode="keyword").results][:1] == ["memory/n07.md"]
    finally:
        d.cleanup(first)


def test_a_library_user_cannot_open_an_index_a_daemon_owns(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    daemon = d.start(tmp_path, workspace)
    try:
        agent = quickstart_agent(workspace, daemon.data_dir)
        with pytest.raises(Locked, match=f"memoryd pid {daemon.proc.pid}"):
            AgentMemory(agent)
    finally:
        d.cleanup(daemon)
    with AgentMemory(quickstart_agent(workspace, daemon.data_dir)) as memory:  # free once the daemon stopped
        assert memory.search("JWT", mode="keyword").results


def test_a_missing_workspace_is_a_start_error_and_a_config_check_error(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    started = _run(
        "run", "--workspace", str(typo), "--socket", str(d.short_dir() / "s.sock"), "--data-dir", str(tmp_path)
    )
    assert started.returncode != 0 and f"workspace {typo} does not exist" in started.stderr
    assert not typo.exists()
    config = tmp_path / "config.toml"
    config.write_text(
        f'[[agents]]\nid = "a"\nworkspace = "{typo}"\nsources = ["memory", "sessions"]\nmax_result = 3\n'
        f'[agents.embedding]\nprovider = "lokal"\n[agents.query]\nfusion = "magic"\n'
        f'[[agents]]\nid = "b"\nworkspace = "{tmp_path}"\n[agents.embedding]\nprovider = "local"\n'
        f'model_path = "{tmp_path / "nope.gguf"}"\n'
    )
    checked = _run("config", "check", "--config", str(config))
    assert checked.returncode == 1
    for problem in ("max_result: unknown key", "unknown provider 'lokal'", "fusion", "model_path"):
        assert problem in checked.stderr, checked.stderr
    config.write_text(
        f'[[agents]]\nid = "a"\nworkspace = "{typo}"\nsources = ["memory", "sessions"]\n'
        f'[[agents]]\nid = "b"\nworkspace = "{tmp_path}"\nsources = ["memory", "sessions"]\nsessions_dir = "s"\n'
    )
    checked = _run("config", "check", "--config", str(config))
    assert checked.returncode == 1
    assert f"workspace {typo} does not exist" in checked.stderr
    assert "no sessions_dir" in checked.stderr and f"sessions_dir {tmp_path / 's'} does not exist" in checked.stderr


def test_a_workspace_that_vanishes_keeps_its_index_until_it_returns(tmp_path: Path, workspace: Path) -> None:
    for i in range(5):
        write(workspace / "memory" / f"n{i}.md", f"# Note {i}\nheron{i} by the water\n")
    daemon = d.start(tmp_path, workspace)
    try:
        moved = tmp_path / "moved"
        shutil.move(str(workspace), moved)  # unmounted, renamed: gone for now
        with daemon.client() as client:
            report = client.sync()
            assert report["report"]["missing_roots"] == [str(workspace)]
            assert report["report"]["files_deleted"] == 0
            assert client.search("heron3", mode="keyword").results[0].path == "memory/n3.md"
            with pytest.raises(Exception, match=r"workspace .* is missing"):
                client.write("a note while the workspace is away")
            assert not workspace.exists()  # the write did not recreate it empty
            d.eventually(lambda: "is missing" in d.Daemon.status(daemon)["watcher"], timeout=20)
        shutil.move(str(moved), workspace)
        write(workspace / "memory" / "n9.md", "# Back\negret9 returns\n")
        with daemon.client() as client:
            client.sync()
            assert client.search("egret9", mode="keyword").results[0].path == "memory/n9.md"
            assert client.status()["agents"][0]["files"] == 6
    finally:
        d.cleanup(daemon)


def test_write_paths_mean_what_they_say(memory_factory, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    memory = memory_factory()
    with pytest.raises(RequestError, match="'/'"):
        memory.write("x", "memory\\..\\..\\x.md")
    assert not list(workspace.rglob("*\\*"))
    root = memory.write("a root fact", "MEMORY.md")
    assert root["path"] == "MEMORY.md" and (workspace / "MEMORY.md").read_text().endswith("a root fact\n")
    assert not (workspace / "memory" / "MEMORY.md").exists()
    people = memory.write("Ann leads payments", "people/ann.md")
    assert people["path"] == "memory/people/ann.md"
    found = memory.search("Ann payments", mode="keyword", path="people")  # the same shorthand as the write's
    assert [r.path for r in found.results] == ["memory/people/ann.md"]
    kinds = memory.search("Ann payments", mode="keyword", type=["semantic"] * 100_000)  # repeats mean nothing more
    assert kinds.results == []
