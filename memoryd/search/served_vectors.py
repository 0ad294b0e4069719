"""Vector search answered by the store's server (pgvector's HNSW index), for stores that many daemons share: no
matrix in the daemon to keep in step with other daemons' writes."""

from __future__ import annotations

import threading
from typing import Protocol

import numpy as np

from memoryd.index.interface import MemoryStore
from memoryd.search.vector import VectorScan

# How a query scores against the whole namespace (fusion's noise estimate) is read from this many vectors drawn at
# random, drawn again once the namespace has grown or shrunk by a tenth: the mean and spread of a query's cosine
# over 2,048 vectors are within about 2% of those over every vector.
SAMPLE_SIZE = 2_048
REDRAW_SHARE = 0.1


class ServingStore(MemoryStore, Protocol):
    def nearest(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> list[tuple[int, float]]: ...
    def sample_vectors(self, size: int) -> np.ndarray: ...


class ServedVectors:
    """The VectorIndex interface over a store that finds nearest neighbours itself."""

    def __init__(self, store: ServingStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._sample: np.ndarray | None = None
        self._sampled_at = 0  # embedded chunks when the sample was drawn

    @property
    def nbytes(self) -> int:
        sample = self._sample
        return int(sample.nbytes) if sample is not None else 0

    def release(self) -> bool:
        with self._lock:
            held, self._sample = self._sample is not None, None
        return held

    def compact(self) -> None:
        """Nothing to compact: the server holds the vectors."""

    def empty(self) -> bool:
        return not self._store.has_vectors()

    def __len__(self) -> int:
        return self._store.row_counts()["embedded_chunks"]

    def _spread_sample(self) -> np.ndarray:
        embedded = len(self)
        with self._lock:
            sample = self._sample
            drift = abs(embedded - self._sampled_at) > REDRAW_SHARE * max(self._sampled_at, 1)
        if sample is None or drift:
            sample = self._store.sample_vectors(SAMPLE_SIZE)
            with self._lock:
                self._sample, self._sampled_at = sample, embedded
        return sample

    def scan(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> VectorScan:
        query = np.asarray(query, dtype=np.float32)
        if self._store.dims and query.shape[-1] != self._store.dims:
            return VectorScan()
        hits = self._store.nearest(query, limit, allowed)
        if not hits:
            return VectorScan()
        sample = self._spread_sample()
        scores = sample @ query if len(sample) else np.array([h[1] for h in hits], dtype=np.float32)
        count = len(allowed) if allowed is not None else len(self)
        return VectorScan(hits, float(scores.mean()), float(scores.std()), count)

    def search(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        return self.scan(query, limit, allowed).hits

    def similarity(self, query: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        vectors = self._store.vectors_by_ids(chunk_ids)
        query = np.asarray(query, dtype=np.float32)
        return {cid: float(v @ query) for cid, v in vectors.items() if v.shape == query.shape}

    def vectors_of(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        return self._store.vectors_by_ids(chunk_ids)
