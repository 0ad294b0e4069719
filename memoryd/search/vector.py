"""Vector search over a warm in-memory matrix that follows the store's committed changes."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from memoryd.index.store import Store, StoreChange


@dataclass
class VectorScan:
    hits: list[tuple[int, float]] = field(default_factory=list)  # (chunk id, cosine), best first
    mean: float = 0.0  # of the query's cosine over every searched chunk
    std: float = 0.0
    count: int = 0


class VectorIndex:
    """Exact cosine search (vectors are L2-normalised) over every chunk vector of one store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._loaded = False
        self._ids = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, 1), dtype=np.float32)
        self._count = 0  # rows in use (some may be holes, id -1)
        self._slot: dict[int, int] = {}
        store.subscribe(self._apply)

    @property
    def nbytes(self) -> int:
        """Memory held by the warm matrix and its ids (0 until first used)."""
        return int(self._matrix.nbytes + self._ids.nbytes) if self._loaded else 0

    def _load(self) -> None:
        ids, matrix = self._store.all_vectors()
        capacity = max(len(ids), 1024)
        self._matrix = np.zeros((capacity, matrix.shape[1]), dtype=np.float32)
        self._matrix[: len(ids)] = matrix
        self._ids = np.full(capacity, -1, dtype=np.int64)
        self._ids[: len(ids)] = ids
        self._count = len(ids)
        self._slot = {int(cid): i for i, cid in enumerate(ids)}
        self._loaded = True

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._load()

    def _apply(self, change: StoreChange) -> None:
        with self._lock:
            if not self._loaded:
                return  # loaded lazily from the store, which already has the change
            for cid in change.removed:
                slot = self._slot.pop(cid, None)
                if slot is not None:
                    self._ids[slot] = -1
                    self._matrix[slot] = 0.0
            if change.vectors is None or not change.added:
                return
            if self._matrix.shape[1] != change.vectors.shape[1]:
                self._loaded = False
                return
            needed = self._count + len(change.added)
            if needed > len(self._ids):
                self._compact(max(needed * 2, 1024))
            for cid, vector in zip(change.added, change.vectors, strict=True):
                slot = self._slot.get(cid)
                if slot is None:
                    slot = self._count
                    self._count += 1
                    self._ids[slot] = cid
                    self._slot[cid] = slot
                self._matrix[slot] = vector

    def _compact(self, capacity: int) -> None:
        live = self._ids[: self._count] >= 0
        ids = self._ids[: self._count][live]
        matrix = self._matrix[: self._count][live]
        self._matrix = np.zeros((capacity, self._matrix.shape[1]), dtype=np.float32)
        self._matrix[: len(ids)] = matrix
        self._ids = np.full(capacity, -1, dtype=np.int64)
        self._ids[: len(ids)] = ids
        self._count = len(ids)
        self._slot = {int(cid): i for i, cid in enumerate(ids)}

    def __len__(self) -> int:
        with self._lock:
            self._ensure_loaded()
            return len(self._slot)

    def search(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        """The `limit` nearest chunks as (chunk id, cosine similarity), best first."""
        return self.scan(query, limit, allowed).hits

    def scan(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> VectorScan:
        """The nearest chunks, and how the query's similarity is spread over all of them (fusion uses it to
        tell a model that recognises the query from one that scores everything alike)."""
        with self._lock:
            self._ensure_loaded()
            if not self._slot or query.shape[-1] != self._matrix.shape[1]:
                return VectorScan()
            scores = self._matrix[: self._count] @ query.astype(np.float32)
            ids = self._ids[: self._count]
            scores = np.where(ids >= 0, scores, -np.inf)
            if allowed is not None:
                mask = np.isin(ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
                scores = np.where(mask, scores, -np.inf)
            k = min(limit, len(scores))
            top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
            top = top[np.argsort(-scores[top])]
            finite = scores[np.isfinite(scores)]
            return VectorScan(
                [(int(ids[i]), float(scores[i])) for i in top if np.isfinite(scores[i])],
                float(finite.mean()) if len(finite) else 0.0,
                float(finite.std()) if len(finite) else 0.0,
                len(finite),
            )

    def similarity(self, query: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """Exact cosine for chosen chunks (keyword hits the vector top-k did not reach)."""
        with self._lock:
            self._ensure_loaded()
            out: dict[int, float] = {}
            if query.shape[-1] != self._matrix.shape[1]:
                return out
            slots = [(cid, self._slot[cid]) for cid in chunk_ids if cid in self._slot]
            if slots:
                values = self._matrix[[s for _, s in slots]] @ query.astype(np.float32)
                out = {cid: float(v) for (cid, _), v in zip(slots, values, strict=True)}
            return out

    def vectors_of(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        """Stored vectors of chosen chunks (MMR compares results with each other)."""
        with self._lock:
            self._ensure_loaded()
            return {cid: self._matrix[self._slot[cid]].copy() for cid in chunk_ids if cid in self._slot}
