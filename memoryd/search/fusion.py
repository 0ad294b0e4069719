"""Fuse vector and keyword candidates into one ranked list.

Three rules: `weighted` (fixed weights over raw scores), `rrf` (reciprocal rank) and `adaptive`, the default,
which weighs the vector side by how clearly the model singled out its best chunks for this query (see
`vector_confidence`), so a model that does not know a language cannot drown a good keyword ranking.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memoryd.config import QueryConfig
    from memoryd.search.vector import VectorScan


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


def noise_ceiling(count: int) -> float:
    """How many standard deviations above the mean the best of `count` unrelated scores lands, roughly."""
    return math.sqrt(2.0 * math.log(max(count, 2)))


def vector_confidence(scan: VectorScan | None, candidates: list[Candidate], span: float) -> float:
    """0..1: how far the query's best cosine stands out of the whole index's cosine distribution, beyond what
    the best of that many unrelated chunks would reach. Scale-free, so it holds for any model."""
    if scan is None or scan.count < 2 or scan.std <= 1e-9:
        return 1.0
    top = max((c.vector_score for c in candidates if c.vector_score is not None), default=scan.mean)
    z_top = (top - scan.mean) / scan.std
    return min(1.0, max(0.0, (z_top - noise_ceiling(scan.count)) / span))


def adaptive_fusion(
    candidates: list[Candidate],
    vector_weight: float,
    text_weight: float,
    *,
    has_vector: bool,
    has_text: bool,
    scan: VectorScan | None,
    span: float,
) -> None:
    """Both sides scaled to 0..1 per query (the keyword side by its best BM25; the vector side from the index's
    mean cosine up to the best), the vector weight scaled by its confidence."""
    if not has_text:  # vector search alone: rank by similarity, as the weighted rule does
        weighted_fusion(candidates, vector_weight, text_weight, has_vector=has_vector, has_text=has_text)
        return
    wv, wt = _effective_weights(vector_weight, text_weight, has_vector, has_text)
    # not renormalised: an unsure vector side lowers the scores too, so min_score still means something
    wv *= vector_confidence(scan, candidates, span)
    floor = scan.mean if scan is not None else 0.0
    top = max((c.vector_score for c in candidates if c.vector_score is not None), default=floor)
    width = top - floor if top > floor else 1.0
    for c in candidates:
        v = max(0.0, (c.vector_score - floor) / width) if c.vector_score is not None else 0.0
        c.score = wv * v + wt * (c.text_score or 0.0)


def fuse(
    candidates: list[Candidate],
    fusion: str,
    cfg: QueryConfig,
    *,
    has_vector: bool,
    has_text: bool,
    scan: VectorScan | None = None,
) -> None:
    if fusion == "rrf":
        rrf_fusion(candidates, cfg.vector_weight, cfg.text_weight, cfg.rrf_k, has_vector=has_vector, has_text=has_text)
    elif fusion == "weighted":
        weighted_fusion(candidates, cfg.vector_weight, cfg.text_weight, has_vector=has_vector, has_text=has_text)
    else:
        adaptive_fusion(
            candidates,
            cfg.vector_weight,
            cfg.text_weight,
            has_vector=has_vector,
            has_text=has_text,
            scan=scan,
            span=cfg.confidence_span,
        )
