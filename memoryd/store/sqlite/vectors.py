"""Chunk vectors: stored in sqlite-vec where it loads, else as plain BLOB rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from memoryd.store.rows import Unembedded, WindowVectors, attached_change, window_blob, window_matrix
from memoryd.store.schema import vec_ddl
from memoryd.store.sqlite.base import Connections, rows_in


def _vector_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def _as_matrix(ids: list[int], blobs: list[bytes], dims: int) -> tuple[np.ndarray, np.ndarray]:
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dims)
    return np.asarray(ids, dtype=np.int64), matrix


class Vectors(Connections):
    """Vectors of chunks, and the chunks still waiting for theirs."""

    def ensure_vectors(self, dims: int) -> None:
        """Create the vector table for this dimension; a different dimension is an error."""
        current = self.dims
        if current and current != dims:
            raise ValueError(f"index holds {current}-dimensional vectors, got {dims}")
        if current:
            return
        with self._write_lock, self.conn:
            backend = "blob"
            if self.vec_table_available:
                self.conn.execute(vec_ddl(dims))
                backend = "sqlite-vec"
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('dims', ?)", (str(dims),))
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vector_backend', ?)", (backend,))
        self._dims, self._backend = dims, backend

    def _vectors_readable(self) -> bool:
        return self.vector_backend == "blob" or (self.vector_backend == "sqlite-vec" and self.vec_table_available)

    def _vector_table(self) -> tuple[str, str, str]:
        """(table, id column, vector column) of the backend this index stores its vectors in."""
        if self.vector_backend == "sqlite-vec":
            return "chunks_vec", "rowid", "embedding"
        return "chunk_vectors", "chunk_id", "vector"

    def _insert_vector(self, chunk_id: int, vector: np.ndarray) -> None:
        table, key, column = self._vector_table()
        self.conn.execute(f"INSERT INTO {table}({key}, {column}) VALUES (?, ?)", (chunk_id, _vector_blob(vector)))

    def _insert_windows(self, chunk_id: int, windows: np.ndarray | None) -> None:
        if windows is not None:
            self.conn.execute(
                "INSERT OR REPLACE INTO chunk_windows(chunk_id, vectors) VALUES (?, ?)",
                (chunk_id, window_blob(windows)),
            )

    def set_vectors(
        self,
        chunk_ids: Sequence[int],
        hashes: Sequence[str],
        vectors: np.ndarray,
        model: str,
        windows: WindowVectors | None = None,
    ) -> int:
        """Attach vectors (and window vectors) to chunks stored without one; a chunk that was replaced meanwhile
        (its id gone, or reused for other text) is left alone. Returns how many were attached."""
        if not chunk_ids:
            return 0
        self.ensure_vectors(vectors.shape[1])
        live: list[int] = []
        with self._write_lock:
            with self.conn:
                for offset, (chunk_id, digest, vector) in enumerate(zip(chunk_ids, hashes, vectors, strict=True)):
                    exists = self.conn.execute(
                        "SELECT 1 FROM chunks WHERE id = ? AND hash = ? AND model = ''", (chunk_id, digest)
                    )
                    if exists.fetchone() is None:
                        continue
                    self._insert_vector(chunk_id, vector)
                    self._insert_windows(chunk_id, windows[offset] if windows is not None else None)
                    self.conn.execute("UPDATE chunks SET model = ? WHERE id = ?", (model, chunk_id))
                    live.append(chunk_id)
            if live:
                self._notify(attached_change(chunk_ids, live, vectors))
        return len(live)

    def unembedded(self, limit: int = 1000) -> list[Unembedded]:
        """Chunks without a vector, oldest first."""
        rows = self.reader.execute(
            "SELECT id, hash, context, text, heading FROM chunks WHERE model = '' ORDER BY id LIMIT ?", (limit,)
        )
        return [Unembedded(*r) for r in rows]

    def has_vectors(self) -> bool:
        """Whether any chunk has a vector, from two index counts (the warm matrix need not be loaded to know)."""
        return self._row_counts()["embedded_chunks"] > 0

    def settle(self) -> None:
        """Nothing is put off: sqlite-vec has no index to build, and vector search scans the warm matrix."""

    def iter_vectors(self, batch: int = 65_536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every stored vector, as (ids, float32 matrix) pieces of at most `batch` rows."""
        dims = self.dims
        if not dims or not self._vectors_readable():
            return
        table, key, column = self._vector_table()
        rows = self.reader.execute(f"SELECT {key}, {column} FROM {table}")
        ids: list[int] = []
        blobs: list[bytes] = []
        for chunk_id, blob in rows:
            ids.append(chunk_id)
            blobs.append(blob)
            if len(ids) == batch:
                yield _as_matrix(ids, blobs, dims)
                ids, blobs = [], []
        if ids:
            yield _as_matrix(ids, blobs, dims)

    def all_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Every stored vector as (ids, float32 matrix)."""
        parts = list(self.iter_vectors())
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros((0, max(self.dims, 1)), dtype=np.float32)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def vectors_by_ids(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored float32 vectors of chosen chunks (exact rescoring of the warm matrix's approximations)."""
        dims = self.dims
        if not dims or not self._vectors_readable() or not ids:
            return {}
        table, key, column = self._vector_table()
        out: dict[int, np.ndarray] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        if table == "chunks_vec":
            # vec0 answers `rowid IN (...)` by scanning every vector (23 ms at 100k), `rowid = ?` by a lookup
            for chunk_id in unique:
                row = self.reader.execute(f"SELECT {column} FROM {table} WHERE {key} = ?", (chunk_id,)).fetchone()
                if row is not None:
                    out[chunk_id] = np.frombuffer(row[0], dtype=np.float32, count=dims)
            return out
        for chunk_id, blob in rows_in(self.reader, f"SELECT {key}, {column} FROM {table} WHERE {key}", unique):
            out[chunk_id] = np.frombuffer(blob, dtype=np.float32, count=dims)
        return out

    def languages(self, ids: Sequence[int]) -> dict[int, str]:
        """The language of chosen chunks, for those with a known one."""
        unique = list(dict.fromkeys(int(i) for i in ids))
        return dict(rows_in(self.reader, "SELECT id, lang FROM chunks WHERE lang != '' AND id", unique))

    def window_vectors(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The window vectors of chosen chunks (windows x dims), for those stored with them."""
        dims = self.dims
        if not dims or not ids:
            return {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        rows = rows_in(self.reader, "SELECT chunk_id, vectors FROM chunk_windows WHERE chunk_id", unique)
        return {chunk_id: window_matrix(blob, dims) for chunk_id, blob in rows}
