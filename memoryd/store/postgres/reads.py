"""A namespace's reads: connections borrowed from a pool per server, the replica while it may serve a read (its
gate), the primary otherwise, and a read run again once on a new connection when the server dropped the one it
had."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import cast

import psycopg

from memoryd.store.interface import NotGranted, StoreBusy, StoreUnavailable
from memoryd.store.postgres.liveness import CONNECT_TIMEOUT, RetryingCursor, answers, first_line
from memoryd.store.postgres.pool import ReadPool
from memoryd.store.postgres.replica import REPLAY_LSN, ReplicaGate


class Reads:
    """Mixed into Connections, whose state these reads use."""

    namespace: str
    read_url: str | None
    replica: ReplicaGate | None
    refused: str | None
    _created: bool
    _primary_away_until: float
    _local: threading.local
    _pools: dict[str, ReadPool]

    def _create(self) -> None:
        raise NotImplementedError

    def _timed_out(self) -> str:
        raise NotImplementedError

    def reader(self, replica: bool = False) -> psycopg.Connection:
        """The read connection this thread holds to the primary, or (`replica`) to the read URL where there is one:
        borrowed from that server's pool at the first read, given back when the outermost `borrowing` (every
        `reading` is one) ends."""
        slot = "replica" if replica and self.read_url else "primary"
        conn: psycopg.Connection | None = getattr(self._local, slot, None)
        if conn is not None and (conn.closed or conn.broken):
            self._pools[slot].discard(conn)
            conn = None
        if conn is None:
            conn = self._pools[slot].take()
            setattr(self._local, slot, conn)
        return conn

    def live_reader(self, replica: bool = False) -> psycopg.Connection:
        """`reader`, taken anew when the server dropped the one held while it sat idle (a restart): for reads that
        cannot run again statement by statement (a snapshot, a named cursor). `replica`: the replica while it may
        serve reads (as `reading` goes), else the primary, and the primary when the replica does not answer; the
        same server for every such read within one `borrowing` (a log position read first, then rows as of at
        least that position)."""
        pinned = getattr(self._local, "pinned", None) if replica else None
        on_replica = pinned == "replica" if pinned else replica and self._replica_usable()
        try:
            conn = self.reader(on_replica)
            if not answers(conn):
                conn = self.reader(on_replica)
                if on_replica and not answers(conn):
                    raise StoreUnavailable("the replica dropped the connection")
        except StoreBusy:
            raise
        except StoreUnavailable as exc:
            if not on_replica or self.replica is None or pinned:
                raise
            self.replica.failed(f"the replica does not answer ({exc})")
            on_replica, conn = False, self.live_reader()
        if replica:
            self._local.pinned = "replica" if on_replica else "primary"
        return conn

    @contextlib.contextmanager
    def borrowing(self) -> Iterator[None]:
        """Reads on this thread within it keep the connections they borrowed; the outermost gives them back."""
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth = depth
            if depth == 0:
                self._local.pinned = None
                for slot, pool in self._pools.items():
                    conn = getattr(self._local, slot, None)
                    if conn is not None:
                        setattr(self._local, slot, None)
                        pool.give(conn)

    def connection_counts(self) -> dict[str, dict[str, int]]:
        """Read connections open, idle and allowed, per server."""
        return {slot: pool.counts() for slot, pool in self._pools.items()}

    @contextlib.contextmanager
    def reading(self, replica: bool = False) -> Iterator[psycopg.Cursor]:
        """A cursor on this thread's read connection. Searches read the replica (`replica`); everything a sync
        reads comes from the primary, which holds its own writes. A statement whose pooled connection the server
        dropped while it sat idle (a restart, a failover, an idle timeout) runs again once on a new one
        (`RetryingCursor`); a connection lost again is reported."""
        with self.borrowing(), self._reading(replica) as cursor:
            yield cursor

    @contextlib.contextmanager
    def _reading(self, replica: bool) -> Iterator[psycopg.Cursor]:
        if not self._created and not (self.replica is not None and time.monotonic() < self._primary_away_until):
            try:
                self._create()
            except StoreUnavailable:
                if self.replica is None:  # with one, reads go on from the replica while the primary is away
                    raise
                self._primary_away_until = time.monotonic() + CONNECT_TIMEOUT
        if self.refused:
            raise NotGranted(self.refused)

        def reopen() -> psycopg.Cursor:
            if self._drop(cursor.connection) == "replica" and self.replica is not None:
                self.replica.failed("the replica dropped the connection")
            return self._read_cursor(False)

        cursor = RetryingCursor(self._read_cursor(replica), reopen)
        try:
            yield cast(psycopg.Cursor, cursor)  # it answers every call a psycopg cursor does (__getattr__)
        except (
            psycopg.errors.InsufficientPrivilege,
            psycopg.errors.InvalidSchemaName,
            psycopg.errors.UndefinedTable,
        ) as exc:
            raise NotGranted(
                f"the namespace {self.namespace!r} does not exist or this role may not read it ({first_line(exc)})"
            ) from None
        except psycopg.errors.QueryCanceled:
            raise StoreBusy(self._timed_out()) from None
        except psycopg.errors.DiskFull as exc:
            raise StoreUnavailable(f"PostgreSQL's disk is full: {first_line(exc)}") from None
        except psycopg.OperationalError as exc:
            if cursor.lost:
                self._drop(cursor.connection)
                raise StoreUnavailable(f"PostgreSQL connection lost: {first_line(exc)}") from None
            raise
        finally:
            cursor.close()

    def _read_cursor(self, replica: bool) -> psycopg.Cursor:
        """A cursor where a read goes: the replica while it may serve it (`_replica_usable`), else the primary;
        and the replica, a little behind perhaps, rather than no answer while the primary is away."""
        if replica and self._replica_usable():
            return self.reader(replica=True).cursor()
        try:
            if self.replica is not None and time.monotonic() < self._primary_away_until:
                raise StoreUnavailable("the primary did not answer a moment ago")  # not waited on at every read
            return self.reader().cursor()
        except StoreUnavailable:
            if self.replica is None:
                raise
            self._primary_away_until = max(self._primary_away_until, time.monotonic() + CONNECT_TIMEOUT)
            with contextlib.suppress(StoreUnavailable):
                return self.reader(replica=True).cursor()
            raise

    def _drop(self, conn: psycopg.Connection) -> str | None:
        """Close a lost connection of this thread's, making room in its pool; which it was."""
        with contextlib.suppress(psycopg.Error):
            conn.close()
        for slot, pool in self._pools.items():
            if getattr(self._local, slot, None) is conn:
                setattr(self._local, slot, None)
                pool.discard(conn)
                return slot
        return None

    def _replica_usable(self) -> bool:
        """Whether this read may go to the replica (replica.ReplicaGate): asked on this thread's connection to it
        when the gate cannot say."""
        gate = self.replica
        if gate is None:
            return False
        decided = gate.due()
        if decided is not None:
            return decided
        try:
            row = self.reader(replica=True).execute(REPLAY_LSN).fetchone()
        except StoreBusy:
            raise  # every connection to it lent: busy, not away
        except (StoreUnavailable, psycopg.Error) as exc:
            if (lost := getattr(self._local, "replica", None)) is not None:
                self._drop(lost)
            gate.failed(f"the replica does not answer ({first_line(exc)})")
            return False
        return gate.answered(bool(row and row[0]), int(row[1] or 0) if row else 0)
