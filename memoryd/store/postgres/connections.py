"""A namespace's connections to PostgreSQL: one for writes, a pool of read connections to each server (the primary,
and the replica where there is one), a listener that hears other daemons' commits, and what is remembered between
them."""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import structlog
from psycopg import sql

from memoryd.postgres_urls import redact_url
from memoryd.settings import READ_CONNECTIONS
from memoryd.store.interface import NotGranted, StoreUnavailable
from memoryd.store.postgres import leadership, liveness
from memoryd.store.postgres.background import Background
from memoryd.store.postgres.liveness import answers, first_line, hold_for_life
from memoryd.store.postgres.namespace import create_namespace, foreign_owner, grant_readers, may_write, too_new
from memoryd.store.postgres.pool import ReadPool
from memoryd.store.postgres.postings import KeywordPostings
from memoryd.store.postgres.reads import Reads
from memoryd.store.postgres.replica import CURRENT_LSN, ReplicaGate
from memoryd.store.postgres.schema import CHANNEL, schema_name
from memoryd.store.rows import ChunkRow, StoreChange, one_row

log = structlog.get_logger("memoryd.postgres")
ChangeListener = Callable[[StoreChange], None]
STATEMENT_TIMEOUT_MS = 10_000


class NotWriter(StoreUnavailable):
    """Another daemon holds the namespace's writer lock: this one reads, and stands by to take over."""


