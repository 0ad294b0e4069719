"""Vector search answered by the store's server (pgvector's HNSW index), for stores that many daemons share: no
matrix in the daemon to keep in step with other daemons' writes."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from memoryd.store.interface import MemoryStore
from memoryd.store.languages import apply_maps, big_groups, language_maps
from memoryd.store.vectors import VectorScan

# How a query scores against the whole namespace (fusion's noise estimate, and each language's scale where notes
# are in several) is read from this many vectors drawn at random, drawn again once the namespace has grown or
# shrunk by a tenth: the mean and spread of a query's cosine over 2,048 vectors are within about 2% of those over
# every vector.
SAMPLE_SIZE = 2_048
REDRAW_SHARE = 0.1


class ServingStore(MemoryStore, Protocol):
    def nearest(
        self,
        query: np.ndarray,
        limit: int,
        allowed: set[int] | None = None,
        language: str | None = None,
        share: float = 1.0,
    ) -> list[tuple[int, float]]: ...
    def sample_vectors(self, size: int) -> tuple[np.ndarray, list[str]]: ...


@dataclass(frozen=True)
class _Sample:
    """Vectors drawn from the namespace, and the language of each as a code into `names` (-1: unknown)."""

    vectors: np.ndarray
    codes: np.ndarray
    names: list[str]

    @classmethod
    def drawn(cls, vectors: np.ndarray, labels: list[str]) -> _Sample:
        names = sorted({label for label in labels if label})
        codes = np.array([names.index(label) if label else -1 for label in labels], dtype=np.int16)
        return cls(vectors, codes, names)


class ServedVectors:
    """memoryd.store.vectors.Vectors over a store that finds nearest neighbours itself."""

    def __init__(self, store: ServingStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._sample: _Sample | None = None
        self._sampled_at = 0  # embedded chunks when the sample was drawn

    @property
    def nbytes(self) -> int:
        sample = self._sample
        return int(sample.vectors.nbytes) if sample is not None else 0

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

    def languages(self) -> dict[str, int] | None:
        """Embedded chunks per known language, estimated from the sample (None until a search drew one)."""
        with self._lock:
            sample, drawn_at = self._sample, self._sampled_at
        if sample is None or not len(sample.codes):
            return None
        counts = np.bincount(sample.codes[sample.codes >= 0], minlength=len(sample.names))
        share = drawn_at / len(sample.codes)
        return {name: round(int(n) * share) for name, n in zip(sample.names, counts, strict=True) if n}

    def _spread_sample(self) -> _Sample:
        embedded = len(self)
        with self._lock:
            sample = self._sample
            drift = abs(embedded - self._sampled_at) > REDRAW_SHARE * max(self._sampled_at, 1)
        if sample is None or drift:
            sample = _Sample.drawn(*self._store.sample_vectors(SAMPLE_SIZE))
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
        scores = sample.vectors @ query if len(sample.codes) else np.array([h[1] for h in hits], dtype=np.float32)
        count = len(allowed) if allowed is not None else len(self)
        codes, names = sample.codes, sample.names
        maps = language_maps(scores, codes, big_groups(codes)) if len(names) > 1 else {}
        if not maps:
            return VectorScan(hits, float(scores.mean()), float(scores.std()), count)
        found = dict(hits)
        for code in maps:  # each language's own nearest: the question's language would crowd the others out
            share = float((codes == code).mean())
            found.update(self._store.nearest(query, limit, allowed, language=names[code], share=share))
        apply_maps(scores, codes, maps)
        scan = VectorScan([], float(scores.mean()), float(scores.std()), count)
        scan.scales = {names[code]: value for code, value in maps.items()}
        ranked = scan.mapped(found, self._store.languages(list(found)))
        scan.hits = sorted(ranked.items(), key=lambda h: (-h[1], h[0]))[:limit]
        return scan

    def search(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        return self.scan(query, limit, allowed).hits

    def similarity(self, query: np.ndarray, chunk_ids: list[int], scan: VectorScan | None = None) -> dict[int, float]:
        vectors = self._store.vectors_by_ids(chunk_ids)
        query = np.asarray(query, dtype=np.float32)
        found = {cid: float(v @ query) for cid, v in vectors.items() if v.shape == query.shape}
        if scan is None or not scan.scales:
            return found
        return scan.mapped(found, self._store.languages(list(found)))

    def vectors_of(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        return self._store.vectors_by_ids(chunk_ids)
