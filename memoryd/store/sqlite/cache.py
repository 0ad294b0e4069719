"""The embedding cache: vectors by text hash and model, so a moved, restored or reindexed text is never embedded
again."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import astuple
from pathlib import Path

import apsw
import numpy as np

from memoryd.store.rows import CachedEmbedding
from memoryd.store.sqlite.base import Connections, rows_in


def _cache_blob(vector: np.ndarray) -> bytes:
    """The embedding cache keeps float16: half the disk, and cosine within 1e-3 of the float32 original."""
    return np.ascontiguousarray(vector, dtype=np.float16).tobytes()


def _cache_rows(
    conn: apsw.Connection, columns: str, provider: str, model: str, key_fp: str, hashes: Iterable[str]
) -> Iterator[tuple]:
    """The embedding cache's rows (those `columns`) for these text hashes under one model."""
    return rows_in(
        conn,
        f"SELECT {columns} FROM embedding_cache WHERE provider = ? AND model = ? AND key_fp = ? AND hash",
        list(dict.fromkeys(hashes)),
        (provider, model, key_fp),
    )


def _cached_vector(blob: bytes, dims: int) -> np.ndarray:
    dtype = np.float16 if len(blob) == 2 * dims else np.float32  # float32 rows come from older indexes
    vector = np.frombuffer(blob, dtype=dtype).astype(np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


class EmbeddingCache(Connections):
    """Vectors by (provider, model, account, text hash)."""

    def cache_get(self, provider: str, model: str, key_fp: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        rows = _cache_rows(self.reader, "hash, dims, vector", provider, model, key_fp, hashes)
        return {digest: _cached_vector(blob, dims) for digest, dims, blob in rows}

    def cache_put(self, provider: str, model: str, key_fp: str, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        with self._write_lock:
            with self.conn:
                known = sum(1 for _ in _cache_rows(self.conn, "hash", provider, model, key_fp, items))
                self.conn.executemany(
                    "INSERT OR REPLACE INTO embedding_cache(provider, model, key_fp, hash, dims, vector, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(provider, model, key_fp, h, len(v), _cache_blob(v), now) for h, v in items.items()],
                )
            self._counts_changed(cache_rows=len(items) - known)

    def cache_drop(self, hashes: Iterable[str]) -> int:
        unique = [(digest,) for digest in dict.fromkeys(hashes)]
        if not unique:
            return 0
        with self._write_lock:
            with self.conn:
                before = self.conn.total_changes()
                self.conn.executemany("DELETE FROM embedding_cache WHERE hash = ?", unique)
                dropped = self.conn.total_changes() - before
            self._counts_changed(cache_rows=-dropped)
            return dropped

    def copy_cache_from(self, other: Path) -> int:
        """Seed this index's embedding cache from another index file (used by the atomic reindex)."""
        with self._write_lock:
            self.conn.execute("ATTACH DATABASE ? AS seed", (str(other),))
            try:
                with self.conn:
                    self.conn.execute(
                        "INSERT OR IGNORE INTO embedding_cache(provider, model, key_fp, hash, dims, vector, created_at)"
                        " SELECT provider, model, key_fp, hash, dims, vector, created_at FROM seed.embedding_cache"
                    )
                    added = self.conn.changes()
                self._counts_changed(cache_rows=added)
                return added
            finally:
                self.conn.execute("DETACH DATABASE seed")

    def export_cache(self, batch: int = 2000) -> Iterator[list[CachedEmbedding]]:
        last = 0
        while True:
            rows = list(
                self.reader.execute(
                    "SELECT id, provider, model, key_fp, hash, dims, vector, created_at FROM embedding_cache"
                    " WHERE id > ? ORDER BY id LIMIT ?",
                    (last, batch),
                )
            )
            if not rows:
                return
            last = rows[-1][0]
            yield [CachedEmbedding(*row[1:]) for row in rows]

    def import_cache(self, rows: Sequence[CachedEmbedding]) -> int:
        with self._write_lock:
            with self.conn:
                before = self.conn.total_changes()
                self.conn.executemany(
                    "INSERT OR IGNORE INTO embedding_cache(provider, model, key_fp, hash, dims, vector, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [astuple(row) for row in rows],
                )
                added = self.conn.total_changes() - before
            self._counts_changed(cache_rows=added)
            return added
