"""PostgreSQL faults that must not misreport: a server restart under pooled connections, a full disk, a DBA's own
statement timeout; a real server (the pgserver wheel) and real daemons."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from memoryd.store.postgres.connections import STATEMENT_TIMEOUT_MS
from memoryd_client.stub import RemoteError
from tests.daemon import Daemon, cleanup, eventually, memctl
from tests.pg import Cluster
from tests.test_postgres import _agent_table, _daemon, _hits, _notes
from tests.test_postgres import cluster as cluster  # the module's PostgreSQL, as test_postgres makes it

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def _pair(tmp_path: Path, url: str, namespace: str, b_table: str = "") -> Iterator[tuple[Daemon, Daemon]]:
    """Two daemons on one namespace, each with its own clone of the notes: A (started first) writes, B stands by
    (`b_table`: more lines of B's agent table, under its embedding table)."""
    ws_a = _notes(tmp_path / "a" / "ws")
    ws_b = tmp_path / "b" / "ws"
    shutil.copytree(ws_a, ws_b)
    a = _daemon(tmp_path / "a", ws_a, _agent_table(namespace, ws_a, url, namespace))
    try:
        b = _daemon(tmp_path / "b", ws_b, _agent_table(namespace, ws_b, url, namespace) + b_table)
        try:
            yield a, b
        finally:
            cleanup(b)
    finally:
        cleanup(a)


def _searches(daemon: Daemon, query: str, clients: int, each: int) -> list[list[str]]:
    """`clients` clients side by side, `each` searches apiece: the daemon answers them on several threads, each
    with its own pooled connection."""

    def one(_: int) -> list[list[str]]:
        with daemon.client(timeout=30) as client:
            return [[hit.citation for hit in client.search(query)] for _ in range(each)]

    with ThreadPoolExecutor(clients) as pool:
        return [found for batch in pool.map(one, range(clients)) for found in batch]


def test_a_server_restart_fails_no_request_after_it(cluster: Cluster, tmp_path: Path) -> None:
    """Every connection the daemon pooled dies with the server; once it is back, the first status, searches on
    every thread, a write and a get all answer as before: no request fails for a connection that was idle."""
    ws = _notes(tmp_path / "ws")
    daemon = _daemon(tmp_path, ws, _agent_table("main", ws, cluster.url(), "restart"))
    try:
        before = _searches(daemon, "valkey", clients=4, each=3)
        assert all(found == before[0] and found for found in before)
        with daemon.client() as client:
            assert client.write("The gecko rollout starts on Monday.")["indexed"]
        cluster.stop()
        cluster.start()
        status = daemon.status()
        assert status["store_health"]["ok"] is True and not status.get("index_error"), status
        assert _searches(daemon, "valkey", clients=4, each=3) == before
        with daemon.client() as client:
            written = client.write("After the restart we chose the ocelot rollout.")
            assert written["indexed"], written
            assert client.get(written["path"])["text"].count("ocelot") == 1
        assert _hits(daemon, "ocelot") and _hits(daemon, "gecko")
        assert daemon.status()["role"] == "writer"
        daemon.check_running()
    finally:
        cleanup(daemon)
        if not (cluster.root / "primary" / "postmaster.pid").exists():
            cluster.start()


def test_a_full_disk_on_the_server_is_a_saved_note_not_an_internal_error(cluster: Cluster, tmp_path: Path) -> None:
    """PostgreSQL answering `disk_full` (SQLSTATE 53100, raised by the server itself through a trigger) to a write's
    index: the note is saved once, the answer says it is not indexed yet, and the next sync indexes it once the
    server has room again."""
    ws = _notes(tmp_path / "ws")
    daemon = _daemon(tmp_path, ws, _agent_table("main", ws, cluster.url(), "full"))
    try:
        assert _hits(daemon, "valkey")
        cluster.sql(
            "CREATE FUNCTION memoryd_full.no_room() RETURNS trigger LANGUAGE plpgsql AS "
            "$$BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; "
            "END$$"
        )
        cluster.sql(
            "CREATE TRIGGER no_room BEFORE INSERT ON memoryd_full.chunks FOR EACH ROW "
            "EXECUTE FUNCTION memoryd_full.no_room()"
        )
        with daemon.client() as client:
            written = client.write("The pangolin migration is set for June.")
        assert written["indexed"] is False and "full" in written["index_error"], written
        assert (ws / written["path"]).read_text().count("pangolin") == 1
        assert not _hits(daemon, "pangolin")
        cluster.sql("DROP TRIGGER no_room ON memoryd_full.chunks")
        with daemon.client() as client:
            client.sync()
        eventually(lambda: _hits(daemon, "pangolin"), timeout=20)
        assert (ws / written["path"]).read_text().count("pangolin") == 1
        daemon.check_running()
    finally:
        cleanup(daemon)


def test_a_dbas_statement_timeout_is_kept(cluster: Cluster, tmp_path: Path) -> None:
    """A role with its own statement_timeout keeps it (memoryd's 10 s applies only where nothing is set), and the
    busy answer names the limit that applied."""
    from memoryd.store.interface import StoreBusy
    from memoryd.store.postgres.connections import Connections

    url = cluster.role("patient", create_schemas=True)
    cluster.sql("ALTER ROLE patient SET statement_timeout = '250ms'")
    kept = Connections(url, "patient")
    default = Connections(cluster.url(), "impatient")
    try:
        with kept.reading() as cur:
            assert cur.execute("SHOW statement_timeout").fetchone()[0] == "250ms"
        with default.reading() as cur:
            assert cur.execute("SHOW statement_timeout").fetchone()[0] == f"{STATEMENT_TIMEOUT_MS // 1000}s"
        with pytest.raises(StoreBusy) as busy, kept.reading() as cur:
            cur.execute("SELECT pg_sleep(2)")
        assert "250 ms" in str(busy.value) and "0.25 s" in str(busy.value)
    finally:
        kept.close()
        default.close()


def test_a_standby_with_another_model_searches_by_keyword_and_does_not_retry_a_reindex(
    cluster: Cluster, tmp_path: Path
) -> None:
    """B's model differs from the namespace's: its searches fall back to keywords, it logs once that only the
    writer may rebuild the index, and it never loops on a reindex it may not do; its writes say who indexes them."""
    with _pair(tmp_path, cluster.url(), "models", b_table="dims = 128\n") as (a, b):
        assert b.status()["role"] == "standby" and b.status()["needs_reindex"]
        with b.client() as client:
            found = client.search("valkey")
            assert found.mode == "keyword" and found.results
            written = client.write("The standby noted the tapir rollout.")
        assert written["indexed"] is False and "the writer indexes it" in written["index_error"], written
        time.sleep(5)  # long enough for dozens of attempts at the old rate
        logs = b.logs()
        assert logs.count("reindex failed") == 0 and logs.count("reindex started") == 0, logs[-3000:]
        assert logs.count("only the store's writer rebuilds it") == 1
        assert a.status()["role"] == "writer" and not a.status()["needs_reindex"]
        b.check_running()


def test_a_namespace_another_role_made_first_is_refused(cluster: Cluster, tmp_path: Path) -> None:
    """A role that may only make schemas pre-creates `memoryd_victim` with memoryd's own tables and grants the
    victim's role writing: the victim's daemon neither writes nor reads it, names the owner, and nothing it is
    told reaches the squatter's tables."""
    from memoryd.store.postgres.connections import Connections

    squatter = cluster.role("squatter", create_schemas=True)
    victim = cluster.role("victim", create_schemas=True)
    Connections(squatter, "victim").close()  # memoryd's DDL, run as the squatter
    for what in (
        "SCHEMA memoryd_victim",
        "ALL TABLES IN SCHEMA memoryd_victim",
        "ALL SEQUENCES IN SCHEMA memoryd_victim",
    ):
        cluster.sql(f"GRANT ALL ON {what} TO victim")
    ws = _notes(tmp_path / "ws")
    daemon = _daemon(tmp_path, ws, _agent_table("victim", ws, victim, "victim"))
    try:
        status = daemon.status()
        assert status["role"] != "writer"
        with daemon.client() as client, pytest.raises(RemoteError) as refused:
            client.search("valkey")
        assert refused.value.code == "forbidden" and "owned by role 'squatter'" in refused.value.message
        with daemon.client() as client:
            written = client.write("The victim's private note: the vault path is secret/okapi.")
        assert written["indexed"] is False
        for table in ("files", "chunks", "embedding_cache", "access", "cursors", "changes"):
            assert cluster.sql(f"SELECT count(*) FROM memoryd_victim.{table}") == [(0,)], table
        meta = cluster.sql("SELECT key FROM memoryd_victim.meta ORDER BY key")
        # only what the squatter's DDL put
        assert meta == [("index_generation",), ("schema_version",), ("writer_generation",)], meta
        assert cluster.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == [(0,)]
        daemon.check_running()
    finally:
        cleanup(daemon)


def test_a_replica_behind_promoted_or_gone_never_answers_stale(tmp_path: Path) -> None:
    """C searches through a replica. With its replay paused, a note A writes is still found by C within 2 s (from
    the primary), and after replay from the replica; promoted, the replica's frozen copy is no longer read; stopped,
    no search fails. `status` says which, each time."""
    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    pg = Cluster(root)
    replica = pg.add_replica()
    ws_a = _notes(tmp_path / "a" / "ws")
    ws_c = tmp_path / "c" / "ws"
    shutil.copytree(ws_a, ws_c)
    a = _daemon(tmp_path / "a", ws_a, _agent_table("team", ws_a, pg.url(), "team"))
    c = d = None

    def found_soon(word: str) -> None:
        with a.client() as client:
            client.write(f"The team chose the {word} plan today.")
        started = time.monotonic()
        eventually(lambda: _hits(c, word), timeout=10)
        assert time.monotonic() - started < 2.0, word

    try:
        c = _daemon(tmp_path / "c", ws_c, _agent_table("team", ws_c, pg.url(), "team", f'read_url = "{replica}"\n'))
        assert c.status()["role"] == "standby"
        eventually(lambda: c.status()["replica"]["state"] == "streaming" and _hits(c, "valkey"), timeout=10)
        pg.sql("SELECT pg_wal_replay_pause()", replica=True)
        found_soon("narwhal")
        assert c.status()["replica"]["reads_from"] == "primary"
        assert c.status()["replica"]["state"] == "catching up"
        pg.sql("SELECT pg_wal_replay_resume()", replica=True)
        eventually(lambda: _hits(c, "narwhal") and c.status()["replica"]["state"] == "streaming", timeout=10)
        pg.promote_replica()
        found_soon("okapi")
        status = c.status()["replica"]
        assert status["state"] == "promoted" and status["ok"] is False and status["reads_from"] == "primary"
        pg.stop_replica()
        found_soon("ibex")
        assert all(_hits(c, word) for word in ("narwhal", "okapi", "ibex", "valkey"))
        eventually(lambda: c.status()["replica"]["state"] == "unreachable", timeout=10)  # asked again after 5 s
        assert c.status()["store_health"]["ok"] is True and all(_hits(c, word) for word in ("narwhal", "ibex"))
        c.check_running()
        ws_d = tmp_path / "d" / "ws"
        shutil.copytree(ws_c, ws_d)
        d = _daemon(tmp_path / "d", ws_d, _agent_table("team", ws_d, pg.url(), "team", f'read_url = "{replica}"\n'))
        assert _hits(d, "ibex")

        def held(status: dict) -> bool:
            return status["keyword_ranking"] == "bm25 (in the daemon)" and status["vectors_searched"] == "in the daemon"

        eventually(lambda: held(d.status()), timeout=20)  # started with the replica gone: loaded from the primary
    finally:
        cleanup(a)
        for other in (c, d):
            if other is not None:
                cleanup(other)
        pg.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_frozen_writer_is_replaced_and_stands_by_when_it_wakes(cluster: Cluster, tmp_path: Path) -> None:
    """A writer stopped (SIGSTOP: a laptop asleep, a hung process) loses the namespace within 15 s: the server
    ends its idle write session and the standby takes over. Woken, it stands by; only one daemon writes."""
    with _pair(tmp_path, cluster.url(), "frozen") as (a, b):
        assert a.status()["role"] == "writer" and b.status()["role"] == "standby"
        time.sleep(12)  # a live writer keeps its session past the server's idle limit
        assert b.status()["role"] == "standby"
        os.kill(a.proc.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            eventually(lambda: b.status()["role"] == "writer", timeout=30)
            taken = time.monotonic() - stopped
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)
        assert taken <= 15.0, taken
        with b.client() as client:
            assert client.write("The standby took over from the frozen writer: gazelle.")["indexed"]
        eventually(lambda: a.status()["role"] == "standby", timeout=10)
        with a.client() as client:
            assert client.write("Written on the woken daemon: impala.")["indexed"] is False
        holders = cluster.sql(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND s.application_name = 'memoryd:frozen'"
        )
        assert holders == [(1,)]
        eventually(lambda: (b.status()["writer"] or {}).get("this_daemon"), timeout=10)  # read every 5 s
        a.check_running()


def test_a_role_that_may_not_write_cannot_hold_up_a_takeover(cluster: Cluster, tmp_path: Path) -> None:
    """Advisory locks need no privilege: a role that may only connect queues for the writer's lock, and gets it
    when the writer dies. The standby still takes over at once (under the next generation's key); a lock taken
    before any daemon started delays nobody either."""
    import threading

    from memoryd.store.postgres.leadership import lock_key

    loiterer = cluster.role("loiterer")
    with (
        psycopg.connect(loiterer, autocommit=True) as squat,
        psycopg.connect(loiterer, autocommit=True) as early,
        _pair(tmp_path, cluster.url(), "squat") as (a, b),
    ):
        assert a.status()["role"] == "writer" and b.status()["role"] == "standby"
        queued = threading.Thread(target=lambda: squat.execute("SELECT pg_advisory_lock(%s)", (lock_key("squat"),)))
        queued.start()
        time.sleep(0.5)
        os.kill(a.proc.pid, signal.SIGKILL)
        a.proc.wait()
        killed = time.monotonic()
        queued.join(10)
        assert not queued.is_alive()  # the loiterer holds the lock the writer held
        eventually(lambda: b.status()["role"] == "writer", timeout=15)
        assert time.monotonic() - killed < 5.0
        with b.client() as client:
            assert client.write("After the loiterer: the standby writes the bison plan.")["indexed"]
        assert _hits(b, "bison")
        eventually(lambda: (b.status()["writer"] or {}).get("this_daemon"), timeout=10)

        early.execute("SELECT pg_advisory_lock(%s)", (lock_key("early"),))  # before any daemon of "early"
        ws_c = _notes(tmp_path / "c" / "ws")
        c = _daemon(tmp_path / "c", ws_c, _agent_table("early", ws_c, cluster.url(), "early"))
        try:
            eventually(lambda: c.status()["role"] == "writer", timeout=10)
            assert _hits(c, "valkey")
        finally:
            cleanup(c)


def _documented_roles() -> str:
    text = (Path(__file__).parents[1] / "docs" / "postgresql.md").read_text()
    block = text.split("<!-- roles:begin -->", 1)[1].split("<!-- roles:end -->", 1)[0]
    return block.split("```sql", 1)[1].split("```", 1)[0]


def test_the_documented_roles_give_a_writer_a_standby_and_a_reader(tmp_path: Path) -> None:
    """docs/postgresql.md's role set-up, run as written on a fresh server: host A writes, host B (its own login
    role) stands by and takes over able to write, and the CI runner's role reads, and only reads."""
    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    pg = Cluster(root)
    try:
        pg.sql("CREATE DATABASE team")
        with psycopg.connect(pg.url().replace("/postgres?", "/team?"), autocommit=True) as conn:
            conn.execute(_documented_roles())

        def url(role: str) -> str:
            return pg.url(role).replace("/postgres?", "/team?")

        ws_a = _notes(tmp_path / "a" / "ws")
        ws_b, ws_c = tmp_path / "b" / "ws", tmp_path / "c" / "ws"
        shutil.copytree(ws_a, ws_b)
        shutil.copytree(ws_a, ws_c)
        readers = 'readers = ["ci_reader"]\n'
        a = _daemon(tmp_path / "a", ws_a, _agent_table("deploy", ws_a, url("deploy_host_a"), "deploy", readers))
        daemons = [a]
        b = _daemon(tmp_path / "b", ws_b, _agent_table("deploy", ws_b, url("deploy_host_b"), "deploy", readers))
        daemons.append(b)
        c = _daemon(tmp_path / "c", ws_c, _agent_table("deploy", ws_c, url("ci_reader"), "deploy"))
        daemons.append(c)
        assert [d.status()["role"] for d in daemons] == ["writer", "standby", "reader"]
        with a.client() as client:
            assert client.write("Host A chose the marmot runner image.")["indexed"]
        eventually(lambda: _hits(c, "marmot"), timeout=10)
        os.kill(a.proc.pid, signal.SIGKILL)
        a.proc.wait()
        eventually(lambda: b.status()["role"] == "writer", timeout=15)
        with b.client() as client:
            assert client.write("Host B took over and chose the tapir runner image.")["indexed"]
        eventually(lambda: _hits(c, "tapir"), timeout=10)
        assert c.status()["role"] == "reader" and not b.status().get("sync_error")
        with c.client() as client:
            assert client.write("The runner noted the quokka cache.")["indexed"] is False
        owner = pg.sql("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'memoryd_deploy'")
        assert owner == []  # made in the team database, not this one
        with psycopg.connect(url("deploy_host_b"), autocommit=True) as conn:
            row = conn.execute(
                "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'memoryd_deploy'"
            ).fetchone()
        assert row == ("deploy_writers",)
    finally:
        for daemon in locals().get("daemons", []):
            cleanup(daemon)
        pg.close()
        shutil.rmtree(root, ignore_errors=True)


def _doctor(config: Path) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "memoryd.daemon.cli", "doctor", "--config", str(config), "--no-integrity"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout + done.stderr


def test_doctor_checks_the_namespace_with_and_without_the_daemon(cluster: Cluster, tmp_path: Path) -> None:
    """Running: doctor names the role, who writes, the replica's state. Stopped: it asks the server what this
    role may do (reach it, read or write the namespace, pgvector) and says what to fix, never "wait"."""
    ws = _notes(tmp_path / "ws")
    daemon = _daemon(tmp_path / "w", ws, _agent_table("doc", ws, cluster.url(), "doc"))
    try:
        live = _doctor(daemon.config)
        assert "role writer; namespace doc written by pid" in live and "(this daemon)" in live, live
        shown = memctl(daemon, "status").stdout
        assert "store     namespace doc, writer; written by pid" in shown and "this daemon); primary ok" in shown
    finally:
        cleanup(daemon)
    offline = _doctor(daemon.config)
    assert "namespace doc: 5 files, 8 chunks" in offline and "this role (postgres): writer or standby" in offline, (
        offline
    )
    assert "no daemon writes it now" in offline
    stranger = cluster.role("stranger")
    config = tmp_path / "stranger.toml"
    config.write_text(f'data_dir = "{tmp_path / "s"}"\n' + _agent_table("doc", ws, stranger, "doc"))
    refused = _doctor(config)
    assert "FAIL  agent doc index: namespace doc: this role (stranger) may not read it" in refused, refused
    assert "readers" in refused and "wait" not in refused
    config.write_text(
        f'data_dir = "{tmp_path / "s"}"\n'
        + _agent_table("doc", ws, cluster.url(), "doc", 'read_url = "postgresql://postgres@/postgres?host=/nowhere"\n')
    )
    assert "replica postgresql://postgres@/postgres?host=/nowhere:" in _doctor(config)
    config.write_text(
        f'data_dir = "{tmp_path / "s"}"\n'
        + _agent_table("doc", ws, "postgresql://postgres@/postgres?host=/nowhere", "doc")
    )
    unreachable = _doctor(config)
    assert "FAIL  agent doc index: postgresql://postgres@/postgres?host=/nowhere" in unreachable, unreachable


def test_with_the_primary_down_searches_go_on_from_the_replica(tmp_path: Path) -> None:
    """The primary stops: searches through a replica keep answering (from the replica), status says the primary
    fails, a write is saved and indexed once the primary is back."""
    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    pg = Cluster(root)
    replica = pg.add_replica()
    ws = _notes(tmp_path / "ws")
    daemon = None
    try:
        daemon = _daemon(tmp_path, ws, _agent_table("main", ws, pg.url(), "away", f'read_url = "{replica}"\n'))
        expected = {q: _hits(daemon, q) for q in ("valkey", "getUserById", "redis cache outage")}
        assert all(expected.values())
        pg.stop()
        assert {q: _hits(daemon, q) for q in expected} == expected
        with daemon.client() as client:
            assert client.search("valkey", mode="hybrid").results
            written = client.write("While the primary was away we chose the civet rollout.")
        assert written["indexed"] is False and "civet" in (ws / written["path"]).read_text()
        assert "when the store can be written again" in written["index_error"]
        assert daemon.status()["store_health"]["ok"] is False
        pg.start()
        eventually(lambda: _hits(daemon, "civet"), timeout=30)
        daemon.check_running()
    finally:
        if daemon is not None:
            cleanup(daemon)
        pg.close()
        shutil.rmtree(root, ignore_errors=True)


def _documented_restore() -> list[tuple[str, list[str]]]:
    """The backup section's commands: (which server, argv), the comments saying which."""
    import shlex

    text = (Path(__file__).parents[1] / "docs" / "postgresql.md").read_text()
    block = text.split("<!-- restore:begin -->", 1)[1].split("<!-- restore:end -->", 1)[0]
    server, commands = "old", []
    for line in block.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines():
        if line.startswith("#"):
            server = "new" if "new server" in line else "old"
        else:
            commands.append((server, shlex.split(line)))
    return commands


def test_the_documented_restore_gives_the_same_answers(cluster: Cluster, tmp_path: Path) -> None:
    """docs/postgresql.md's dump and restore, run as written from one server to a fresh one: the restored
    namespace answers a daemon's searches as the old one did, and a reindex's leftovers stay behind."""
    import subprocess

    from tests.pg import _bin

    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    new = Cluster(root)
    ws = _notes(tmp_path / "ws")
    old_db = cluster.url().replace("/postgres?", "/team?")
    cluster.sql("CREATE DATABASE team")
    cluster.role("team_writer", create_schemas=False)
    with psycopg.connect(old_db, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector; GRANT CREATE ON DATABASE team TO team_writer")
    writer_url = cluster.url("team_writer").replace("/postgres?", "/team?")
    daemon = _daemon(tmp_path / "old", ws, _agent_table("main", ws, writer_url, "kept"))
    queries = ("valkey", "getUserById", "thanh toán Hà Nội", "北京服务器")
    try:
        before = {q: _hits(daemon, q) for q in queries}
        with daemon.client() as client:
            before["hybrid"] = [hit.citation for hit in client.search("what did we decide about auth")]
    finally:
        cleanup(daemon)
    with psycopg.connect(old_db, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "memoryd_kept__staging_1"; CREATE SCHEMA "memoryd_kept__retired_2"')
    servers = {"old": cluster.socket_dir, "new": new.socket_dir}
    try:
        for server, argv in _documented_restore():
            env = {**os.environ, "PGHOST": servers[server], "PGUSER": "postgres"}
            done = subprocess.run([_bin(argv[0]), *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True)
            assert done.returncode == 0, (argv, done.stderr)
        new_db = new.url().replace("/postgres?", "/team?")
        with psycopg.connect(new_db, autocommit=True) as conn:
            schemas = {r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memoryd%'")}
        assert schemas == {"memoryd_kept"}
        restored = _daemon(
            tmp_path / "new",
            ws,
            _agent_table("main", ws, new.url("team_writer").replace("/postgres?", "/team?"), "kept"),
        )
        try:
            after = {q: _hits(restored, q) for q in queries}
            with restored.client() as client:
                after["hybrid"] = [hit.citation for hit in client.search("what did we decide about auth")]
            assert after == before and all(before.values())
            assert restored.status()["role"] == "writer"
        finally:
            cleanup(restored)
    finally:
        new.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_url_that_requires_tls_is_never_served_in_clear(tmp_path: Path) -> None:
    """libpq's TLS parameters in a store URL reach libpq as written, and a URL that requires TLS is refused by a
    server (on TCP) that cannot give it: status, searches and doctor say why, and nothing is sent in clear
    (TLS itself: test_postgres_tls)."""
    import socket

    root = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
    pg = Cluster(root)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    pg.serve_tcp(port)
    ws = _notes(tmp_path / "ws")
    clear = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    daemon = None
    try:
        daemon = _daemon(tmp_path / "d", ws, _agent_table("main", ws, f"{clear}?sslmode=require", "clear"))
        with daemon.client() as client, pytest.raises(RemoteError) as refused:
            client.search("valkey")
        assert refused.value.code == "store_unavailable" and "SSL" in refused.value.message, refused.value.message
        assert daemon.status()["store_health"]["ok"] is False
        assert pg.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'memoryd:clear'") == [(0,)]
        assert "does not support SSL" in _doctor(daemon.config)
        cleanup(daemon)
        daemon = _daemon(tmp_path / "e", ws, _agent_table("main", ws, f"{clear}?sslmode=disable", "clear"))
        assert _hits(daemon, "valkey")  # the same server over TCP in clear, where the URL allows it
    finally:
        if daemon is not None:
            cleanup(daemon)
        pg.close()
        shutil.rmtree(root, ignore_errors=True)


def _restarted_after(cluster: Cluster, tmp_path: Path, ws: Path, namespace: str, key: str, value: str) -> Daemon:
    """A daemon on `namespace`, started after a first one made it and the namespace's meta `key` was set to
    `value` meanwhile."""
    cleanup(_daemon(tmp_path / "first", ws, _agent_table("main", ws, cluster.url(), namespace)))
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        conn.execute(f'UPDATE "memoryd_{namespace}".meta SET value = %s WHERE key = %s', (value, key))
    return _daemon(tmp_path / "then", ws, _agent_table("main", ws, cluster.url(), namespace))


def test_a_namespace_a_newer_memoryd_made_is_read_never_written(cluster: Cluster, tmp_path: Path) -> None:
    """Its schema_version is past what this memoryd knows: the daemon reads it and stands by, status and doctor
    say to upgrade, and a write is saved in the note only."""
    ws = _notes(tmp_path / "ws")
    daemon = _restarted_after(cluster, tmp_path, ws, "future", "schema_version", "99")
    try:
        status = daemon.status()
        assert status["role"] == "standby" and "schema 99, made by a newer memoryd" in status["incompatible"]
        assert _hits(daemon, "valkey")
        with daemon.client() as client:
            assert client.write("A note for the future: the axolotl plan.")["indexed"] is False
        assert cluster.sql("SELECT count(*) FROM memoryd_future.chunks WHERE text LIKE '%%axolotl%%'") == [(0,)]
        assert "FAIL  agent main store: the namespace's tables are schema 99" in _doctor(daemon.config)
    finally:
        cleanup(daemon)
        cluster.sql("UPDATE memoryd_future.meta SET value = '1' WHERE key = 'schema_version'")


def test_a_writer_whose_generation_moved_on_writes_nothing_more(cluster: Cluster, tmp_path: Path) -> None:
    """Once another daemon moved the writer generation past this one's and took the next key, this one's next write
    is refused by the fence (its transaction reads the generation it was made under) and it stands down; the check
    the watch job makes every second says so even without a write."""
    from memoryd.store.postgres.connections import Connections, NotWriter
    from memoryd.store.postgres.leadership import GENERATION

    first, second = Connections(cluster.url(), "fence"), Connections(cluster.url(), "fence")
    try:
        assert first.try_lead() and first.generation == 0 and not second.try_lead()
        assert cluster.sql(f"SELECT value FROM memoryd_fence.meta WHERE key = '{GENERATION}'") == [("0",)]
        cluster.sql(f"UPDATE memoryd_fence.meta SET value = '1' WHERE key = '{GENERATION}'")  # as a move does
        assert second.try_lead() and second.generation == 1
        with pytest.raises(NotWriter, match="another daemon took over"), first.writing() as cur:
            cur.execute("INSERT INTO memoryd_fence.meta VALUES ('left behind', 'yes')")
        assert not first.writable and not first.try_lead()
        assert cluster.sql("SELECT count(*) FROM memoryd_fence.meta WHERE key = 'left behind'") == [(0,)]
        cluster.sql(f"UPDATE memoryd_fence.meta SET value = '2' WHERE key = '{GENERATION}'")
        assert not second.check_writer() and not second.writable
    finally:
        first.close()
        second.close()


def test_a_reindex_keeps_the_writer_generation(cluster: Cluster, tmp_path: Path) -> None:
    """A reindex swaps the namespace's schema for a new one: the writer generation goes with it, so the writer
    goes on writing through the swap and after."""
    ws = _notes(tmp_path / "ws")
    daemon = _restarted_after(cluster, tmp_path, ws, "swapgen", "writer_generation", "3")
    try:
        assert daemon.status()["role"] == "writer"
        oid = "SELECT oid FROM pg_namespace WHERE nspname = 'memoryd_swapgen'"
        before = cluster.sql(oid)
        with daemon.client() as client:
            client.reindex(wait=True)
            assert cluster.sql(oid) != before  # swapped for a new schema
            assert cluster.sql("SELECT value FROM memoryd_swapgen.meta WHERE key = 'writer_generation'") == [("3",)]
            assert client.write("After the reindex the team chose the dugong plan.")["indexed"]
        assert _hits(daemon, "dugong") and daemon.status()["role"] == "writer"
    finally:
        cleanup(daemon)