class Connections(Reads, Background):
    """Owns one namespace's connections. Writes go through one connection under a lock; reads borrow one of at
    most `max_connections` per server for as long as they read, so searches run side by side. Every failure to
    reach the server becomes StoreUnavailable."""

    def __init__(
        self,
        url: str,
        namespace: str,
        *,
        read_url: str | None = None,
        readers: tuple[str, ...] = (),
        create=True,
        max_connections: int = READ_CONNECTIONS,
    ) -> None:
        self.url = url
        self.read_url = read_url
        self.namespace = namespace
        self.schema = schema_name(namespace)
        self.readers_granted = readers
        self.path = Path(f"{redact_url(url)}#{namespace}")
        self._s = sql.Identifier(self.schema)
        self._write_lock = threading.RLock()
        self._listeners: list[ChangeListener] = []
        self._local = threading.local()  # the connections this thread has borrowed, and how deep its reads nest
        self._ef: weakref.WeakKeyDictionary[psycopg.Connection, int] = weakref.WeakKeyDictionary()  # hnsw.ef_search
        self.max_connections = max_connections
        wait = STATEMENT_TIMEOUT_MS / 1000
        self._pools = {"primary": ReadPool(lambda: self._connect(self.url), max_connections, wait, "primary")}
        if read_url:
            replica = ReadPool(lambda: self._connect(read_url, primary=False), max_connections, wait, "replica")
            self._pools["replica"] = replica
        self._writer: psycopg.Connection | None = None
        self._cache_lock = threading.Lock()
        self._ranking: ThreadPoolExecutor | None = None  # keyword queries of one search ranked side by side
        self._counts: dict[str, int] | None = None
        self._epoch = 0  # moved by every commit heard of: what was read across one is not kept
        self._frequencies: dict[str, int] = {}
        self._phrase_hits: dict[str, int] = {}
        self._rows: dict[int, ChunkRow] = {}  # chunk rows read since the last commit made or heard of
        self._meta: dict[str, str | None] = {}
        self.postings = KeywordPostings(self)  # BM25 ranked in the daemon, once loaded
        self._invalidated: list[Callable[[], None]] = [self.postings.stale]  # told whenever _invalidate runs
        self._access: dict[str, tuple[int, float]] = {}  # hash -> (hits, last time) not yet written
        self._dims = 0
        self._closed = False
        self.health: dict[str, Any] = {"ok": True, "error": None, "since": time.time()}
        self.sessions: dict[str, dict[str, Any]] = {}  # per server, its last session's TLS and where it went
        self.writable = False
        self.may_write = True  # until the server says otherwise
        self.statement_timeout_ms = STATEMENT_TIMEOUT_MS  # as the last connection made found it
        self.refused: str | None = None  # why this namespace is neither read nor written (_check_owner)
        self.replica = ReplicaGate() if read_url else None
        self.generation = 0  # the writer generation this daemon's lock was taken under (leadership)
        self._primary_away_until = 0.0  # monotonic: reads go to the replica until then
        self.incompatible: str | None = None  # why this memoryd may not write the namespace (a newer one made it)
        self._created = not create
        if create:
            with contextlib.suppress(StoreUnavailable):  # the server may be away: made at the first use instead
                self._create()
        self._start_background()

    # -- connections -----------------------------------------------------------------------------------
    def _connect(self, url: str, autocommit: bool = True, *, primary: bool = True) -> psycopg.Connection:
        """A new connection; one to the primary also says whether the server answers (`health`)."""
        try:
            conn = liveness.connect(url, application_name=f"memoryd:{self.namespace}")
            self.statement_timeout_ms = liveness.limit_statements(conn, STATEMENT_TIMEOUT_MS)
            conn.autocommit = autocommit
        except psycopg.Error as exc:
            if primary:
                self._failed(exc)
            raise StoreUnavailable(f"PostgreSQL unreachable ({redact_url(url)}): {first_line(exc)}") from None
        self.sessions["primary" if primary else "replica"] = liveness.session_of(conn)
        if primary:
            self._recovered()
        return conn

    def _timed_out(self) -> str:
        return liveness.timed_out(self.statement_timeout_ms)

    def _failed(self, exc: BaseException) -> None:
        if self.health["ok"]:
            self.health = {"ok": False, "error": first_line(exc), "since": time.time()}

    def _recovered(self) -> None:
        if not self.health["ok"]:
            self.health = {"ok": True, "error": None, "since": time.time()}
            self._primary_away_until = 0.0
            self._invalidate()  # what was read from the replica meanwhile may be behind the primary

    @contextlib.contextmanager
    def writing(self) -> Iterator[psycopg.Cursor]:
        """One transaction on the write connection, under the write lock; the listeners hear of it after the
        commit (this daemon's through `_notify`, other daemons' through NOTIFY, sent at commit)."""
        with self._write_lock:
            if not self._created:
                self._create()
            if self.refused:
                raise NotGranted(self.refused)
            conn = self._writer_connection()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    if leadership.generation(cur, self.schema, hold=True) != self.generation:
                        raise leadership.LeftBehind
                    yield cur
                    cur.execute("SELECT pg_notify(%s, %s)", (CHANNEL, self.namespace))
                if self.replica is not None:  # this daemon's next search waits for the replica to replay it
                    try:
                        self.replica.heard(int(one_row(conn.execute(CURRENT_LSN).fetchone())[0]))
                    except psycopg.Error:  # committed all the same: searches read the primary for a while
                        self.replica.failed("the commit's position could not be read")
            except leadership.LeftBehind:
                self._writer, self.writable = None, False
                conn.close()  # and its lock with it
                raise NotWriter(f"another daemon took over writing the namespace {self.namespace!r}") from None
            except psycopg.Error as exc:
                if conn.broken or conn.closed:  # whatever the error's class (one the server ended says InternalError)
                    self._writer, self.writable = None, False  # the lock went with the session
                raise liveness.write_error(exc, conn, self.namespace, self.statement_timeout_ms) from None
            finally:
                self._invalidate()

    def _writer_connection(self) -> psycopg.Connection:
        """The write connection, which holds the namespace's advisory lock for its whole session: writes go
        through the connection that holds the lock, so a daemon whose session ended (and whose lock another
        daemon may have taken) can write nothing more. Raises NotWriter while another daemon holds it."""
        if self._writer is not None and answers(self._writer):
            return self._writer
        self._writer = None
        self.writable = False
        conn = self._connect(self.url)
        try:
            self.may_write = may_write(conn, self.schema)
            with conn.cursor() as cur:
                self._check_owner(cur)  # again: the schema may have been dropped and made anew by another role
            self.incompatible = too_new(conn, self.schema) if self.may_write and not self.refused else None
            why = self.refused or self.incompatible or (None if self.may_write else "this role may only read it")
            if why:  # a reader must not hold the lock the namespace's writer needs
                conn.close()
                raise (NotGranted if self.refused else NotWriter)(f"namespace {self.namespace!r}: {why}")
            held = leadership.take(conn, self.namespace, self.schema)
            if held is not None:
                hold_for_life(conn)
        except psycopg.Error as exc:
            conn.close()
            self._failed(exc)
            raise StoreUnavailable(f"PostgreSQL: {first_line(exc)}") from None
        if held is None:
            conn.close()
            raise NotWriter(f"another daemon writes the namespace {self.namespace!r}; this one stands by")
        self.generation = held
        self._writer = conn
        self.writable = True
        return conn

    def try_lead(self) -> bool:
        """Become the namespace's writer if no other daemon is (standbys call it every few seconds)."""
        with self._write_lock:
            try:
                self._writer_connection()
            except (NotWriter, StoreUnavailable):
                return False
            return True

    def check_writer(self) -> bool:
        """Whether this daemon still writes the namespace: its lock's session answers (a lost session lost the
        lock with it)."""
        with self._write_lock:
            if self._writer is not None and answers(self._writer):
                try:  # and its generation still stands (another daemon moved past it: stand down now)
                    if leadership.generation(self._writer, self.schema) == self.generation:
                        return True
                except psycopg.Error:
                    pass
                with contextlib.suppress(psycopg.Error):
                    self._writer.close()
            self._writer = None
            self.writable = False
            return False

    def _create(self) -> None:
        """Make the namespace's schema if it is missing (the first daemon with the right to does so); a role
        without that right reads it once another has made it."""
        with self._write_lock:
            conn = self._connect(self.url, autocommit=True)
            try:
                with conn.cursor() as cur:
                    create_namespace(conn, cur, self.schema)
                    self._grant(cur)
                    self._check_owner(cur)
                self._created = True
            except psycopg.errors.InsufficientPrivilege as exc:
                self._created = True  # as far as this role can: reading says what it may not
                self.may_write = False
                log.warning("cannot make the namespace's schema", namespace=self.namespace, error=first_line(exc))
            finally:
                conn.close()

    def _check_owner(self, cur: psycopg.Cursor) -> None:
        self.refused = foreign_owner(cur, self.namespace, self.schema)
        if self.refused:
            self.may_write = False
            log.error("namespace refused", namespace=self.namespace, why=self.refused)

    def _grant(self, cur: psycopg.Cursor, schema: str | None = None) -> None:
        grant_readers(cur, schema or self.schema, self.readers_granted)

    # -- hearing other daemons --------------------------------------------------------------------------
    def _heard(self) -> None:
        """Some daemon (this one too) committed to this namespace: what is remembered is read again, and
        in-memory views follow."""
        self._invalidate()
        for listener in self._listeners:
            listener(StoreChange((), (), None))

    def _invalidate(self) -> None:
        with self._cache_lock:
            self._epoch += 1
            self._counts = None
            self._frequencies = {}
            self._phrase_hits = {}
            self._rows = {}
            self._meta = {}
        for hook in self._invalidated:
            hook()

    def subscribe(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    def on_invalidate(self, hook: Callable[[], None]) -> None:
        """Call `hook` whenever what was read may be stale (a commit made or heard of, a reconnect)."""
        self._invalidated.append(hook)

    def unsubscribe(self, listener: ChangeListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _notify(self, change: StoreChange) -> None:
        """After a commit of this daemon's (`writing` has already forgotten what it changed)."""
        for listener in self._listeners:
            listener(change)

    # -- lifecycle and state ----------------------------------------------------------------------------
    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.flush_access()
        self._closed = True
        self.postings.drop()
        self._listeners.clear()
        if self._ranking is not None:
            self._ranking.shutdown(wait=False)
        for pool in self._pools.values():
            pool.close()
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
                self.writable = False

    def flush_access(self) -> bool:
        return True

    def release_memory(self) -> None:
        self._invalidate()

    def scrubbed(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to do here: the rows are the server's, and its own VACUUM reclaims what a delete leaves (a
        purge asks nothing more of it than a delete)."""
        return contextlib.nullcontext()

    def cache_bytes(self) -> int:
        return 0

    @property
    def fts_available(self) -> bool:
        return True

    @property
    def ranking_error(self) -> str | None:
        return None
