"""The PostgreSQL store against a real PostgreSQL 16 with pgvector (the pgserver wheel), a streaming replica made
with pg_basebackup, real roles, and real daemons sharing one namespace."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memoryd.config import load_config, quickstart_agent
from memoryd.embeddings.hashing import HashingEmbedder
from memoryd.memory import AgentMemory
from memoryd.search.hybrid import QUERY_VECTOR_THREADS
from memoryd.settings import PostgresStore
from memoryd.store.sqlite import Store as SQLiteStore
from memoryd_client.stub import RemoteError
from tests.conftest import write
from tests.daemon import Daemon, cleanup, eventually, start
from tests.pg import Cluster
from tests.test_currency import BACKGROUND, FILLER, KINDS, UNSEEN_CHANGE

pytestmark = pytest.mark.slow  # every test here runs against a real PostgreSQL server

NOTES = {
    "MEMORY.md": "# Decisions\n\nWe chose payment_processor v2 for billing; getUserById stays.\n\n"
    "## Auth\n\nAuth uses OAuth2 with PKCE tokens, decided in March.\n",
    "memory/vi.md": "# Thanh toán\n\nHệ thống thanh toán đã chuyển sang máy chủ mới ở Hà Nội.\n",
    "memory/zh.md": "# 服务器\n\n我们决定使用北京的服务器来处理支付。\n\n## 缓存\n\n缓存层改用了 Redis。\n",
    "memory/th.md": "# การตัดสินใจ\n\nเราตัดสินใจย้ายฐานข้อมูลไปที่กรุงเทพ\n",
    "memory/ops.md": "# Cache\n\nThe deploy agent moved the cache to Valkey after the Redis outage.\n\n"
    "## Deploys\n\nDeploys run at night from CI runners; src/memory/hybrid.ts was rewritten.\n",
}
MEMORYD = str(Path(sys.executable).with_name("memoryd"))
QUERIES = [
    "payment_processor",
    "getUserById",
    "what did we decide about auth",
    "thanh toan",
    "thanh toán Hà Nội",
    "北京服务器",
    "缓存",
    "กรุงเทพ",
    "redis cache outage",
    "src/memory/hybrid.ts",
    "deploys at night",
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    pg = Cluster(root)
    yield pg
    pg.close()
    shutil.rmtree(root, ignore_errors=True)


def _with_password(url: str) -> str:
    """The sockets trust local users, so a password is accepted and ignored: enough to see it never shown."""
    return url.replace("postgres@", "postgres:hunter2@")


def _notes(workspace: Path) -> Path:
    for name, text in NOTES.items():
        write(workspace / name, text)
    return workspace


def _memory(workspace: Path, data: Path, store: PostgresStore | None) -> AgentMemory:
    agent = replace(quickstart_agent(workspace, data), postgres=store)
    return AgentMemory(agent, HashingEmbedder(256))


@contextlib.contextmanager
def _side_by_side(
    workspace: Path, tmp_path: Path, url: str, namespace: str
) -> Iterator[tuple[AgentMemory, AgentMemory]]:
    """The same notes indexed in SQLite and in a PostgreSQL namespace."""
    with (
        _memory(workspace, tmp_path / "a", None) as embedded,
        _memory(workspace, tmp_path / "b", PostgresStore(url, namespace)) as shared,
    ):
        embedded.sync()
        shared.sync()
        yield embedded, shared


def _found(memory: AgentMemory, query: str, mode: str) -> list[tuple[str, float]]:
    return [(r.citation, round(r.score, 4)) for r in memory.search(query, mode=mode, max_results=5).results]


def test_postgres_ranks_as_sqlite(cluster: Cluster, tmp_path: Path) -> None:
    """Same chunks, same BM25 (keyword: citations and scores), same hybrid top results, in four languages."""
    workspace = _notes(tmp_path / "ws")
    sentences = [
        f"Runbook step {i}: the {w} service restarts after the {w} health check fails."
        for i, w in enumerate(["billing", "search", "auth", "payments", "cache", "gateway", "mailer", "scheduler"])
    ]
    write(workspace / "memory" / "runbook.md", "# Runbook\n\n" + "\n\n".join(sentences) + "\n")
    with _side_by_side(workspace, tmp_path, _with_password(cluster.url()), "ranks") as (embedded, shared):
        assert shared.store.counts()["chunks"] == embedded.store.counts()["chunks"] > 5
        windows = []
        for memory in (embedded, shared):
            rows = memory.store.chunks_by_ids(sorted(memory.store.chunk_ids(_everything())))
            held = memory.store.window_vectors(list(rows))
            windows.append({(rows[i].path, rows[i].start_line): held[i] for i in rows})
        assert windows[0].keys() == windows[1].keys()
        assert all(np.array_equal(windows[0][k], windows[1][k]) for k in windows[0])
        assert max(len(w) for w in windows[1].values()) >= 3  # the runbook's windows, through PostgreSQL
        for query in QUERIES:
            keyword = _found(shared, query, "keyword")
            assert keyword, query
            assert keyword == _found(embedded, query, "keyword"), query
            assert _found(shared, query, "hybrid")[0][0] == _found(embedded, query, "hybrid")[0][0], query
        status = shared.status()
        assert status["store_kind"] == "postgresql" and status["role"] == "writer"
        assert "hunter2" not in repr(status) and "hunter2" not in repr(shared.agent.postgres and shared.store.path)


def test_a_change_known_by_its_values_kind_ranks_first_on_postgres_as_on_sqlite(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A clause that names no search engine is billing's new one because the notes call Meilisearch one
    (test_currency's year): the names' notes are read through the store, PostgreSQL as SQLite."""
    workspace = tmp_path / "ws"
    days = {
        **BACKGROUND,
        **KINDS,
        "2025-01-10": f"- billing: we use Elasticsearch as the search engine.\n{FILLER}",
        "2025-06-02": f"{FILLER}- As of today, billing indexes its documents in Meilisearch.\n",
    }
    for day, entries in days.items():
        write(workspace / "memory" / f"{day}.md", f"# {day}\n\n{entries}")
    with _side_by_side(workspace, tmp_path, cluster.url(), "kinds") as (embedded, shared):
        for memory in (embedded, shared):
            found = memory.search("Which search engine does billing use?", mode="keyword", max_results=10).results
            order = [r.path for r in found]
            assert order.index("memory/2025-06-02.md") < order.index("memory/2025-01-10.md"), order


