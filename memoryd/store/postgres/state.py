"""A namespace's metadata, counts and replica lag, remembered until a commit is heard of; who holds its writer lock."""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import sql

from memoryd.store.interface import StoreUnavailable
from memoryd.store.postgres.connections import Connections
from memoryd.store.postgres.leadership import generation, holder, lock_key
from memoryd.store.rows import one_row

WRITER_SECONDS = 5.0  # how long who holds the writer lock is remembered (status asks every second per live page)


class State(Connections):
    """Metadata, counts, lag, and who writes."""

    _writer_seen: tuple[float, tuple[Any, ...] | None] | None = None  # (when read, the holder's row)

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        with self._cache_lock:
            if key in self._meta:
                value = self._meta[key]
                return default if value is None else value
        with self.reading() as cur:
            cur.execute(sql.SQL("SELECT value FROM {}.meta WHERE key = %s").format(self._s), (key,))
            row = cur.fetchone()
        value = row[0] if row else None
        with self._cache_lock:
            self._meta[key] = value
        return default if value is None else value

    def set_meta(self, key: str, value: str) -> None:
        with self.writing() as cur:
            cur.execute(
                sql.SQL(
                    "INSERT INTO {}.meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                ).format(self._s),
                (key, value),
            )

    @property
    def dims(self) -> int:
        if not self._dims:
            self._dims = int(self.get_meta("dims", "0") or 0)
        return self._dims

    @property
    def vector_backend(self) -> str:
        return "pgvector" if self.dims else ""

    def counts(self) -> dict[str, int]:
        cached = self._totals().get("cached")
        if cached is None:
            with self.reading() as cur:
                cur.execute(sql.SQL("SELECT count(*) FROM {}.embedding_cache").format(self._s))
                cached = int(one_row(cur.fetchone())[0])
            with self._cache_lock:
                if self._counts is not None:
                    self._counts["cached"] = cached
        return {**self.row_counts(), "cached_embeddings": cached}

    def row_counts(self) -> dict[str, int]:
        totals = self._totals()
        return {"files": totals["files"], "chunks": totals["chunks"], "embedded_chunks": totals["embedded"]}

    def _totals(self) -> dict[str, int]:
        """files, chunks, embedded, tokens (and cached, once counted), remembered until a commit is heard of."""
        with self._cache_lock:
            if self._counts is not None:
                return dict(self._counts)
            epoch = self._epoch
        with self.reading() as cur:
            cur.execute(sql.SQL("SELECT files, chunks, embedded, tokens FROM {}.totals").format(self._s))
            files, chunks, embedded, tokens = cur.fetchone() or (0, 0, 0, 0)
        totals = {"files": files, "chunks": chunks, "embedded": embedded, "tokens": tokens}
        with self._cache_lock:
            if epoch == self._epoch:
                self._counts = dict(totals)
        return totals

    def replica_lag(self) -> dict[str, float] | None:
        """How far the read connection's server is behind the primary (None when it is the primary or cannot
        say): bytes of WAL not yet replayed, and seconds since the last replayed commit while any is waiting."""
        if not self.read_url:
            return None
        with self.borrowing():
            return self._replica_lag()

    def _replica_lag(self) -> dict[str, float] | None:
        try:
            try:  # the replica itself, whether or not searches read it now
                recovering, replayed, since = one_row(
                    self.reader(replica=True)
                    .execute(
                        "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,"
                        " extract(epoch FROM now() - pg_last_xact_replay_timestamp())"
                    )
                    .fetchone()
                )
            except psycopg.Error:
                if (lost := getattr(self._local, "replica", None)) is not None:
                    self._drop(lost)
                raise
            if not recovering:
                return None
            with self.reading() as cur:  # the primary, on this thread's kept connection
                cur.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)", (replayed,))
                behind = float(one_row(cur.fetchone())[0])
        except (StoreUnavailable, psycopg.Error):
            return None
        return {"bytes": max(behind, 0.0), "seconds": round(float(since or 0.0), 3) if behind > 0 else 0.0}

    def replica_state(self) -> dict[str, Any] | None:
        """Whether searches read the replica now, and why not (replica.ReplicaGate), asked afresh when due."""
        if self.replica is None:
            return None
        with self.borrowing():  # the connection it may ask on goes back to the pool
            self._replica_usable()
        return self.replica.as_dict()

    def chunk_count(self) -> int:
        return self.row_counts()["chunks"]

    def writer_lock(self) -> dict[str, object] | None:
        """Who holds the namespace's writer lock (the session's pid, role, application and since when, as far as
        this role may see them; `this_daemon` from this daemon's own write session, at each call), read from the
        primary on this thread's connection at most every WRITER_SECONDS; None when nobody does."""
        now = time.monotonic()
        cached = self._writer_seen
        row = cached[1] if cached is not None else None
        if cached is None or now - cached[0] >= WRITER_SECONDS:
            try:
                with self.reading() as cur:
                    key = lock_key(self.namespace, generation(cur, self.schema))
                    row = holder(cur, key, self.schema)
            except (psycopg.Error, StoreUnavailable):
                pass  # the last known holder stands while the server is away
            else:
                self._writer_seen = (now, row)
        if row is None:
            return None
        pid, role, application, address, since, _ = row
        mine = self._writer is not None and not self._writer.closed and self._writer.info.backend_pid == pid
        return {
            "pid": pid,
            "role": role,
            "application": application,
            "address": address,
            "since": float(since) if since is not None else None,
            "this_daemon": mine,
        }
