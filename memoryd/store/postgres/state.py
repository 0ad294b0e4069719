"""A namespace's metadata, counts and replica lag, remembered until a commit is heard of."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg
from psycopg import sql

from memoryd.store.interface import StoreUnavailable
from memoryd.store.postgres.connections import Connections
from memoryd.store.rows import one_row


class State(Connections):
    """Metadata, counts and lag."""

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
        try:
            with self.reading(replica=True) as cur:
                cur.execute(
                    "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,"
                    " extract(epoch FROM now() - pg_last_xact_replay_timestamp())"
                )
                recovering, replayed, since = one_row(cur.fetchone())
            if not recovering:
                return None
            with self._writer_or_primary() as cur:
                cur.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)", (replayed,))
                behind = float(one_row(cur.fetchone())[0])
        except (StoreUnavailable, psycopg.Error):
            return None
        return {"bytes": max(behind, 0.0), "seconds": round(float(since or 0.0), 3) if behind > 0 else 0.0}

    @contextlib.contextmanager
    def _writer_or_primary(self) -> Iterator[psycopg.Cursor]:
        conn = self._connect(self.url)
        try:
            with conn.cursor() as cur:
                yield cur
        finally:
            conn.close()

    def chunk_count(self) -> int:
        return self.row_counts()["chunks"]
