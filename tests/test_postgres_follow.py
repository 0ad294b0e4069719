"""Keyword postings and vectors held in the daemon for a PostgreSQL namespace (memoryd.store.postgres.postings,
followed): a reader ranks what the writer changed, as the server would, through writes, removals, a reindex and
a pruned change log; a namespace an older memoryd made is upgraded to keep the log."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from psycopg import sql

from memoryd.config import quickstart_agent
from memoryd.embeddings.hashing import HashingEmbedder
from memoryd.memory import AgentMemory
from memoryd.settings import PostgresStore
from memoryd.store.postgres import schema
from tests.conftest import write
from tests.daemon import eventually
from tests.pg import Cluster
from tests.test_postgres import QUERIES as PG_QUERIES
from tests.test_postgres import _notes
from tests.test_postgres import cluster as cluster  # the module's PostgreSQL, as test_postgres makes it

pytestmark = pytest.mark.slow  # against a real PostgreSQL server

QUERIES = [*PG_QUERIES, "quokka enclosure"]


def _memory(workspace: Path, data: Path, url: str, namespace: str, readers: tuple[str, ...] = ()) -> AgentMemory:
    agent = replace(quickstart_agent(workspace, data), postgres=PostgresStore(url, namespace, readers=readers))
    return AgentMemory(agent, HashingEmbedder(256))


def _held(memory: AgentMemory) -> bool:
    """Both postings and vectors are held in the daemon (a search starts loading them)."""
    memory.search("cache", mode="hybrid")
    return memory.store.postings.ready and memory.vectors._matrix is not None  # type: ignore[attr-defined]


def _ranked(memory: AgentMemory, query: str, mode: str) -> list[tuple[str, float]]:
    return [(r.citation, round(r.score, 6)) for r in memory.search(query, mode=mode, max_results=8).results]


def _in_sql(memory: AgentMemory, monkeypatch: pytest.MonkeyPatch, query: str) -> list[tuple[str, float]]:
    """The keyword ranking as the server computes it (BM25 in SQL), for the same query."""
    with monkeypatch.context() as patched:
        patched.setattr(memory.store.postings, "rank", lambda *args, **kwargs: None)
        return _ranked(memory, query, "keyword")


def _counts_as_the_server(memory: AgentMemory) -> None:
    """The postings hold the store's live chunks, and each token in as many as the vocabulary table says."""
    held = memory.store.postings.catch_up()
    assert held is not None
    assert held.chunks.count == memory.store.row_counts()["chunks"]
    with memory.store.reading() as cur:
        cur.execute(sql.SQL("SELECT term, doc FROM {}.vocab").format(memory.store._s))
        vocabulary = dict(cur.fetchall())
    assert {t: held.frequency(t) for t in vocabulary} == vocabulary


def _ranks_as_the_server(memory: AgentMemory, monkeypatch: pytest.MonkeyPatch) -> int:
    """Every query ranks the same (citations and scores) in the daemon as in SQL; how many found anything."""
    if memory.store.postings.ready:
        _counts_as_the_server(memory)
    found = 0
    for query in QUERIES:
        here = _ranked(memory, query, "keyword")
        assert here == _in_sql(memory, monkeypatch, query), query
        found += bool(here)
    return found


def _vectors_as_the_store(memory: AgentMemory) -> bool:
    """The matrix in the daemon holds exactly the chunks the store has vectors for (none removed left in it)."""
    matrix = memory.vectors._matrix  # type: ignore[attr-defined]
    return matrix is not None and len(matrix) == memory.store.row_counts()["embedded_chunks"]


def _cites(memory: AgentMemory, query: str, mode: str, path: str) -> bool:
    return any(r.citation.startswith(path) for r in memory.search(query, mode=mode, max_results=8).results)


@contextlib.contextmanager
def _writer_and_reader(
    cluster: Cluster, tmp_path: Path, namespace: str
) -> Iterator[tuple[Path, AgentMemory, AgentMemory]]:
    """A writer A that has synced its notes, and a standby B (a copy of the notes) holding postings and vectors."""
    ws_a, ws_b = _notes(tmp_path / "a" / "ws"), tmp_path / "b" / "ws"
    shutil.copytree(ws_a, ws_b)
    with _memory(ws_a, tmp_path / "a" / "data", cluster.url(), namespace) as a:
        a.sync()
        with _memory(ws_b, tmp_path / "b" / "data", cluster.url(), namespace) as b:
            assert b.role == "standby"
            eventually(lambda: _held(b), timeout=20)
            yield ws_a, a, b


