"""Vector search over a matrix in the daemon (the SQLite store's VectorIndex), kept in step with a shared
namespace through its change log; the server's HNSW index (ServedVectors) answers until the matrix is loaded,
after a reindex, and wherever the log is missing.

pgvector's HNSW search took 12 ms of a 100k-chunk hybrid search here, the int8 matrix a few: and the work moves
from the one server to the daemons, which are as many as there are hosts. The matrix is loaded in the background
from the log's position read first, then every row the log gained since is applied: adding a chunk again (its
old row dropped first) or removing one twice changes nothing, so what the load already held is harmless."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import numpy as np
import psycopg
import structlog

from memoryd.store.postgres import changelog
from memoryd.store.postgres.search import read_vectors
from memoryd.store.postgres.served import ServedVectors
from memoryd.store.rows import StoreChange
from memoryd.store.sqlite.matrix import VectorIndex
from memoryd.store.vectors import VectorScan

if TYPE_CHECKING:
    from memoryd.store.postgres import Store

log = structlog.get_logger("memoryd.postgres")


class FollowedVectors:
    """memoryd.store.vectors.Vectors for a PostgreSQL namespace."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._served = ServedVectors(store)
        self._lock = threading.Lock()
        self._matrix: VectorIndex | None = None
        self._at: changelog.Position | None = None
        self._loading = False
        self._missing_until = 0.0  # monotonic: not tried again until then (no change log, or the load failed)
        self._wanted = 1  # commits made or heard of (counted), and how many of them the log was read after
        self._applied = 0
        store.subscribe(self._stale)
        store.on_invalidate(self._stale)  # also when the listener reconnects, or the primary answers again

    # -- keeping in step ------------------------------------------------------------------------------------
    def _stale(self, change: StoreChange | None = None) -> None:
        self._wanted += 1

    def start(self) -> None:
        """Load the matrix in the background, unless held, loading, or the namespace has no change log."""
        with self._lock:
            if self._matrix is not None or self._loading or time.monotonic() < self._missing_until:
                return
            self._loading = True
        threading.Thread(target=self._load, name=f"pg-vectors-{self._store.namespace}", daemon=True).start()

    def _load(self) -> None:
        matrix: VectorIndex | None = None
        try:
            with self._store.borrowing():  # the vectors from the server the position came from (live_reader)
                conn = self._store.live_reader(replica=True)
                try:
                    at = changelog.position(conn, self._store._s)
                finally:
                    conn.rollback()
                if at is None:
                    return
                matrix = VectorIndex(self._store)
                matrix.load_unlocked()
            with self._lock:
                self._wanted += 1  # what the log gained since `at` is applied before the first search
                self._matrix, self._at = matrix, at
                matrix = None
            if self._current() is not None:
                log.info("vectors held in the daemon", namespace=self._store.namespace, mb=round(self.nbytes / 1e6, 1))
        except changelog.LogMissing:
            self._missing_until = time.monotonic() + changelog.MISSING_RETRY_SECONDS
        except Exception as exc:  # searched by the server's index meanwhile
            self._missing_until = time.monotonic() + changelog.FAILED_RETRY_SECONDS
            if not self._store._closed:
                log.warning("vectors not held in the daemon", namespace=self._store.namespace, error=f"{exc}")
        finally:
            if matrix is not None:
                self._store.unsubscribe(matrix._apply)
            self._loading = False

    def _drop(self) -> None:
        """Searched by the server again until loaded anew (lock held)."""
        if self._matrix is not None:
            self._store.unsubscribe(self._matrix._apply)
        self._matrix, self._at = None, None

    def _current(self) -> VectorIndex | None:
        """The matrix as the store holds it now (the log's rows applied), None when not held. A search waits for
        a catch-up under way; one that fails leaves the server to answer."""
        if self._matrix is None:
            self.start()
            return None
        if self._applied == self._wanted:
            return self._matrix
        with self._lock:
            matrix, at, wanted = self._matrix, self._at, self._wanted
            if matrix is None or at is None:
                return None
            if self._applied != wanted:
                try:
                    gained, vectors = changelog.gained(self._store, at, self._vectors_of)
                    if gained.lost or gained.large:
                        self._drop()  # another index, a pruned log, or too much: loaded anew, served meanwhile
                    else:
                        self._apply(matrix, gained, vectors or {})
                        self._at = changelog.Position(at.generation, gained.last)
                    self._applied = wanted
                except changelog.LogMissing:  # the log was dropped (an older memoryd's tables restored)
                    self._missing_until = time.monotonic() + changelog.MISSING_RETRY_SECONDS
                    self._drop()
                except Exception as exc:
                    log.warning("change log not read", namespace=self._store.namespace, error=f"{exc}")
                    return None
            matrix = self._matrix
        if matrix is None:
            self.start()
        return matrix

    def _vectors_of(self, cur: psycopg.Cursor, gained: changelog.Gained) -> dict[int, np.ndarray]:
        """The vectors of the chunks the log added or embedded, read where the log was."""
        touched = gained.kept("a", "v")
        if not touched or not self._store.dims:
            return {}
        return read_vectors(cur, self._store._s, touched)

    def _apply(self, matrix: VectorIndex, gained: changelog.Gained, vectors: dict[int, np.ndarray]) -> None:
        removed = gained.removed
        added = [c for c in gained.kept("a", "v") if c in vectors]
        if removed or added:
            matrix._apply(
                StoreChange(
                    tuple(sorted(removed)) + tuple(added),
                    tuple(added),
                    np.stack([vectors[c] for c in added]) if added else None,
                )
            )

    @property
    def held(self) -> bool:
        return self._matrix is not None

    # -- memoryd.store.vectors.Vectors ----------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        matrix = self._matrix
        return matrix.nbytes if matrix is not None else self._served.nbytes

    def release(self) -> bool:
        """Drop the matrix when the daemon goes idle; the next search loads it again (the server answers meanwhile)."""
        with self._lock:
            held = self._matrix is not None
            self._drop()
        return self._served.release() or held

    def compact(self) -> None:
        matrix = self._matrix
        if matrix is not None:
            matrix.compact()

    def empty(self) -> bool:
        return self._served.empty()

    def __len__(self) -> int:
        return len(self._served)

    def languages(self) -> dict[str, int] | None:
        matrix = self._current()
        return matrix.languages() if matrix is not None else self._served.languages()

    def scan(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> VectorScan:
        matrix = self._current()
        return matrix.scan(query, limit, allowed) if matrix is not None else self._served.scan(query, limit, allowed)

    def search(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        return self.scan(query, limit, allowed).hits

    def similarity(self, query: np.ndarray, chunk_ids: list[int], scan: VectorScan | None = None) -> dict[int, float]:
        matrix = self._current()
        if matrix is not None:
            return matrix.similarity(query, chunk_ids, scan)
        return self._served.similarity(query, chunk_ids, scan)

    def vectors_of(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        return self._served.vectors_of(chunk_ids)
