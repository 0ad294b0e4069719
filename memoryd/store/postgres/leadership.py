"""Which daemon writes a namespace: the one whose write session holds its advisory lock. Advisory locks need no
privilege, so any role that can connect could take the lock first, or queue for it and get it when the writer's
session ends, and keep every standby waiting. So the lock's key carries a *generation*, kept in the namespace's
`meta` table that only its writers may change: a standby that finds the lock held by a role that may not write the
namespace moves the generation on and takes the next key, and every write checks (and holds, until it commits)
the generation it was made under, so that a writer whose key was left behind writes nothing more."""

from __future__ import annotations

import zlib
from typing import Any

import psycopg
import structlog
from psycopg import sql

log = structlog.get_logger("memoryd.postgres")
GENERATION = "writer_generation"  # the meta key; absent: 0, the key memoryd used before generations
MAX_MOVES = 3  # generations moved past in one attempt (each only past a holder that may not write)


class LeftBehind(Exception):
    """The namespace's writer generation moved on: this daemon no longer writes it."""


def lock_key(namespace: str, generation: int = 0) -> int:
    """The advisory lock that makes one daemon a namespace's writer (a signed 64-bit key)."""
    name = f"memoryd writer {namespace}" + (f" {generation}" if generation else "")
    return zlib.crc32(name.encode()) | (0x6D656D << 32)


def generation(conn: psycopg.Connection | psycopg.Cursor, schema: str, *, hold: bool = False) -> int:
    """The namespace's writer generation; `hold` keeps it from moving until this transaction ends."""
    query = sql.SQL("SELECT value FROM {}.meta WHERE key = %s" + (" FOR SHARE" if hold else "")).format(
        sql.Identifier(schema)
    )
    row = conn.execute(query, (GENERATION,)).fetchone()
    return int(row[0]) if row else 0


def holder(conn: psycopg.Connection | psycopg.Cursor, key: int, schema: str) -> tuple[Any, ...] | None:
    """The session holding `key`: pid, role, application, address, start time, and whether that role may write
    the namespace; None when no session does."""
    return conn.execute(
        "SELECT a.pid, a.usename, a.application_name, a.client_addr::text, extract(epoch FROM a.backend_start),"
        " coalesce(has_table_privilege(a.usename, c.oid, 'INSERT, UPDATE, DELETE'), false)"
        " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " LEFT JOIN pg_class c ON c.relname = 'chunks'"
        " AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = %s)"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        " AND l.classid::bigint = %s AND l.objid::bigint = %s",
        (schema, (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF),
    ).fetchone()


def take(conn: psycopg.Connection, namespace: str, schema: str) -> int | None:
    """Take the namespace's writer lock on `conn` (an autocommit connection): the generation it was taken under,
    or None while a session whose role may write the namespace holds it."""
    conn.execute(  # a namespace made before generations lacks the row every write holds
        sql.SQL("INSERT INTO {}.meta VALUES (%s, '0') ON CONFLICT (key) DO NOTHING").format(sql.Identifier(schema)),
        (GENERATION,),
    )
    current = generation(conn, schema)
    for _ in range(MAX_MOVES):
        key = lock_key(namespace, current)
        held = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if held and held[0]:
            moved = generation(conn, schema)
            if moved == current:
                return current
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))  # moved on meanwhile: follow it
            current = moved
            continue
        found = holder(conn, key, schema)
        if found is None or found[5]:
            return None  # a writer holds it (or let it go just now: the next attempt takes it)
        log.warning(
            "a role that may not write the namespace held its writer lock; moving past it",
            namespace=namespace,
            holder_role=found[1],
            holder_pid=found[0],
            generation=current + 1,
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {s}.meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                " WHERE {s}.meta.value = %s"
            ).format(s=sql.Identifier(schema)),
            (GENERATION, str(current + 1), str(current)),
        )
        current = generation(conn, schema)
    return None