def test_a_reader_ranks_in_the_daemon_what_the_writer_changed(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _writer_and_reader(cluster, tmp_path, "follow") as (ws_a, a, b):
        assert _ranks_as_the_server(b, monkeypatch) >= 9

        postings, matrix = b.store.postings._held, b.vectors._matrix  # type: ignore[attr-defined]
        write(ws_a / "memory" / "zoo.md", "# Zoo\n\nThe quokka enclosure moved next to the night deploys.\n")
        a.sync()
        eventually(lambda: _cites(b, "quokka enclosure", "keyword", "memory/zoo.md"), timeout=5)
        eventually(lambda: _cites(b, "quokka enclosure", "vector", "memory/zoo.md"), timeout=5)
        assert _vectors_as_the_store(b)
        assert b.store.postings._held is postings and b.vectors._matrix is matrix  # followed, not read again
        assert _ranks_as_the_server(b, monkeypatch) >= 10

        (ws_a / "memory" / "ops.md").unlink()
        a.sync()
        eventually(lambda: not _cites(b, "valkey outage", "keyword", "memory/ops.md"), timeout=5)
        assert not _cites(b, "deploy agent moved the cache to Valkey", "vector", "memory/ops.md")
        assert _vectors_as_the_store(b)
        assert _ranks_as_the_server(b, monkeypatch) >= 9

        a.reindex()  # a new index generation: B reads its postings and vectors anew
        eventually(lambda: _held(b) and _cites(b, "quokka enclosure", "keyword", "memory/zoo.md"), timeout=20)
        assert _cites(b, "quokka enclosure", "vector", "memory/zoo.md")
        assert _ranks_as_the_server(b, monkeypatch) >= 9


def test_a_reader_behind_a_pruned_log_reads_everything_again(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memoryd.store.postgres.files.CHANGES_KEPT", 2)
    with _writer_and_reader(cluster, tmp_path, "pruned") as (ws_a, a, b):
        position = b.store.postings._held.at  # type: ignore[union-attr]
        for i in range(4):
            write(ws_a / "memory" / f"n{i}.md", f"# N{i}\n\nThe okapi{i} census counted {i} okapis.\n")
            a.sync()
        floor = int(cluster.sql("SELECT value FROM memoryd_pruned.meta WHERE key = 'changes_pruned_below'")[0][0])
        assert floor > position.seq  # rows B had not read are gone
        # okapi0's rows in the log were pruned: found only because B read everything again
        eventually(lambda: _held(b) and _cites(b, "okapi0 census", "keyword", "memory/n0.md"), timeout=20)
        assert _cites(b, "okapi0 census", "vector", "memory/n0.md") and _vectors_as_the_store(b)
        assert _ranks_as_the_server(b, monkeypatch) >= 9


def test_a_namespace_an_older_memoryd_made_is_upgraded_to_keep_the_log(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version 1 had no change log: daemons rank in SQL until its next writer adds one (and marks the schema
    version 2, which a memoryd of version 1 does not write); then they hold the postings."""
    url = cluster.url()
    reader_url = cluster.role("oldreader")
    ws = _notes(tmp_path / "ws")
    with _memory(ws, tmp_path / "a", url, "old", readers=("oldreader",)) as a:
        a.sync()
        cluster.sql("DROP TABLE memoryd_old.changes")
        cluster.sql("DELETE FROM memoryd_old.meta WHERE key = 'index_generation'")
        cluster.sql("UPDATE memoryd_old.meta SET value = '1' WHERE key = 'schema_version'")
        with _memory(ws, tmp_path / "b", url, "old") as b:
            assert b.role == "standby"
            for memory in (a, b):  # the log is gone under a daemon that held the postings, or never was
                memory.search("cache", mode="hybrid")
                assert memory.search("payment_processor", mode="keyword").results
                assert not memory.store.postings.ready
                assert _ranks_as_the_server(memory, monkeypatch) >= 9
    with _memory(ws, tmp_path / "c", url, "old", readers=("oldreader",)) as c:
        assert c.role == "writer"  # took the lead, and upgraded the tables
        version = cluster.sql("SELECT value FROM memoryd_old.meta WHERE key = 'schema_version'")
        assert version == [(str(schema.SCHEMA_VERSION),)]
        eventually(lambda: _held(c), timeout=20)
        assert _ranks_as_the_server(c, monkeypatch) >= 9
        with _memory(ws, tmp_path / "r", reader_url, "old") as reader:  # granted the new log too
            assert reader.role == "reader"
            eventually(lambda: _held(reader), timeout=20)
            assert _ranks_as_the_server(reader, monkeypatch) >= 9
