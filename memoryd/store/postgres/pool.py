"""Read connections to one PostgreSQL server (the primary, or the replica), at most `limit` of them.

A reading thread borrows one for a read and gives it back after, so that a daemon holds as many connections as it
has reads in flight (bounded), not one for every thread that ever read: the RPC lanes, the keyword ranking pool,
the vector threads and the web page's requests together could otherwise hold twenty or more per server. A read
that finds every connection lent waits for one, up to `wait` seconds, and then fails as busy."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

import psycopg

from memoryd.store.interface import StoreBusy


class ReadPool:
    def __init__(self, connect: Callable[[], psycopg.Connection], limit: int, wait: float, name: str) -> None:
        self._connect, self.limit, self._wait, self.name = connect, limit, wait, name
        self._cond = threading.Condition()
        self._idle: list[psycopg.Connection] = []
        self._open: set[psycopg.Connection] = set()
        self._opening = 0  # connections being made (counted against the limit before they exist)
        self._closed = False

    def take(self) -> psycopg.Connection:
        """An idle connection (the newest given back), a new one while fewer than `limit` are open, else the first
        one given back within `wait` seconds (StoreBusy after)."""
        deadline = time.monotonic() + self._wait
        with self._cond:
            while True:
                if self._closed:
                    raise StoreBusy(f"the {self.name}'s connections are closed")
                while self._idle:
                    conn = self._idle.pop()
                    if not (conn.closed or conn.broken):
                        return conn
                    self._open.discard(conn)
                if len(self._open) + self._opening < self.limit:
                    self._opening += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreBusy(
                        f"all {self.limit} read connections to the {self.name} are in use"
                        " (max_connections; a larger one needs a server that admits it)"
                    )
                self._cond.wait(left)
        try:
            conn = self._connect()
        except BaseException:
            with self._cond:
                self._opening -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._opening -= 1
            self._open.add(conn)
            if self._closed:
                self._open.discard(conn)
                conn.close()
                raise StoreBusy(f"the {self.name}'s connections are closed")
        return conn

    def give(self, conn: psycopg.Connection) -> None:
        """Back for another read (a broken or closed one, or one left inside a transaction, is let go)."""
        idle = psycopg.pq.TransactionStatus.IDLE
        with self._cond:
            if conn not in self._open:
                return
            if conn.closed or conn.broken or self._closed or conn.info.transaction_status != idle:
                self._open.discard(conn)
                with contextlib.suppress(psycopg.Error):
                    conn.close()
            else:
                self._idle.append(conn)
            self._cond.notify()

    def discard(self, conn: psycopg.Connection) -> None:
        """Close a connection the server dropped, and the idle ones with it: what dropped one (a restart, a failover)
        dropped them too, and a read run again after a lost connection must run on a new one."""
        with self._cond:
            idle, self._idle = self._idle, []
            for each in (conn, *idle):
                self._open.discard(each)
            self._cond.notify_all()
        for each in (conn, *idle):
            with contextlib.suppress(psycopg.Error):
                each.close()

    def counts(self) -> dict[str, int]:
        with self._cond:
            return {"open": len(self._open), "idle": len(self._idle), "limit": self.limit}

    def close(self) -> None:
        """Close the idle connections now and each lent one when it is given back: libpq frees a connection on
        closing it, and a thread still reading on it (a background load) would read freed memory."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._open.difference_update(idle)
            self._cond.notify_all()
        for conn in idle:
            with contextlib.suppress(psycopg.Error):
                conn.close()
