from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
import sqlite_vec

from memoryd.memory import AgentMemory
from memoryd.store.schema import SCHEMA_VERSION
from memoryd.store.sqlite import Store

from .conftest import CountingEmbedder, write


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


def _sql(memory: AgentMemory, query: str, *args: object) -> list[tuple]:
    conn = apsw.Connection(str(memory.agent.store))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    try:
        return list(conn.execute(query, args))
    finally:
        conn.close()


def test_store_is_a_wal_sqlite_file_with_versioned_schema(memory_factory: Callable[..., AgentMemory]) -> None:
    mem = memory_factory()
    assert mem.agent.store.is_file()
    assert _sql(mem, "PRAGMA journal_mode")[0][0] == "wal"
    assert _sql(mem, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    tables = {r[0] for r in _sql(mem, "SELECT name FROM sqlite_master")}
    assert {"meta", "files", "chunks", "embedding_cache", "chunks_fts"} <= tables


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(RuntimeError, match="newer"):
        Store(path)


def test_incremental_sync_only_touches_changed_files(workspace: Path, memory_factory: Callable) -> None:
    for i in range(5):
        write(workspace / "memory" / f"n{i}.md", f"# Note {i}\ncontent number {i}\n")
    embedder = CountingEmbedder()
    mem = memory_factory(embedder)
    first = mem.sync()
    assert first.files_indexed == 5 and first.embedded == 5
    again = mem.sync()
    assert again.files_indexed == 0 and again.bytes_read == 0 and again.files_unchanged == 5
    target = workspace / "memory" / "n2.md"
    write(target, "# Note 2\ncontent number 2, now with pelicans\n")
    _bump_mtime(target)
    third = mem.sync()
    assert third.files_indexed == 1 and third.bytes_read == target.stat().st_size
    assert mem.search("pelicans", mode="keyword").results[0].path == "memory/n2.md"
    _bump_mtime(workspace / "memory" / "n3.md")  # touched, same bytes: no re-chunking
    fourth = mem.sync()
    assert fourth.files_indexed == 0 and fourth.files_unchanged == 5


def test_deleted_file_vanishes_everywhere(workspace: Path, memory_factory: Callable) -> None:
    write(workspace / "memory" / "keep.md", "# Keep\nordinary note\n")
    doomed = write(workspace / "memory" / "doomed.md", "# Doomed\nthe secret flamingo plan\n")
    mem = memory_factory()
    mem.sync()
    assert mem.search("flamingo").results
    doomed.unlink()
    report = mem.sync()
    assert report.files_deleted == 1 and report.chunks_removed == 1
    for mode in ("hybrid", "keyword", "vector"):
        assert all(r.path != "memory/doomed.md" for r in mem.search("secret flamingo plan", mode=mode).results)
    assert _sql(mem, "SELECT count(*) FROM chunks WHERE text LIKE '%flamingo%'")[0][0] == 0
    assert _sql(mem, "SELECT count(*) FROM files WHERE path = 'memory/doomed.md'")[0][0] == 0
    assert _sql(mem, "SELECT count(*) FROM chunks_vec")[0][0] == 1
    # Reopening the index (a restart) does not bring it back either.
    mem.close()
    reopened = memory_factory()
    assert all(r.path != "memory/doomed.md" for r in reopened.search("flamingo", mode="keyword").results)


def test_unchanged_chunks_reuse_cached_embeddings(workspace: Path, memory_factory: Callable) -> None:
    note = workspace / "memory" / "a.md"
    write(note, "# A\nfirst section stays\n\n# B\nsecond section stays\n")
    embedder = CountingEmbedder()
    mem = memory_factory(embedder)
    mem.sync()
    assert len(embedder.calls) == 2
    write(note, "# A\nfirst section stays\n\n# B\nsecond section stays\n\n# C\nthird is new\n")
    _bump_mtime(note)
    mem.sync()
    assert embedder.calls[2:] == ["# C\nthird is new"]
    # A forced full resync re-chunks every file but embeds nothing again.
    report = mem.sync(force=True)
    assert report.files_indexed == 1 and report.embedded == 0 and report.cache_hits == 3
    assert len(embedder.calls) == 3


def test_vector_search_without_sqlite_vec_uses_the_fallback_scan(workspace: Path, memory_factory: Callable) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n\n# Food\napples and pears\n")
    mem = memory_factory(use_sqlite_vec=False)
    mem.sync()
    assert mem.status()["vector_backend"] == "blob"
    response = mem.search("JWT expiry", mode="vector")
    assert response.mode == "vector" and response.results[0].snippet.startswith("# Auth")


def test_vector_search_still_works_without_fts5(workspace: Path, agent_factory: Callable, monkeypatch) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n\n# Food\napples and pears\n")
    monkeypatch.setattr(Store, "_ensure_fts", lambda self: "FTS5 unavailable: simulated")
    with AgentMemory(agent_factory()) as mem:
        mem.sync()
        status = mem.status()
        assert status["fts_available"] is False and status["chunks"] == 2
        response = mem.search("JWT expiry")
        assert response.mode == "vector" and response.results[0].snippet.startswith("# Auth")
        assert mem.search("JWT", mode="keyword").results == []


def test_agents_are_isolated(tmp_path: Path) -> None:
    from memoryd.config import quickstart_agent

    for name, word in (("a", "alpaca"), ("b", "bison")):
        write(tmp_path / name / "MEMORY.md", f"# {name}\n{word}\n")
    a = AgentMemory(quickstart_agent(tmp_path / "a", tmp_path / "data", agent_id="a"))
    b = AgentMemory(quickstart_agent(tmp_path / "b", tmp_path / "data", agent_id="b"))
    with a, b:
        a.sync()
        b.sync()
        assert a.agent.store != b.agent.store
        assert a.search("bison", mode="keyword").results == []
        assert b.search("bison", mode="keyword").results


def test_get_reads_lines_and_refuses_escapes(workspace: Path, memory_factory: Callable, tmp_path: Path) -> None:
    from memoryd.memory import RequestError

    write(workspace / "MEMORY.md", "\n".join(f"line {i}" for i in range(1, 21)) + "\n")
    secret = write(tmp_path / "secret.md", "top secret")
    os.symlink(secret, workspace / "memory" / "link.md")
    mem = memory_factory()
    got = mem.get("MEMORY.md", 5, 3)
    assert got == {
        "path": "MEMORY.md",
        "from": 5,
        "lines": 3,
        "total_lines": 20,
        "text": "line 5\nline 6\nline 7",
        "truncated": False,
        "hash": "sha256:" + hashlib.sha256(b"line 5\nline 6\nline 7").hexdigest(),
    }
    assert mem.get("MEMORY.md", 19)["text"] == "line 19\nline 20"
    with pytest.raises(RequestError, match="has 20 lines; line 50 is past its end"):
        mem.get("MEMORY.md", 50)
    with pytest.raises(RequestError, match="does not exist"):
        mem.get("memory/2020-01-01.md")
    for bad in ("../secret.md", str(secret), "memory/link.md", "/etc/passwd"):
        with pytest.raises(RequestError, match="not a file inside"):
            mem.get(bad)
    with pytest.raises(RequestError, match="from"):
        mem.get("MEMORY.md", 0)
    with pytest.raises(RequestError, match="lines"):
        mem.get("MEMORY.md", 1, -2)


def test_get_of_a_huge_note_reads_only_its_window_and_caps_the_reply(workspace: Path, memory_factory: Callable) -> None:
    """A 50 MB note: `get` returns the lines asked for, cut lines say so, and the reply stays within its caps."""
    from memoryd.notes import MAX_GET_CHARS, MAX_GET_LINE_CHARS

    big = workspace / "memory" / "big.md"
    big.parent.mkdir(parents=True, exist_ok=True)
    with big.open("w") as fh:
        fh.write("token sk-ant-" + "a" * 40 + "\n")
        fh.write("w" * 30_000_000 + "\n")
        for i in range(200_000):
            fh.write(f"line {i}\n")
    mem = memory_factory()
    head = mem.get("memory/big.md", 1, 3)
    assert head["total_lines"] == 200_002 and head["lines"] == 3 and head["truncated"]
    first, second, third = head["text"].split("\n")
    assert first == "token [REDACTED]"
    assert second == "w" * MAX_GET_LINE_CHARS and third == "line 0"
    tail = mem.get("memory/big.md", 200_002)
    assert tail["text"] == "line 199999" and not tail["truncated"]
    every = mem.get("memory/big.md", 3)
    assert every["lines"] == 5000 and len(every["text"]) <= MAX_GET_CHARS


def test_write_appends_durably_and_is_searchable(workspace: Path, memory_factory: Callable) -> None:
    from memoryd.memory import RequestError

    mem = memory_factory()
    first = mem.write("Decided: Postgres for billing.")
    today = time.strftime("%Y-%m-%d")
    assert first["path"] == f"memory/{today}.md" and first["citation"] == f"memory/{today}.md#L1-L1"
    second = mem.write("Second entry\nwith two lines", path="memory/decisions.md")
    third = mem.write("Third entry", path="decisions.md")
    assert second["citation"] == "memory/decisions.md#L1-L2"
    assert third["citation"] == "memory/decisions.md#L4-L4"
    assert (workspace / "memory" / "decisions.md").read_text() == "Second entry\nwith two lines\n\nThird entry\n"
    hit = mem.search("Postgres billing", mode="keyword").results[0]
    assert hit.path == first["path"]
    for bad in ("../escape.md", "/tmp/x.md", "memory/../../x.md", "notes.txt", ""):
        with pytest.raises(RequestError):
            mem.write("x", path=bad)
    with pytest.raises(RequestError):
        mem.write("   ")
    assert not (workspace.parent / "escape.md").exists()


def test_a_v1_index_migrates_and_is_rebuilt(workspace: Path, agent_factory: Callable) -> None:
    """An index from the first schema gains the new columns in place, then the daemon's reindex refills them."""
    from memoryd.store import schema

    write(workspace / "memory" / "2026-01-05.md", "# Standup\nmigrations keep data\n")
    agent = agent_factory()
    agent.store.parent.mkdir(parents=True)
    conn = apsw.Connection(str(agent.store))
    schema.MIGRATIONS[1](conn)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO meta(key, value) VALUES ('chunking', '400/80/analyzer-3')")
    conn.close()
    with AgentMemory(agent) as memory:
        assert _sql(memory, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
        assert "ts" in {r[1] for r in _sql(memory, "PRAGMA table_info(chunks)")}
        assert "chunking changed" in (memory.syncer.needs_reindex() or "")
        memory.reindex()
        assert memory.syncer.needs_reindex() is None
        hit = memory.search("migrations", mode="keyword", explain=True).results[0]
        assert hit.explain["ts"] is not None and hit.explain["age_days"] > 300


def test_cache_is_compact_and_faithful(workspace: Path, memory_factory: Callable) -> None:
    import numpy as np

    write(workspace / "MEMORY.md", "# A\nalpha beta gamma\n")
    embedder = CountingEmbedder(dims=384)
    memory = memory_factory(embedder)
    memory.sync()
    digest, dims, blob = _sql(memory, "SELECT hash, dims, vector FROM embedding_cache")[0]
    assert dims == 384 and len(blob) == 2 * 384  # float16 on disk
    cached = memory.store.cache_get("hash", "hash-384", "", [digest])[digest]
    original = embedder.embed_documents(["# A\nalpha beta gamma"])[0]
    assert float(cached @ original) > 0.9999
    assert memory.store.cache_get("hash", "hash-384", "", [digest])[digest].dtype == np.float32


def test_a_targeted_sync_touches_only_the_reported_paths(
    workspace: Path, memory_factory: Callable[..., AgentMemory], tmp_path: Path
) -> None:
    for i in range(20):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\nThe note about topic {i} and the zebu herd.\n")
    embedder = CountingEmbedder()
    memory = memory_factory(embedder)
    memory.sync()
    embedder.calls.clear()
    memory_dir = workspace / "memory"
    write(memory_dir / "n3.md", "# N3\nThe note about the okapi now.\n")
    (memory_dir / "n4.md").rename(memory_dir / "moved.md")
    (memory_dir / "n5.md").unlink()
    write(memory_dir / "node_modules" / "x.md", "# X\nignored okapi\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\nsymlinked okapi\n")
    (memory_dir / "link.md").symlink_to(outside)
    paths = [memory_dir / p for p in ("n3.md", "n4.md", "moved.md", "n5.md", "node_modules/x.md", "link.md")]
    report = memory.sync_paths(paths)
    assert report.files_seen == 2 and report.files_indexed == 2 and report.files_deleted == 2
    assert len(embedder.calls) == 1  # n3's new text only: the moved note's vector came from the cache
    assert {r.path for r in memory.search("okapi", mode="keyword").results} == {"memory/n3.md"}
    assert memory.store.counts()["files"] == 19
    assert memory.sync().files_indexed == 0  # a full walk agrees with what the targeted sync did


def test_readers_of_finished_threads_are_closed_and_idle_caches_given_back(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    """Each thread reads through its own connection; one whose thread has ended is closed when the next is
    opened (a caller's threads come and go), and release_memory empties the page caches."""
    import threading

    for i in range(40):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\n" + f"note {i} about herons and lanterns\n" * 20)
    memory = memory_factory()
    memory.sync()
    store = memory.store

    def read() -> None:
        store.reader.execute("SELECT count(*), sum(length(text)) FROM chunks").fetchall()
        memory.search("herons lanterns", mode="keyword")

    read()
    before = {id(conn) for _, conn in store._readers}  # this thread's, and any other that still runs
    for _ in range(5):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    extra = [conn for _, conn in store._readers if id(conn) not in before]
    assert len(extra) == 1  # each new reader closed the one before it, whose thread had ended
    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    with pytest.raises(apsw.ConnectionClosedError):
        extra[0].execute("SELECT 1")
    assert store.cache_bytes() > 0
    store.release_memory()
    assert store.cache_bytes() < 64 * 1024  # what shrink_memory cannot drop: a few pinned pages at most
    assert memory.search("herons lanterns", mode="keyword").results  # readers still work after it


def test_page_caches_go_back_once_per_idle_spell(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> None:
    """The daemon calls release_idle_caches every second: it shrinks the caches once no search or sync has run
    for the idle time, once per spell, and a search starts a new spell."""
    for i in range(40):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\n" + f"note {i} about herons and lanterns\n" * 20)
    memory = memory_factory()
    memory.sync()
    memory.search("herons lanterns", mode="keyword")
    assert memory.store.cache_bytes() > 64 * 1024
    assert not memory.release_idle_caches(3600)  # searched just now
    assert memory.store.cache_bytes() > 64 * 1024
    time.sleep(0.05)
    assert memory.release_idle_caches(0.01)
    assert memory.store.cache_bytes() < 64 * 1024
    assert not memory.release_idle_caches(0.01)  # once per idle spell
    assert memory.search("herons lanterns", mode="keyword").results
    time.sleep(0.05)
    assert memory.release_idle_caches(0.01)  # the search began a new spell


def test_a_reindex_frees_the_index_it_replaced_at_once(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    """The warm matrix listens to its store, and the store held the listener: until a garbage collection came,
    every reindex kept the old matrix (38 MB at 100k chunks) alive beside the new one."""
    import gc
    import weakref

    for i in range(20):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\nnote {i} about herons\n")
    memory = memory_factory()
    memory.sync()
    assert memory.search("herons").results
    old_store, old_vectors = weakref.ref(memory.store), weakref.ref(memory.vectors)
    gc.disable()
    try:
        memory.reindex()
        assert old_store() is None and old_vectors() is None
    finally:
        gc.enable()
    assert memory.search("herons").results


def test_status_counts_follow_every_write_without_loading_the_matrix(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    for i in range(5):
        write(workspace / "memory" / f"c{i}.md", f"# C{i}\ncounted note {i}\n")
    write(workspace / "memory" / "empty.md", "")
    first = memory_factory()
    first.sync()
    first.close()
    memory = memory_factory()  # a new daemon on that index: the warm matrix is not loaded yet
    status = memory.status()
    assert not memory.vectors._loaded  # status answered from index counts, without loading every vector
    assert status["vector_available"] and status["chunks"] == status["embedded_chunks"] == 5
    files, cached = status["files"], status["cached_embeddings"]
    assert files == 6  # the empty note has a file row and no chunk
    assert cached >= 5
    write(workspace / "memory" / "c5.md", "# C5\ncounted note five, new text\n")
    memory.sync_paths([workspace / "memory" / "c5.md"])
    status = memory.status()
    assert (status["files"], status["chunks"], status["embedded_chunks"]) == (files + 1, 6, 6)
    assert status["cached_embeddings"] == cached + 1
    (workspace / "memory" / "empty.md").unlink()  # a file without chunks: no chunk change to hear of
    memory.sync_paths([workspace / "memory" / "empty.md"])
    assert memory.status()["files"] == files
    (workspace / "memory" / "c0.md").unlink()
    memory.sync_paths([workspace / "memory" / "c0.md"])
    status = memory.status()
    assert (status["files"], status["chunks"], status["embedded_chunks"]) == (files - 1, 5, 5)
    assert status["cached_embeddings"] == cached + 1  # the cache keeps a deleted note's vector
    write(workspace / "memory" / "c5.md", "# C1\ncounted note 1\n")  # a text the cache holds: no new row
    memory.sync_paths([workspace / "memory" / "c5.md"])
    counted = memory.store.reader.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
    assert memory.status()["cached_embeddings"] == counted == cached + 1


def test_a_changed_transcript_is_synced_alone(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> None:
    """A transcript that grew used to force a walk of the whole workspace; it is read alone, from its cursor, and
    one that was deleted is removed, as a Markdown note is."""
    sessions = workspace / "sessions"
    for i in range(30):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\nThe note about topic {i}.\n")
    live = sessions / "live.jsonl"
    old = sessions / "old.jsonl"
    turn = '{{"role": "user", "content": "{}"}}\n'
    write(live, turn.format("we talked about the quokka"))
    write(old, turn.format("an older talk about the numbat"))
    memory = memory_factory(sources=("memory", "sessions"), sessions_dirs=(sessions,))
    assert memory.sync().files_indexed == 32
    with live.open("a") as fh:
        fh.write(turn.format("and then about the kakapo"))
    old.unlink()
    ignored = sessions / "node_modules" / "x.jsonl"
    write(ignored, turn.format("ignored kakapo"))
    report = memory.sync_paths([live, old, ignored])
    assert report.files_seen == 1 and report.files_indexed == 1 and report.files_deleted == 1
    assert [r.path for r in memory.search("kakapo", mode="keyword").results] == ["sessions/live.jsonl"]
    assert not memory.search("numbat", mode="keyword").results
    assert memory.sync().files_indexed == 0  # a full walk agrees


def test_a_note_written_while_a_sync_lists_the_workspace_stays_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `write` indexes its note while a sync is between listing the workspace and reading the index: the sync
    must not take the note it did not list for one deleted (it would vanish from search until the next sync)."""
    from memoryd.config import quickstart_agent
    from memoryd.embeddings.hashing import HashingEmbedder
    from memoryd.ingest import sync as sync_module
    from memoryd.sources.discovery import SourceFile

    workspace = tmp_path / "ws"
    write(workspace / "MEMORY.md", "# Memory\n\nThe first note.\n")
    with AgentMemory(quickstart_agent(workspace, tmp_path / "data"), HashingEmbedder(64)) as memory:
        memory.sync()
        listed = sync_module.discover

        def list_then_write(agent):  # type: ignore[no-untyped-def]
            found = listed(agent)
            note = workspace / "memory" / "mid-sync.md"
            write(note, "# Mid-sync\n\nThe okapi decision landed while the sync ran.\n")
            memory.syncer.sync_file(SourceFile("memory/mid-sync.md", note, "memory"))
            return found

        monkeypatch.setattr(sync_module, "discover", list_then_write)
        memory.sync()
        monkeypatch.setattr(sync_module, "discover", listed)
        assert [r.citation for r in memory.search("okapi", mode="keyword").results] == ["memory/mid-sync.md#L1-L3"]
