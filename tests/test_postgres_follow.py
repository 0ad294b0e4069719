"""Keyword postings and vectors held in the daemon for a PostgreSQL namespace (memoryd.store.postgres.postings,
followed): a reader ranks what the writer changed, as the server would, through writes, removals, a reindex and
a pruned change log; a namespace an older memoryd made is upgraded to keep the log."""

from __future__ import annotations

import shutil
import tempfile
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

pytestmark = pytest.mark.slow  # against a real PostgreSQL server

NOTES = {
    "MEMORY.md": "# Decisions\n\nWe chose payment_processor v2 for billing; getUserById stays.\n\n"
    "## Auth\n\nAuth uses OAuth2 with PKCE tokens, decided in March.\n",
    "memory/vi.md": "# Thanh toán\n\nHệ thống thanh toán đã chuyển sang máy chủ mới ở Hà Nội.\n",
    "memory/zh.md": "# 服务器\n\n我们决定使用北京的服务器来处理支付。\n\n## 缓存\n\n缓存层改用了 Redis。\n",
    "memory/th.md": "# การตัดสินใจ\n\nเราตัดสินใจย้ายฐานข้อมูลไปที่กรุงเทพ\n",
    "memory/ops.md": "# Cache\n\nThe deploy agent moved the cache to Valkey after the Redis outage.\n\n"
    "## Deploys\n\nDeploys run at night from CI runners; src/memory/hybrid.ts was rewritten.\n",
}
QUERIES = [
    "payment_processor",
    "getUserById",
    "what did we decide about auth",
    "thanh toán Hà Nội",
    "北京服务器",
    "缓存",
    "กรุงเทพ",
    "redis cache outage",
    "src/memory/hybrid.ts",
    "deploys at night",
    "quokka enclosure",
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    pg = Cluster(root)
    yield pg
    pg.close()
    shutil.rmtree(root, ignore_errors=True)


def _memory(workspace: Path, data: Path, url: str, namespace: str) -> AgentMemory:
    agent = replace(quickstart_agent(workspace, data), postgres=PostgresStore(url, namespace))
    return AgentMemory(agent, HashingEmbedder(256))


def _notes(workspace: Path) -> Path:
    for name, text in NOTES.items():
        write(workspace / name, text)
    return workspace


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


def test_a_reader_ranks_in_the_daemon_what_the_writer_changed(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = cluster.url()
    ws_a, ws_b = _notes(tmp_path / "a" / "ws"), tmp_path / "b" / "ws"
    shutil.copytree(ws_a, ws_b)
    with _memory(ws_a, tmp_path / "a" / "data", url, "follow") as a:
        a.sync()
        with _memory(ws_b, tmp_path / "b" / "data", url, "follow") as b:
            assert b.role == "standby"
            eventually(lambda: _held(b), timeout=20)
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
    url = cluster.url()
    ws_a, ws_b = _notes(tmp_path / "a" / "ws"), tmp_path / "b" / "ws"
    shutil.copytree(ws_a, ws_b)
    with _memory(ws_a, tmp_path / "a" / "data", url, "pruned") as a:
        a.sync()
        with _memory(ws_b, tmp_path / "b" / "data", url, "pruned") as b:
            eventually(lambda: _held(b), timeout=20)
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
    ws = _notes(tmp_path / "ws")
    with _memory(ws, tmp_path / "a", url, "old") as a:
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
    with _memory(ws, tmp_path / "c", url, "old") as c:
        assert c.role == "writer"  # took the lead, and upgraded the tables
        version = cluster.sql("SELECT value FROM memoryd_old.meta WHERE key = 'schema_version'")
        assert version == [(str(schema.SCHEMA_VERSION),)]
        eventually(lambda: _held(c), timeout=20)
        assert _ranks_as_the_server(c, monkeypatch) >= 9
