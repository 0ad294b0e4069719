"""Connections that outlive their server's restart: a pooled connection the server dropped while it sat idle is
found out before it fails a request, and a read is run again once on a new one."""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from psycopg import sql

from memoryd.store.errors import DiskFull, RequestFailed
from memoryd.store.interface import NotGranted, StoreBusy, StoreUnavailable

# The writer's session holds the namespace's lock for as long as it lives. A writer that hangs (a laptop asleep, a
# SIGSTOP, a host whose network dropped) must not keep it: the server ends a write session idle for WRITER_IDLE_SECONDS
# (in a transaction or not), and probes its TCP peer, while a live writer says something every BEAT_SECONDS.
CONNECT_TIMEOUT = 3  # seconds; a server that does not answer is reported, never waited on
WRITER_IDLE_SECONDS = 10
BEAT_SECONDS = 2.5
KEEPALIVES: dict[str, Any] = {  # and data unanswered for 10 s ends the connection (a server whose network went)
    "keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3, "tcp_user_timeout": 10_000,
}  # fmt: skip


def connect(url: str, **options: Any) -> psycopg.Connection:
    """An autocommit connection: a server that does not answer within CONNECT_TIMEOUT is reported, and one gone
    silent later is noticed in seconds (KEEPALIVES)."""
    return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, **KEEPALIVES, **options)


class RetryingCursor:
    """A read cursor that runs a statement once more, on a new connection, when the server dropped the pooled one
    before answering: reads are autocommit statements, so running one again changes nothing. A statement the
    server cancelled, refused or failed is not run again, nor one whose connection is lost a second time."""

    def __init__(self, cursor: psycopg.Cursor, reopen: Callable[[], psycopg.Cursor]) -> None:
        self._cursor = cursor
        self._reopen = reopen
        self._retried = False

    @property
    def lost(self) -> bool:
        return self._cursor.connection.broken or self._cursor.connection.closed

    def execute(self, query: Any, params: Any = None, **options: Any) -> RetryingCursor:
        try:
            self._cursor.execute(query, params, **options)
        except psycopg.OperationalError:
            if self._retried or not self.lost:
                raise
            self._retried = True
            self.close()
            self._cursor = self._reopen()
            self._cursor.execute(query, params, **options)
        return self

    def close(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._cursor.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def session_of(conn: psycopg.Connection) -> dict[str, Any]:
    """Whether a session is encrypted, where it went, and whether that is this machine (a Unix socket or a
    loopback address: nothing on the way to overhear)."""
    host, address = conn.info.host, conn.info.hostaddr
    try:
        local = host.startswith("/") or ipaddress.ip_address(address or host).is_loopback
    except ValueError:
        local = False
    return {"tls": bool(conn.pgconn.ssl_in_use), "host": host, "local": local}


def answers(conn: psycopg.Connection) -> bool:
    """Whether a held connection still reaches its server (one that was restarted dropped it while it was idle);
    one that does not is closed."""
    if not (conn.closed or conn.broken):
        try:
            conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            pass
    with contextlib.suppress(psycopg.Error):
        conn.close()
    return False


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def hold_for_life(conn: psycopg.Connection) -> None:
    """Ask the server to end this (write) session once it has hung: idle past WRITER_IDLE_SECONDS, or its peer gone."""
    idle = sql.Literal(f"{WRITER_IDLE_SECONDS}s")
    for name in ("idle_session_timeout", "idle_in_transaction_session_timeout"):
        conn.execute(sql.SQL("SET {} = {}").format(sql.Identifier(name), idle))
    conn.execute("SET tcp_keepalives_idle = 5")
    conn.execute("SET tcp_keepalives_interval = 2")
    conn.execute("SET tcp_keepalives_count = 3")
    conn.execute(sql.SQL("SET tcp_user_timeout = {}").format(sql.Literal(WRITER_IDLE_SECONDS * 1000)))


def limit_statements(conn: psycopg.Connection, default_ms: int) -> int:
    """memoryd's statement_timeout where the server, database or role sets none (a DBA's own setting, even 0, no
    limit, is theirs to choose); the limit in force, in ms."""
    row = conn.execute("SELECT setting, source FROM pg_settings WHERE name = 'statement_timeout'").fetchone()
    if row is not None and row[1] != "default":
        return int(row[0])
    conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(default_ms)))
    return default_ms


def timed_out(limit_ms: int) -> str:
    return f"PostgreSQL took longer than {limit_ms / 1000:g} s on this statement (statement_timeout = {limit_ms} ms)"


def write_error(exc: psycopg.Error, conn: psycopg.Connection, namespace: str, timeout_ms: int) -> Exception:
    """What a failed write is to the code above the store: a lost session first, whatever the error's class."""
    if conn.broken or conn.closed:
        return StoreUnavailable(f"PostgreSQL connection lost: {first_line(exc)}")
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return StoreBusy(timed_out(timeout_ms))
    if isinstance(exc, psycopg.errors.DiskFull):
        return DiskFull(f"PostgreSQL's disk is full; indexing paused ({first_line(exc)})")
    if isinstance(exc, psycopg.errors.InsufficientPrivilege | psycopg.errors.InvalidSchemaName):
        return NotGranted(f"this role may not write the namespace {namespace!r}: {first_line(exc)}")
    return RequestFailed(f"PostgreSQL refused the write: {first_line(exc)}")
