"""The embedding cache and access statistics of a namespace in PostgreSQL (as the SQLite store keeps them)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import astuple
from pathlib import Path

import numpy as np
from psycopg import sql

from memoryd.store.interface import StoreUnavailable
from memoryd.store.postgres.search import Search
from memoryd.store.rows import CachedEmbedding, add_access

MAX_PENDING_ACCESS = 100_000


def _cached_vector(blob: bytes, dims: int) -> np.ndarray:
    vector = np.frombuffer(blob, dtype=np.float16 if len(blob) == 2 * dims else np.float32).astype(np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


class Cache(Search):
    """Vectors by (provider, model, account, text hash), and how often searches returned each chunk."""

    def cache_get(self, provider: str, model: str, key_fp: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(hashes))
        if not unique:
            return {}
        with self.reading() as cur:
            cur.execute(
                sql.SQL(
                    "SELECT hash, dims, vector FROM {}.embedding_cache WHERE hash = ANY(%s) AND provider = %s"
                    " AND model = %s AND key_fp = %s"
                ).format(self._s),
                (unique, provider, model, key_fp),
            )
            return {digest: _cached_vector(bytes(blob), dims) for digest, dims, blob in cur}

    def cache_put(self, provider: str, model: str, key_fp: str, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        rows = [
            (provider, model, key_fp, h, len(v), np.ascontiguousarray(v, dtype=np.float16).tobytes(), now)
            for h, v in items.items()
        ]
        with self.writing() as cur:
            cur.executemany(
                sql.SQL(
                    "INSERT INTO {}.embedding_cache(provider, model, key_fp, hash, dims, vector, created_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (hash, provider, model, key_fp)"
                    " DO UPDATE SET vector = excluded.vector, dims = excluded.dims, created_at = excluded.created_at"
                ).format(self._s),
                rows,
            )

    def cache_drop(self, hashes: Iterable[str]) -> int:
        unique = list(dict.fromkeys(hashes))
        if not unique:
            return 0
        with self.writing() as cur:
            cur.execute(sql.SQL("DELETE FROM {}.embedding_cache WHERE hash = ANY(%s)").format(self._s), (unique,))
            return cur.rowcount

    def copy_cache_from(self, other: Path | str) -> int:
        """Seed this index's embedding cache from another schema of the same database (the atomic reindex)."""
        with self.writing() as cur:
            cur.execute(
                sql.SQL(
                    "INSERT INTO {}.embedding_cache SELECT * FROM {}.embedding_cache ON CONFLICT DO NOTHING"
                ).format(self._s, sql.Identifier(str(other))),
            )
            return cur.rowcount

    def export_cache(self, batch: int = 2000) -> Iterator[list[CachedEmbedding]]:
        after = ("", "", "", "")  # the last row's primary key (hash, provider, model, key_fp), in its order
        while True:
            with self.reading() as cur:
                cur.execute(
                    sql.SQL(
                        "SELECT provider, model, key_fp, hash, dims, vector, created_at FROM {}.embedding_cache"
                        " WHERE (hash, provider, model, key_fp) > (%s, %s, %s, %s)"
                        " ORDER BY hash, provider, model, key_fp LIMIT %s"
                    ).format(self._s),
                    (*after, batch),
                )
                rows = [CachedEmbedding(p, m, k, h, d, bytes(v), c) for p, m, k, h, d, v, c in cur]
            if not rows:
                return
            last = rows[-1]
            after = (last.hash, last.provider, last.model, last.key_fp)
            yield rows

    def import_cache(self, rows: Sequence[CachedEmbedding]) -> int:
        if not rows:
            return 0
        with self.writing() as cur:
            cur.execute(
                sql.SQL(
                    "INSERT INTO {}.embedding_cache(provider, model, key_fp, hash, dims, vector, created_at)"
                    " SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::bytea[],"
                    " %s::float8[]) ON CONFLICT DO NOTHING"
                ).format(self._s),
                [list(column) for column in zip(*(astuple(row) for row in rows), strict=True)],
            )
            return cur.rowcount

    # -- access statistics ------------------------------------------------------------------------------
    def record_access(self, hashes: Sequence[str]) -> None:
        if not hashes:
            return
        now = time.time()
        with self._cache_lock:
            pending = self._access
            if len(pending) >= MAX_PENDING_ACCESS:
                return
            for digest in dict.fromkeys(hashes):
                hits, _ = pending.get(digest, (0, now))
                pending[digest] = (hits + 1, now)

    def flush_access(self) -> bool:
        """Write the counted accesses (the namespace's writer only: a reader's role may not write)."""
        if not self.writable:
            return True
        with self._cache_lock:
            pending, self._access = self._access, {}
        if not pending:
            return True
        try:
            with self.writing() as cur:
                cur.executemany(
                    sql.SQL(
                        "INSERT INTO {s}.access(hash, hits, last_at) VALUES (%s, %s, %s) ON CONFLICT (hash)"
                        " DO UPDATE SET hits = {s}.access.hits + excluded.hits, last_at = excluded.last_at"
                    ).format(s=self._s),
                    [(h, hits, last) for h, (hits, last) in pending.items()],
                )
            return True
        except StoreUnavailable:
            with self._cache_lock:
                add_access(self._access, pending)
            return False

    def export_access(self) -> dict[str, tuple[int, float]]:
        self.flush_access()
        with self.reading() as cur:
            cur.execute(sql.SQL("SELECT hash, hits, last_at FROM {}.access").format(self._s))
            return {h: (int(hits), float(last)) for h, hits, last in cur}

    def import_access(self, stats: dict[str, tuple[int, float]]) -> None:
        with self._cache_lock:
            add_access(self._access, stats)
        self.flush_access()

    def access_stats(self, hashes: Sequence[str]) -> dict[str, tuple[int, float]]:
        unique = list(dict.fromkeys(hashes))
        if not unique:
            return {}
        with self.reading() as cur:
            cur.execute(
                sql.SQL("SELECT hash, hits, last_at FROM {}.access WHERE hash = ANY(%s)").format(self._s), (unique,)
            )
            stats = {h: (int(hits), float(last)) for h, hits, last in cur}
        with self._cache_lock:
            pending = dict(self._access)
        for digest in unique:
            if digest in pending:
                hits, last = pending[digest]
                stored_hits, stored_last = stats.get(digest, (0, 0.0))
                stats[digest] = (stored_hits + hits, max(last, stored_last))
        return stats
