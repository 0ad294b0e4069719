"""What `doctor` says of a PostgreSQL namespace, each finding with its fix: asked of the server itself while no
daemon serves the agent (can this role reach it, is pgvector there, what may this role do with the namespace, who
writes it, is the replica a replica), and read from a running daemon's status otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import sql

from memoryd.settings import PostgresStore
from memoryd.store.postgres.connections import redact_url
from memoryd.store.postgres.leadership import generation, holder, lock_key
from memoryd.store.postgres.liveness import connect, first_line
from memoryd.store.postgres.namespace import foreign_owner, may_write, too_new
from memoryd.store.postgres.schema import schema_name

Check = tuple[str, str, str]  # (ok|warn|fail, what was found, what to do)
MIN_SERVER = 150000  # PostgreSQL 15
GRANTS = "a writer's role (or the writers' group role) lists this role in `readers` (docs/postgresql.md)"


def offline_check(settings: PostgresStore) -> Iterator[Check]:
    """The namespace as this role finds it on the server, while no daemon of this host serves it."""
    where = redact_url(settings.url)
    try:
        conn = connect(settings.url)
    except psycopg.Error as exc:
        yield "fail", f"{where}: {first_line(exc)}", "check the address, that the server runs, and the password"
        return
    try:
        yield from _namespace(conn, settings)
    except psycopg.Error as exc:
        yield "fail", f"namespace {settings.namespace}: {first_line(exc)}", "check this role's grants"
    finally:
        conn.close()
    if settings.read_url:
        yield from _replica(settings.read_url)


def _namespace(conn: psycopg.Connection, settings: PostgresStore) -> Iterator[Check]:
    schema = schema_name(settings.namespace)
    version, user, may_create = conn.execute(
        "SELECT current_setting('server_version_num')::int, current_user,"
        " has_database_privilege(current_database(), 'CREATE')"
    ).fetchone() or (0, "", False)
    if version < MIN_SERVER:
        yield "fail", f"PostgreSQL {version // 10000}: memoryd needs 15 or newer", "upgrade the server"
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
        yield "fail", "pgvector is not enabled in this database", "as a superuser: CREATE EXTENSION vector"
    found = conn.execute(
        "SELECT pg_get_userbyid(nspowner), has_schema_privilege(oid, 'USAGE') FROM pg_namespace WHERE nspname = %s",
        (schema,),
    ).fetchone()
    if found is None:
        if may_create:
            yield "ok", f"namespace {settings.namespace}: not made yet; this role ({user}) makes it at start", ""
        else:
            yield (
                "fail",
                f"namespace {settings.namespace} does not exist, and this role ({user}) may not make it",
                ("start a writer's daemon first, or GRANT CREATE ON DATABASE to the writers' role"),
            )
        return
    owner, usage = found
    with conn.cursor() as cur:
        refused = foreign_owner(cur, settings.namespace, schema)
    if refused:
        yield "fail", refused, "drop the schema, or give it to the writers' group role"
        return
    if not usage:
        yield "fail", f"namespace {settings.namespace}: this role ({user}) may not read it (owner {owner})", GRANTS
        return
    role = "writer or standby" if may_write(conn, schema) else "reader"
    if role != "reader" and (newer := too_new(conn, schema)):
        yield "fail", newer, "upgrade memoryd on this host (docs/postgresql.md, Upgrades)"
    totals = sql.SQL("SELECT files, chunks FROM {}.totals").format(sql.Identifier(schema))
    files, chunks = conn.execute(totals).fetchone() or (0, 0)
    yield "ok", f"namespace {settings.namespace}: {files} files, {chunks} chunks; this role ({user}): {role}", ""
    key = lock_key(settings.namespace, generation(conn, schema))
    held = holder(conn, key, schema)
    if held is None:
        yield "ok", f"namespace {settings.namespace}: no daemon writes it now", ""
    elif held[5]:
        yield "ok", f"namespace {settings.namespace}: written by pid {held[0]} ({held[1]}, {held[2]})", ""
    else:
        yield (
            "warn",
            f"the writer lock is held by role {held[1]}, which may not write the namespace",
            ("a writer's daemon moves past it when it starts (docs/postgresql.md)"),
        )


def _replica(url: str) -> Iterator[Check]:
    where = redact_url(url)
    try:
        with connect(url) as conn:
            recovering, since = conn.execute(
                "SELECT pg_is_in_recovery(), extract(epoch FROM now() - pg_last_xact_replay_timestamp())"
            ).fetchone() or (False, None)
    except psycopg.Error as exc:
        yield "warn", f"replica {where}: {first_line(exc)}", "searches read the primary until it answers"
        return
    if not recovering:
        yield (
            "fail",
            f"replica {where} is not in recovery (promoted, or not a replica)",
            ("point read_url at a streaming replica, or remove it; searches read the primary meanwhile"),
        )
        return
    yield "ok", f"replica {where}: streaming, last commit replayed {float(since or 0):.1f} s ago", ""


def live_check(state: dict[str, Any]) -> Iterator[Check]:
    """A running daemon's view of its namespace (its status)."""
    health = state.get("store_health") or {}
    if health and not health.get("ok", True):
        yield "fail", f"PostgreSQL: {health.get('error')}", "check the server; writes are saved and indexed later"
    writer = state.get("writer") or {}
    who = f"pid {writer.get('pid')} ({writer.get('role')}, {writer.get('application')})" if writer else "nobody"
    mine = " (this daemon)" if writer.get("this_daemon") else ""
    yield "ok", f"role {state.get('role')}; namespace {state.get('namespace')} written by {who}{mine}", ""
    if state.get("incompatible"):
        yield "fail", str(state["incompatible"]), "upgrade memoryd on this host (docs/postgresql.md, Upgrades)"
    yield from _encryption(state)
    replica = state.get("replica")
    if replica:
        lag = state.get("replica_lag_s") or {}
        level = "ok" if replica.get("ok") else "warn"
        detail = f"replica {replica.get('state')}, searches read the {replica.get('reads_from')}"
        if lag:
            detail += f"; {lag.get('seconds')} s behind"
        yield level, detail, replica.get("error") or ""


def _encryption(state: dict[str, Any]) -> Iterator[Check]:
    """Whether the sessions to each server use TLS; in clear to another host is a warning (libpq's default,
    sslmode=prefer, falls back to clear without a word)."""
    for server, session in (state.get("sessions") or {}).items():
        if session.get("tls"):
            yield "ok", f"{server} sessions use TLS", ""
        elif not session.get("local"):
            yield (
                "warn",
                f"{server} sessions to {session.get('host')} are in clear",
                "add sslmode=verify-full and sslrootcert=… to the URL (docs/postgresql.md, TLS)",
            )


def index_error_fix(error: str) -> str:
    """What to do about a PostgreSQL agent's index_error (not: wait for a rebuild)."""
    if "may not read" in error or "owned by role" in error:
        return GRANTS
    return "check the PostgreSQL server and this role's password; the daemon reconnects by itself"