def test_a_change_the_search_did_not_find_is_followed_up_on_postgres_as_on_sqlite(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The follow-up (search.followup) asks the store for the chunks holding a word of the subject and one of several
    names: PostgreSQL answers it as SQLite does (test_currency's year)."""
    workspace = tmp_path / "ws"
    for day, entries in {**BACKGROUND, **UNSEEN_CHANGE}.items():
        write(workspace / "memory" / f"{day}.md", f"# {day}\n\n{entries}")
    with _side_by_side(workspace, tmp_path, cluster.url(), "followed") as (embedded, shared):
        for memory in (embedded, shared):
            found = memory.search("Which search engine does billing use?", mode="keyword").results
            assert found[0].path == "memory/2025-06-02.md", [r.path for r in found]
            earlier = memory.search("Which search engine does billing use?", mode="keyword", before="2025-06-01")
            assert "memory/2025-06-02.md" not in [r.path for r in earlier.results]  # ranked in SQL, filtered there


def _layout(cluster: Cluster, namespace: str) -> tuple[str, str, list[str]]:
    """The chunks table's storage of `tf` and `windows`, and its options."""
    return cluster.sql(
        "SELECT (SELECT attstorage FROM pg_attribute WHERE attrelid = c.oid AND attname = 'tf'),"
        " (SELECT attstorage FROM pg_attribute WHERE attrelid = c.oid AND attname = 'windows'), c.reloptions"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND c.relname = 'chunks'",
        (f"memoryd_{namespace}",),
    )[0]


def test_keyword_counts_are_stored_uncompressed(cluster: Cluster, tmp_path: Path) -> None:
    """BM25 reads a row's counts once per query token: they stay uncompressed in rows well past the 2 kB at
    which PostgreSQL would compress them."""
    workspace = tmp_path / "ws"
    words = " ".join(f"term{i} token_{i * 7}" for i in range(160))
    write(workspace / "memory" / "long.md", f"# Long note\n\n{words}\n")
    with _memory(workspace, tmp_path / "d", PostgresStore(cluster.url(), "layout")) as memory:
        memory.sync()
        assert memory.search("term42", mode="keyword").results
    rows = cluster.sql(
        "SELECT pg_column_size(tf) + pg_column_size(tsv) + pg_column_size(text) + pg_column_size(embedding),"
        ' pg_column_compression(tf) FROM "memoryd_layout".chunks'
    )
    assert min(size for size, _ in rows) > 2048
    assert [compression for _, compression in rows] == [None] * len(rows)
    assert _layout(cluster, "layout") == ("m", "e", ["toast_tuple_target=8160"])


def test_a_namespace_from_an_older_memoryd_is_read_and_upgraded(cluster: Cluster, tmp_path: Path) -> None:
    """A namespace made before window vectors is read as it is (no windows), and its writer adds the column and
    the rows' layout on taking the lead; the reindex its new chunking signature asks for then fills it."""
    workspace = _notes(tmp_path / "ws")
    with _memory(workspace, tmp_path / "old", PostgresStore(cluster.url(), "older")) as memory:
        memory.sync()
        before = {query: _found(memory, query, "keyword") for query in QUERIES}
    cluster.sql('ALTER TABLE "memoryd_older".chunks DROP COLUMN windows')
    cluster.sql('ALTER TABLE "memoryd_older".chunks RESET (toast_tuple_target), ALTER COLUMN tf SET STORAGE EXTENDED')
    cluster.sql(  # counts as an older memoryd wrote them: an array of four a token
        'UPDATE "memoryd_older".chunks SET tf = (SELECT jsonb_object_agg(key, jsonb_build_array('
        " value::bigint & 65535, value::bigint >> 16 & 65535, value::bigint >> 32 & 65535, value::bigint >> 48))"
        " FROM jsonb_each(tf))"
    )
    assert cluster.sql('SELECT DISTINCT jsonb_typeof(value) FROM "memoryd_older".chunks, jsonb_each(tf)') == [
        ("array",)
    ]
    from memoryd.store.postgres import Store

    reader = Store(cluster.url(), "older")  # not the writer: it reads the namespace as it finds it
    try:
        assert reader.window_vectors(sorted(reader.chunk_ids(_everything()))) == {}
    finally:
        reader.close()
    with _memory(workspace, tmp_path / "new", PostgresStore(cluster.url(), "older")) as memory:
        assert memory.role == "writer"
        ids = sorted(memory.store.chunk_ids(_everything()))
        assert memory.store.window_vectors(ids) == {}  # the column is back, empty until the chunks are rewritten
        assert _layout(cluster, "older") == ("m", "e", ["toast_tuple_target=8160"])
        assert {query: _found(memory, query, "keyword") for query in QUERIES} == before  # arrays read as written
        assert memory.search("redis cache", mode="hybrid").results  # searches meanwhile
        memory.reindex()
        ids = sorted(memory.store.chunk_ids(_everything()))
        assert len(memory.store.window_vectors(ids)) == len(ids)


def _vector_index(cluster: Cluster, namespace: str) -> tuple[list[str], list[tuple]]:
    """The namespace's HNSW index (its name, if built) and whether it is still to be built."""
    schema = f"memoryd_{namespace}"
    built = cluster.sql(
        "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND indexdef LIKE '%%USING hnsw%%'", (schema,)
    )
    pending = cluster.sql(f"SELECT value FROM \"{schema}\".meta WHERE key = 'vector_index_pending'")
    return [name for (name,) in built], pending


def test_hnsw_finds_the_exact_top_ten(cluster: Cluster, tmp_path: Path) -> None:
    """The HNSW index, built once the first sync's vectors are in, finds the exact top ten."""
    workspace = tmp_path / "ws"
    for i in range(300):
        write(workspace / "memory" / f"n{i}.md", f"# Note {i}\n\nTopic {i % 17} item {i} detail {i * 7 % 101}.\n")
    with _memory(workspace, tmp_path / "d", PostgresStore(cluster.url(), "hnsw")) as memory:
        memory.sync()
        assert _vector_index(cluster, "hnsw") == (["chunks_embedding"], [])
        store = memory.store
        overlap = []
        for i in range(0, 300, 15):
            query = memory.embedder.embed_query(f"topic {i % 17} detail {i}").reshape(-1)
            approximate = store.nearest(query, 10)
            exact = store.exact_nearest(query, 10)
            tenth = exact[-1][1] - 1e-6  # the hashing embedder scores many notes alike: ties count as found
            overlap.append(sum(1 for _, similarity in approximate if similarity >= tenth) / 10)
        assert sum(overlap) / len(overlap) >= 0.95


def test_a_vector_index_left_unbuilt_is_built_by_the_next_sync(cluster: Cluster, tmp_path: Path) -> None:
    """A writer that died between the first vectors and the end of their sync left no index: searches rank by an
    exact scan meanwhile, and the next writer's sync builds it. (Scores to within the daemon's int8 matrix, which
    answers once loaded, and the server's exact cosine, which answers until then.)"""
    workspace = _notes(tmp_path / "ws")

    def same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> bool:
        return [c for c, _ in found] == [c for c, _ in expected] and all(
            abs(a[1] - b[1]) < 0.005 for a, b in zip(found, expected, strict=True)
        )

    with _memory(workspace, tmp_path / "a", PostgresStore(cluster.url(), "unbuilt")) as memory:
        memory.sync()
        expected = _found(memory, "redis cache outage", "hybrid")
    cluster.sql('DROP INDEX "memoryd_unbuilt".chunks_embedding')
    cluster.sql("""INSERT INTO "memoryd_unbuilt".meta VALUES ('vector_index_pending', '1')""")
    with _memory(workspace, tmp_path / "b", PostgresStore(cluster.url(), "unbuilt")) as memory:
        assert same(_found(memory, "redis cache outage", "hybrid"), expected)  # no index: the same by a scan
        memory.sync()
        assert _vector_index(cluster, "unbuilt") == (["chunks_embedding"], [])
        assert same(_found(memory, "redis cache outage", "hybrid"), expected)


def test_delete_and_replace_keep_counts_and_vocabulary(cluster: Cluster, tmp_path: Path) -> None:
    """After deletions and rewrites, the vocabulary's document counts are FTS5's and the totals the rows'."""
    from memoryd.sources.analyzer import query_terms

    tokens = [t for term in query_terms("valkey redis cache deploys thanh toán 服务器") for t in term.phrase]
    workspace = _notes(tmp_path / "ws")
    with (
        _memory(workspace, tmp_path / "a", None) as embedded,
        _memory(workspace, tmp_path / "b", PostgresStore(cluster.url(), "counts")) as shared,
    ):
        for step in range(3):
            embedded.sync()
            shared.sync()
            expected = embedded.store.document_frequencies(tokens)
            assert shared.store.document_frequencies(tokens) == expected and any(expected.values()), step
            with shared.store.reading() as cur:  # the vocabulary table (the postings in the daemon may answer above)
                cur.execute('SELECT term, doc FROM "memoryd_counts".vocab WHERE term = ANY(%s)', (tokens,))
                vocabulary = dict(cur.fetchall())
            assert {t: vocabulary.get(t, 0) for t in tokens} == expected, step
            counts = shared.store.counts()
            assert counts["chunks"] == len(shared.store.chunk_ids(_everything())) == embedded.store.counts()["chunks"]
            assert counts["files"] == embedded.store.counts()["files"]
            if step == 0:
                (workspace / "memory" / "ops.md").unlink()
            else:
                write(workspace / "memory" / "zh.md", "# 服务器\n\n服务器搬到了上海。\n\n## Cache\n\nRedis again.\n")
        assert not _found(shared, "valkey", "keyword")


def test_a_purge_takes_the_texts_vectors_out_of_the_namespaces_cache(cluster: Cluster, tmp_path: Path) -> None:
    """A purge on PostgreSQL leaves the embedding cache no vector of the chunks that held the purged line, as on
    SQLite; the other notes' vectors stay."""
    workspace = _notes(tmp_path / "ws")
    write(workspace / "memory" / "zoo.md", "- the 5521 ocelot purrs loudly at the zoo\n- the 7733 lynx sleeps\n")
    with _memory(workspace, tmp_path / "b", PostgresStore(cluster.url(), "purged")) as shared:
        shared.sync()
        store, embedder = shared.store, shared.embedder
        assert embedder is not None
        ids = sorted(store.chunk_ids(_everything()))
        rows = store.chunks_by_ids(ids).values()
        zoo = [row.hash for row in rows if row.path == "memory/zoo.md"]
        others = [row.hash for row in rows if row.path != "memory/zoo.md"]
        key = (embedder.provider, embedder.model, embedder.key_fingerprint)
        assert store.cache_get(*key, zoo) and store.cache_get(*key, others)
        shared.edits.forget("memory/zoo.md#L1", purge=True)
        assert not store.cache_get(*key, zoo)
        assert len(store.cache_get(*key, others)) == len(set(others))
        assert not _found(shared, "ocelot", "keyword") and _found(shared, "lynx", "keyword")


def _everything():  # type: ignore[no-untyped-def]
    from memoryd.search.filters import Filters

    return Filters.parse(None, None, None, None, None)


def test_reindex_swaps_in_one_step_and_leftovers_go(cluster: Cluster, tmp_path: Path) -> None:
    workspace = _notes(tmp_path / "ws")
    store = PostgresStore(cluster.url(), "reindex")
    with _memory(workspace, tmp_path / "d", store) as memory:
        memory.sync()
        old_ids = memory.store.chunk_ids(_everything())
        report = memory.reindex()
        assert report.files_indexed == len(NOTES)
        new_ids = memory.store.chunk_ids(_everything())
        assert len(new_ids) == len(old_ids) and not new_ids & old_ids  # a straddling search finds nothing wrong
        assert _found(memory, "valkey", "keyword")
        # what a reindex killed mid-way leaves: its staging schema
        from memoryd.store.postgres import Store

        Store(cluster.url(), "reindex__staging_4242").close()
        assert memory.store.leftovers() == ["memoryd_reindex__staging_4242"]
    with _memory(workspace, tmp_path / "d", store) as memory:
        assert memory.role == "writer"
        assert memory.store.leftovers() == []
        assert _found(memory, "valkey", "keyword")


def _agent_table(agent_id: str, workspace: Path, url: str, namespace: str, extra: str = "") -> str:
    return (
        f'[[agents]]\nid = "{agent_id}"\nworkspace = "{workspace}"\nstore = "{url}"\nnamespace = "{namespace}"\n'
        f'{extra}[agents.embedding]\nprovider = "hash"\n'
    )


def _daemon(tmp: Path, workspace: Path, table: str) -> Daemon:
    tmp.mkdir(parents=True, exist_ok=True)
    return start(tmp, workspace, extra=table, agent=False)


def _hits(daemon: Daemon, query: str) -> list[str]:
    with daemon.client(timeout=30) as client:
        return [hit.citation for hit in client.search(query, mode="keyword")]


def _role(daemon: Daemon) -> str:
    return daemon.status()["role"]


def test_two_daemons_share_one_namespace(cluster: Cluster, tmp_path: Path) -> None:
    """A writes, B stands by: B finds what A wrote within 2 s, never what A deleted; A killed, B takes over."""
    url = cluster.role("hostwriter", create_schemas=True)
    ws_a = _notes(tmp_path / "a" / "ws")
    ws_b = tmp_path / "b" / "ws"
    shutil.copytree(ws_a, ws_b)
    a = _daemon(tmp_path / "a", ws_a, _agent_table("team", ws_a, url, "team"))
    b = None
    try:
        assert _role(a) == "writer"
        b = _daemon(tmp_path / "b", ws_b, _agent_table("team", ws_b, url, "team"))
        assert _role(b) == "standby"
        holder = b.status()["writer"]  # who writes, as the standby's status (and web page) shows it
        assert holder["pid"] and holder["role"] == "hostwriter" and holder["this_daemon"] is False
        assert holder["application"] == "memoryd:team" and a.status()["writer"]["this_daemon"] is True
        with a.client() as client:
            written = client.write("The night agent pinned libfoo to 2.3 after the flaky build.")
        assert written["indexed"]
        started = time.monotonic()
        eventually(lambda: written["citation"] in _hits(b, "libfoo"), timeout=10)
        assert time.monotonic() - started < 2.0
        (ws_a / "memory" / "ops.md").unlink()
        eventually(lambda: not _hits(b, "valkey"), timeout=10)
        os.kill(a.proc.pid, signal.SIGKILL)
        a.proc.wait()
        eventually(lambda: _role(b) == "writer", timeout=10)
        write(ws_b / "memory" / "after.md", "# After\n\nThe standby took over and indexed quokka notes.\n")
        eventually(lambda: _hits(b, "quokka"), timeout=10)
    finally:
        cleanup(a)
        if b is not None:
            cleanup(b)


def test_a_forget_holds_on_every_daemon_of_the_namespace(cluster: Cluster, tmp_path: Path) -> None:
    """A forgets a line: B's searches lose it within 2 s, and when B, whose copy of the notes still holds it, takes
    over and indexes its own copy, it stays out (the forget record travels in the store)."""
    url = cluster.role("forgetter", create_schemas=True)
    ws_a = _notes(tmp_path / "a" / "ws")
    write(ws_a / "memory" / "keys.md", "# Keys\n\n- the staging deploy key lives in vault path secret/old-quokka\n")
    ws_b = tmp_path / "b" / "ws"
    shutil.copytree(ws_a, ws_b)
    a = _daemon(tmp_path / "a", ws_a, _agent_table("keys", ws_a, url, "keys"))
    b = None
    try:
        b = _daemon(tmp_path / "b", ws_b, _agent_table("keys", ws_b, url, "keys"))
        assert _role(a) == "writer" and _role(b) == "standby"
        eventually(lambda: _hits(b, "quokka vault"), timeout=10)
        with a.client() as client:
            done = client.forget("memory/keys.md#L3-L3")
        assert done["forgotten"] == "memory/keys.md#L3-L3" and done["indexed"]
        started = time.monotonic()
        eventually(lambda: not _hits(b, "quokka vault"), timeout=10)
        assert time.monotonic() - started < 2.0
        assert "old-quokka" in (ws_b / "memory" / "keys.md").read_text()  # B's copy has not caught up
        os.kill(a.proc.pid, signal.SIGKILL)
        a.proc.wait()
        eventually(lambda: _role(b) == "writer", timeout=10)
        with b.client() as client:
            client.sync(force=True)
            assert not _hits(b, "quokka vault")
            assert "old-quokka" not in client.get("memory/keys.md")["text"]
    finally:
        cleanup(a)
        if b is not None:
            cleanup(b)


def test_roles_read_only_what_they_were_granted(cluster: Cluster, tmp_path: Path) -> None:
    owner = cluster.role("owner", create_schemas=True)
    bob, eve = cluster.role("bob"), cluster.role("eve")
    ws = _notes(tmp_path / "o" / "ws")
    writer = _daemon(tmp_path / "o", ws, _agent_table("secret", ws, owner, "secret", 'readers = ["bob"]\n'))
    reader = outsider = None
    try:
        reader = _daemon(tmp_path / "r", ws, _agent_table("secret", ws, bob, "secret"))
        outsider = _daemon(tmp_path / "e", ws, _agent_table("secret", ws, eve, "secret"))
        assert _hits(reader, "valkey") and _role(reader) == "reader"
        with outsider.client() as client, pytest.raises(RemoteError) as refused:
            client.search("valkey")
        assert refused.value.code == "forbidden"
        assert cluster.sql("SELECT has_schema_privilege('eve', 'memoryd_secret', 'USAGE')") == [(False,)]
        assert _role(writer) == "writer"  # the readers never took the writer's lock
        with reader.client() as client:
            written = client.write("Bob noted the lemur rollout.")
        assert written["indexed"] is False and "only reads the shared store" in written["index_error"], written
        assert "lemur" in (ws / written["path"]).read_text()
    finally:
        for daemon in (writer, reader, outsider):
            if daemon is not None:
                cleanup(daemon)


def test_a_statement_past_the_timeout_is_a_busy_store_not_a_bug(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that waits on the server past the statement timeout (here a table lock another session holds)
    answers `store_busy`, not `internal_error`; once the server answers again, so do searches, on the same
    connections."""
    import psycopg

    from memoryd.daemon.methods import _store_error
    from memoryd.store.interface import StoreBusy
    from memoryd.store.postgres import connections

    monkeypatch.setattr(connections, "STATEMENT_TIMEOUT_MS", 300)
    with _memory(_notes(tmp_path / "ws"), tmp_path / "d", PostgresStore(cluster.url(), "busy")) as memory:
        memory.sync()
        expected = _found(memory, "redis cache outage", "keyword")
        with psycopg.connect(cluster.url()) as locker:
            locker.execute('LOCK TABLE "memoryd_busy".chunks IN ACCESS EXCLUSIVE MODE')
            memory.store._invalidate()  # as after a commit: the rows this daemon read are read again
            with pytest.raises(StoreBusy) as busy:
                memory.search("redis cache outage", mode="keyword")
            locker.rollback()
        error = _store_error(busy.value)
        assert error.code == "store_busy" and "statement_timeout" in error.message
        assert _found(memory, "redis cache outage", "keyword") == expected


def test_server_down_then_back_loses_nothing(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    pg = Cluster(root)
    ws = _notes(tmp_path / "ws")
    daemon = _daemon(tmp_path, ws, _agent_table("main", ws, pg.url(), "down"))
    try:
        assert _hits(daemon, "valkey")
        pg.stop()
        began = time.monotonic()
        with daemon.client() as client, pytest.raises(RemoteError) as down:
            client.search("valkey")
        assert down.value.code == "store_unavailable" and time.monotonic() - began < 10
        with daemon.client() as client:
            written = client.write("While the server was away we chose the capybara rollout.")
        assert not written["indexed"] and "capybara" in (ws / written["path"]).read_text()
        status = daemon.status()
        assert status["store_health"]["ok"] is False
        pg.start()
        eventually(lambda: _hits(daemon, "capybara"), timeout=20)  # the first search after the restart answers
        assert daemon.status()["store_health"]["ok"] is True
        daemon.check_running()
    finally:
        cleanup(daemon)
        pg.close()
        shutil.rmtree(root, ignore_errors=True)


def test_searches_read_the_replica(cluster: Cluster, tmp_path: Path) -> None:
    replica = cluster.add_replica()
    ws = _notes(tmp_path / "ws")
    table = _agent_table("main", ws, cluster.url(), "replicated", f'read_url = "{replica}"\n')
    daemon = _daemon(tmp_path, ws, table)
    try:
        with daemon.client() as client:
            written = client.write("The replica should show the wombat decision.")
        eventually(lambda: written["citation"] in _hits(daemon, "wombat"), timeout=10)
        status = daemon.status()
        assert status["read_from"] == f"postgresql://postgres@/postgres?host={cluster.replica_socket}"
        assert status["replica_lag_s"] is not None
        served = cluster.sql(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'memoryd:replicated'", replica=True
        )
        assert served[0][0] >= 1
    finally:
        cleanup(daemon)


def test_searches_open_no_connection_of_their_own(cluster: Cluster, tmp_path: Path) -> None:
    """Reads borrow pooled connections, and a search's vector side runs on threads kept between
    searches: 40 hybrid searches open at most one server session per such thread (a thread started for each
    search made the server start a backend for each)."""

    def sessions() -> int:
        return int(cluster.sql("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")[0][0])

    with _memory(_notes(tmp_path / "ws"), tmp_path / "d", PostgresStore(cluster.url(), "reuse")) as memory:
        memory.sync()
        assert memory.search("warm up the readers", mode="hybrid").mode == "hybrid"
        before = sessions()
        for i in range(40):
            assert memory.search(f"what did we decide about the cache, question {i}", mode="hybrid").mode == "hybrid"
        opened = sessions() - before - 1  # the count's own
        assert 0 <= opened <= QUERY_VECTOR_THREADS, opened


def test_one_search_over_namespaces_says_where_each_hit_came_from(cluster: Cluster, tmp_path: Path) -> None:
    """Daemon B searches its own agent, a namespace another daemon writes and it was granted, and one it was not:
    hits from both readable ones, each naming its agent; the refused one is listed, not fatal."""
    writer_url = cluster.role("teamwriter", create_schemas=True)
    carol = cluster.role("carol")
    team_ws = _notes(tmp_path / "a" / "ws")
    tables = _agent_table("team", team_ws, writer_url, "crew", 'readers = ["carol"]\n') + _agent_table(
        "vault", team_ws, writer_url, "vault"
    )
    a = _daemon(tmp_path / "a", team_ws, tables)
    b = None
    try:
        mine = tmp_path / "b" / "mine"
        write(mine / "MEMORY.md", "# Mine\n\nMy own note: the Valkey migration needs a runbook.\n")
        b_tables = (
            f'[[agents]]\nid = "me"\nworkspace = "{mine}"\n[agents.embedding]\nprovider = "hash"\n'
            + _agent_table("team", tmp_path / "b" / "mine", carol, "crew")
            + _agent_table("vault", tmp_path / "b" / "mine", carol, "vault")
        )
        b = _daemon(tmp_path / "b", mine, b_tables)
        with b.client(timeout=30) as client:
            found = client.search("valkey", agents=["me", "team", "vault"], mode="keyword")
            where = {(hit.extra["agent"], hit.citation) for hit in found}
            assert any(agent == "me" and citation.startswith("MEMORY.md") for agent, citation in where)
            assert any(agent == "team" and citation.startswith("memory/ops.md") for agent, citation in where)
            assert [(s["agent"], s["code"]) for s in found.raw["skipped"]] == [("vault", "forbidden")]
            team_hit = next(hit for hit in found if hit.extra["agent"] == "team")
            read = client.get(team_hit.path, team_hit.start_line, agent="team")  # B has no copy: the index answers
            assert read["from_index"] and "Valkey" in read["text"] and read["from"] == team_hit.start_line
            with pytest.raises(RemoteError):
                client.get("memory/nothing-here.md", agent="team")
            with pytest.raises(RemoteError) as refused:
                client.search("valkey", agents=["vault"])
            assert refused.value.code == "forbidden"
    finally:
        cleanup(a)
        if b is not None:
            cleanup(b)


def test_store_migrate_moves_an_index_without_embedding_again(cluster: Cluster, tmp_path: Path) -> None:
    """`memoryd store migrate` as a user runs it: the PostgreSQL namespace answers as the SQLite index did, its
    vectors come from the copied cache, and the SQLite index is left as it was."""
    workspace = _notes(tmp_path / "ws")
    data = tmp_path / "data"
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{data}"\n[[agents]]\nid = "main"\nworkspace = "{workspace}"\n'
        '[agents.embedding]\nprovider = "hash"\n'
    )
    agent = quickstart_agent(workspace, data)
    with AgentMemory(agent, HashingEmbedder(256)) as old:
        old.sync()
        before = {q: (_found(old, q, "keyword"), _found(old, q, "hybrid")[0][0]) for q in QUERIES}
        old.store.record_access([old.store.chunks_by_ids([1])[1].hash])
        old.store.flush_access()
        sqlite_counts = old.store.counts()
        assert sum(len(rows) for rows in old.store.export_cache(batch=2)) == sqlite_counts["cached_embeddings"]
    url = _with_password(cluster.url())
    done = subprocess.run(
        [
            MEMORYD,
            "store",
            "migrate",
            "--config",
            str(config),
            "--from",
            "sqlite",
            "--to",
            url,
            "--namespace",
            "moved",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "0 embedded anew" in done.stdout and 'namespace = "moved"' in done.stdout
    assert "hunter2" not in done.stdout + done.stderr and "visible to every local user" in done.stderr
    assert not list((data / "agents" / "main").glob("migrate-*"))  # the run's hold on the agent is gone
    with _memory(workspace, tmp_path / "pg", PostgresStore(cluster.url(), "moved")) as moved:
        assert {q: (_found(moved, q, "keyword"), _found(moved, q, "hybrid")[0][0]) for q in QUERIES} == before
        counts = moved.store.counts()
        assert counts["chunks"] == sqlite_counts["chunks"] == counts["embedded_chunks"]
        assert sum(hits for hits, _ in moved.store.export_access().values()) == 1
        pages = [[row.hash for row in rows] for rows in moved.store.export_cache(batch=2)]  # paged by key
        assert sum(map(len, pages)) == len({h for page in pages for h in page}) == counts["cached_embeddings"] > 2
    untouched = SQLiteStore(agent.store)  # the SQLite index was only read
    try:
        assert untouched.counts() == sqlite_counts
    finally:
        untouched.close()
    wrong = subprocess.run(
        [
            MEMORYD,
            "store",
            "migrate",
            "--config",
            str(config),
            "--from",
            "postgresql",
            "--to",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode != 0 and "uses a sqlite store" in wrong.stderr
    _apply_printed_changes(config, done.stdout)  # pasted as printed, the config is valid and names the namespace
    checked = subprocess.run([MEMORYD, "config", "check", "--config", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert load_config(config).agent("main").postgres == PostgresStore(cluster.url(), "moved")
    # and back, from a namespace read through a replica URL and shared with readers: what SQLite has no use for
    # is named for removal
    config.write_text(
        config.read_text().replace(
            'namespace = "moved"', f'namespace = "moved"\nreaders = ["nobody"]\nread_url = "{cluster.url()}"'
        )
    )
    back = subprocess.run(
        [MEMORYD, "store", "migrate", "--config", str(config), "--to", str(tmp_path / "back.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert back.returncode == 0, back.stderr
    _apply_printed_changes(config, back.stdout)
    checked = subprocess.run([MEMORYD, "config", "check", "--config", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    agent = load_config(config).agent("main")
    assert agent.postgres is None and agent.store == tmp_path / "back.sqlite"


def _apply_printed_changes(config: Path, printed: str) -> None:
    """Edit the config's one [[agents]] table as `store migrate` said to: `key = value` set, `remove key` removed."""
    lines = config.read_text().splitlines()
    told = printed.split("now change the [[agents]] table", 1)[1].splitlines()[1:]
    for line in (t.strip() for t in told if not t.strip().startswith("(")):
        key = line.split()[1] if line.startswith("remove ") else line.split(" = ", 1)[0]
        lines = [kept for kept in lines if not kept.startswith(f"{key} =")]
        if " = " in line and not line.startswith("remove "):
            lines.insert(lines.index('id = "main"') + 1, line)
    config.write_text("\n".join(lines) + "\n")


def test_fewer_recruits_in_postgres_keep_the_same_keyword_ranking(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL ranks a row dearly (ranking_cost), so there only rarer terms recruit chunks and the commoner ones
    score what those find: the page must stay what ranking every matching chunk gives."""
    from memoryd.search import keyword

    workspace = _notes(tmp_path / "ws")
    for i in range(12):  # "cache" and "deploy" in many notes, each note's own word in one
        write(workspace / "memory" / f"c{i}.md", f"# Note {i}\n\nThe cache deploy note {i} mentions word{i} once.\n")
    with _side_by_side(workspace, tmp_path, cluster.url(), "recruits") as (embedded, shared):
        queries = ["cache deploy word3", "redis cache outage", "deploy cache", "valkey deploy night"]
        everything = {q: _found(shared, q, "keyword") for q in queries}
        monkeypatch.setattr(keyword, "RECRUIT_POSTINGS", 2 * shared.store.ranking_cost)  # terms in > 2 chunks score
        for query in queries:
            assert _found(shared, query, "keyword") == everything[query] == _found(embedded, query, "keyword"), query


def test_notes_in_two_languages_are_read_on_one_scale(cluster: Cluster, tmp_path: Path) -> None:
    """A question finds its answer written in the other language through PostgreSQL too: each language's scale
    from the labelled sample, its nearest chunks from a search of that language alone."""
    from memoryd.config import EmbeddingConfig
    from memoryd.embeddings.local import LocalEmbedder
    from memoryd.embeddings.models import prepare as prep

    from .languages import ACROSS, CHINESE, ENGLISH, write_notes
    from .test_languages import DATA_DIR

    workspace = tmp_path / "ws"
    write_notes(workspace)
    embedder = LocalEmbedder(prep.prepare(DATA_DIR).path)
    agent = quickstart_agent(workspace, tmp_path / "data", embedding=EmbeddingConfig(provider="local"))
    with AgentMemory(replace(agent, postgres=PostgresStore(cluster.url(), "languages")), embedder) as shared:
        shared.sync()
        ids = sorted(shared.store.chunk_ids(_everything()))
        assert set(shared.store.languages(ids).values()) == {"en", "zh"}
        assert shared.status()["languages"] is None  # no sample drawn yet: nothing is read to tell
        for question, answer in ACROSS:
            scan = shared.vectors.scan(embedder.embed_query(question), 10)
            assert set(scan.scales) == {"en", "zh"}
            assert shared.status()["languages"] == {"en": len(ENGLISH), "zh": len(CHINESE) - 1}
            for mode in ("vector", "hybrid"):
                assert shared.search(question, mode=mode).results[0].path == answer, (question, mode)


def _sessions(cluster: Cluster, namespace: str) -> int:
    rows = cluster.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (f"memoryd:{namespace}",))
    return int(rows[0][0])


def test_a_daemon_holds_no_more_read_connections_than_max_connections(cluster: Cluster, tmp_path: Path) -> None:
    """Sixteen clients searching at once (hybrid: keyword rankings side by side and the vector side on threads of
    their own) through a daemon whose agent allows 2 read connections: every search answers, and the server never
    sees more than those 2, the write connection and the listener; status says so."""
    import threading

    ws = _notes(tmp_path / "ws")
    daemon = _daemon(tmp_path, ws, _agent_table("main", ws, cluster.url(), "capped", "max_connections = 2\n"))
    seen, failed, stop = [0], [], threading.Event()

    def search(offset: int) -> None:
        with daemon.client(timeout=60) as client:
            for i in range(12):
                try:
                    assert client.search(f"{QUERIES[(offset + i) % len(QUERIES)]} {i}", mode="hybrid").results
                except Exception as exc:  # collected and reported below
                    failed.append(repr(exc))

    def watch() -> None:
        while not stop.is_set():
            seen[0] = max(seen[0], _sessions(cluster, "capped"))
            time.sleep(0.005)

    try:
        daemon.wait_idle()
        watcher = threading.Thread(target=watch)
        watcher.start()
        clients = [threading.Thread(target=search, args=(n,)) for n in range(16)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join()
        stop.set()
        watcher.join()
        assert not failed, failed[:3]
        assert 3 <= seen[0] <= 4, seen[0]  # 2 read connections, the writer's and the listener's
        counts = daemon.status()["read_connections"]
        assert counts["primary"]["limit"] == 2 and counts["primary"]["open"] <= 2, counts
    finally:
        cleanup(daemon)


def test_a_read_that_finds_every_connection_lent_waits_then_says_busy(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one read connection held by a read that does not end, another read waits for it (the wait bounded by
    the statement timeout) and then answers busy, naming the setting; once it is given back, reads go on."""
    import threading

    from memoryd.store.interface import StoreBusy
    from memoryd.store.postgres import connections

    monkeypatch.setattr(connections, "STATEMENT_TIMEOUT_MS", 400)
    store = connections.Connections(cluster.url(), "lent", max_connections=1)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.reading() as cur:
            cur.execute("SELECT 1")
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    try:
        holder.start()
        assert holding.wait(10)
        began = time.monotonic()
        with pytest.raises(StoreBusy) as busy, store.reading() as cur:
            cur.execute("SELECT 1")
        assert time.monotonic() - began >= 0.3 and "max_connections" in str(busy.value)
        release.set()
        holder.join()
        with store.reading() as cur:
            assert cur.execute("SELECT 2").fetchone() == (2,)
        assert store.connection_counts()["primary"] == {"open": 1, "idle": 1, "limit": 1}
    finally:
        release.set()
        store.close()


def test_a_read_connection_left_inside_a_transaction_is_not_lent_again(cluster: Cluster) -> None:
    """A connection given back in the middle of a transaction would run the next borrower's reads inside it (and
    hold its locks and snapshot): it is closed instead."""
    from memoryd.store.postgres.connections import Connections

    store = Connections(cluster.url(), "midway", max_connections=2)
    try:
        with store.borrowing():
            store.reader().execute("BEGIN")
        assert store.connection_counts()["primary"]["open"] == 0
        with store.reading() as cur:
            assert cur.execute("SELECT now() = statement_timestamp()").fetchone() == (True,)  # not inside one
        assert store.connection_counts()["primary"] == {"open": 1, "idle": 1, "limit": 2}
    finally:
        store.close()


def test_closing_leaves_a_read_under_way_to_finish(cluster: Cluster) -> None:
    """A store closed while another thread reads (its postings loading in the background) closes that thread's
    connection when the read gives it back: libpq frees a connection it closes, and the read would have gone on in
    freed memory (a segfault)."""
    import threading

    from memoryd.store.interface import StoreBusy
    from memoryd.store.postgres.connections import Connections

    store = Connections(cluster.url(), "closing", max_connections=2)
    started, closed, seen = threading.Event(), threading.Event(), []

    def read() -> None:
        with store.reading() as cur:
            started.set()
            closed.wait(10)
            seen.append(cur.execute("SELECT 2").fetchone())
            seen.append(cur.connection.closed)
        seen.append(cur.connection.closed)

    reader = threading.Thread(target=read)
    reader.start()
    assert started.wait(10)
    with store.reading() as cur:  # a second connection, idle once given back: closed at once
        idle = cur.connection
        cur.execute("SELECT 1")
    store.close()
    assert idle.closed
    with pytest.raises(StoreBusy):  # a closed pool lends nothing and opens nothing
        store._pools["primary"].take()
    closed.set()
    reader.join(10)
    assert seen == [(2,), False, True]  # read on its open connection, closed once given back
    assert store.connection_counts()["primary"] == {"open": 0, "idle": 0, "limit": 2}


def test_a_leftover_that_cannot_be_dropped_now_does_not_stop_the_writer(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reindex killed mid-way leaves a staging schema whose tables its session may still hold (a large one's
    rollback takes a while): dropping it past the statement timeout failed the daemon's start. The writer starts,
    searches, and drops it at a later start."""
    import psycopg

    from memoryd.store.postgres import Store, connections

    monkeypatch.setattr(connections, "STATEMENT_TIMEOUT_MS", 300)
    workspace = _notes(tmp_path / "ws")
    store = PostgresStore(cluster.url(), "stuck")
    with _memory(workspace, tmp_path / "d", store) as memory:
        memory.sync()
    Store(cluster.url(), "stuck__staging_4343").close()
    with psycopg.connect(cluster.url()) as holder:
        holder.execute('LOCK TABLE "memoryd_stuck__staging_4343".chunks IN ACCESS SHARE MODE')
        with _memory(workspace, tmp_path / "d", store) as memory:
            assert memory.role == "writer"
            assert _found(memory, "valkey", "keyword")
            assert memory.store.leftovers() == ["memoryd_stuck__staging_4343"]
        holder.rollback()
    with _memory(workspace, tmp_path / "d", store) as memory:
        assert memory.store.leftovers() == []
