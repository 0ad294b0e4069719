"""The vectors of one store as search reads them: a `Vectors` holder per store kind (SQLite's warm matrix in the
daemon, PostgreSQL's pgvector index on the server), and what a scan of them hands to fusion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass
class VectorScan:
    hits: list[tuple[int, float]] = field(default_factory=list)  # (chunk id, cosine), best first
    mean: float = 0.0  # of the query's cosine over every searched chunk
    std: float = 0.0
    count: int = 0
    # notes in several languages (search.languages): each one's map onto the hits' scale; chunks' languages
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    language: dict[int, str] = field(default_factory=dict)
    floor: float | None = None  # search.background: the nearest of what filled a small index up to the pool

    def calibrated(self, chunk_id: int, cosine: float) -> float:
        """A cosine of this chunk (its own or a window's) on the scale the hits were ranked by."""
        scale, shift = self.scales.get(self.language.get(chunk_id, ""), (1.0, 0.0))
        return scale * cosine + shift

    def mapped(self, cosines: dict[int, float], languages: dict[int, str]) -> dict[int, float]:
        """Chunks' cosines on the hits' scale, given their languages (those of mapped languages are kept)."""
        self.language.update({cid: lang for cid, lang in languages.items() if lang in self.scales})
        return {cid: self.calibrated(cid, cosine) for cid, cosine in cosines.items()}


class Vectors(Protocol):
    """Cosine search over every chunk vector of one store (vectors are L2-normalised)."""

    @property
    def nbytes(self) -> int:
        """Memory the holder keeps in the daemon (0 when nothing is loaded)."""

    def release(self) -> bool:
        """Drop what is held in memory until the next search; whether anything was."""

    def compact(self) -> None: ...
    def empty(self) -> bool:
        """No vector to search (never loads a matrix to say so)."""

    def __len__(self) -> int: ...
    def languages(self) -> dict[str, int] | None:
        """Embedded chunks per known language, or None when that is not known without loading."""

    def search(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> list[tuple[int, float]]: ...
    def scan(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> VectorScan:
        """The nearest chunks, and how the query's cosine is spread over the whole store."""

    def similarity(
        self, query: np.ndarray, chunk_ids: list[int], scan: VectorScan | None = None
    ) -> dict[int, float]: ...
    def vectors_of(self, chunk_ids: list[int]) -> dict[int, np.ndarray]: ...
