"""Fuse vector and keyword candidates into one ranked list: weighted sum or reciprocal-rank fusion."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Candidate:
    chunk_id: int
    vector_score: float | None = None  # cosine similarity, when the chunk has a vector
    text_score: float | None = None  # BM25 scaled to (0, 1] by the query's best hit
    vector_rank: int | None = None  # 1-based rank among vector candidates
    text_rank: int | None = None  # 1-based rank among keyword candidates
    score: float = 0.0


def _effective_weights(
    vector_weight: float, text_weight: float, has_vector: bool, has_text: bool
) -> tuple[float, float]:
    """A side with no signal for this query (no embeddings, no keyword terms) gives its weight to the other."""
    wv = vector_weight if has_vector else 0.0
    wt = text_weight if has_text else 0.0
    total = wv + wt
    if total == 0:
        return (1.0, 0.0) if has_vector else (0.0, 1.0)
    return wv / total, wt / total


def weighted_fusion(
    candidates: list[Candidate], vector_weight: float, text_weight: float, *, has_vector: bool, has_text: bool
) -> None:
    wv, wt = _effective_weights(vector_weight, text_weight, has_vector, has_text)
    for c in candidates:
        c.score = wv * max(0.0, c.vector_score or 0.0) + wt * (c.text_score or 0.0)


def rrf_fusion(
    candidates: list[Candidate], vector_weight: float, text_weight: float, k: int, *, has_vector: bool, has_text: bool
) -> None:
    """Reciprocal-rank fusion, scaled so that rank 1 on every available side scores 1.0."""
    wv, wt = _effective_weights(vector_weight, text_weight, has_vector, has_text)
    best = (wv + wt) / (k + 1)
    for c in candidates:
        raw = 0.0
        if c.vector_rank is not None:
            raw += wv / (k + c.vector_rank)
        if c.text_rank is not None:
            raw += wt / (k + c.text_rank)
        c.score = raw / best
