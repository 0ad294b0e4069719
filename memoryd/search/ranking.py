"""Ranking after fusion: time decay, importance, access statistics, and MMR diversity."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import numpy as np

from memoryd.config import QueryConfig
from memoryd.sources.analyzer import analyze
from memoryd.store.rows import ChunkRow

DAY = 86400.0
# Half-lives by memory type, as multiples of the configured one (lean-RAG): events fade, facts and skills last.
TYPE_HALF_LIFE = {"episodic": 1.0, "semantic": 6.0, "procedural": 12.0, "lore": math.inf}


@dataclass
class Explained:
    vector_score: float | None
    text_score: float | None
    fused: float
    decay: float = 1.0
    age_days: float | None = None
    importance: float = 1.0
    access_hits: int = 0
    access_factor: float = 1.0
    mmr_step: int | None = None
    mmr_penalty: float = 0.0
    final: float = 0.0
    notes: list[str] = field(default_factory=list)


def is_evergreen(path: str, kind: str, settings: QueryConfig) -> bool:
    return kind == "lore" or path in settings.evergreen or PurePosixPath(path).name in settings.evergreen


def decay_factor(row: ChunkRow, settings: QueryConfig, now: float) -> tuple[float, float | None]:
    """0.5 ** (age / half-life); 1.0 for evergreen notes or when decay is off."""
    age = max(0.0, (now - row.when) / DAY)
    if not settings.decay or is_evergreen(row.path, row.kind, settings):
        return 1.0, age
    half_life = settings.half_life_days * TYPE_HALF_LIFE.get(row.kind, 1.0)
    return (0.5 ** (age / half_life) if math.isfinite(half_life) else 1.0), age


def importance_factor(row: ChunkRow) -> float:
    """0.5 .. 1.5 for importance 0 .. 1; 1.0 when a note says nothing."""
    return 1.0 if row.importance is None else 0.5 + row.importance


def access_factor(hits: int, weight: float) -> float:
    return 1.0 + weight * math.log1p(hits) if weight else 1.0


def mmr(relevance: np.ndarray, similarity: np.ndarray, lam: float, limit: int) -> list[tuple[int, float]]:
    """Maximal marginal relevance over candidates in rank order: each pick trades relevance against its likeness
    to what was already picked. Returns (candidate index, its max similarity to earlier picks) in pick order."""
    count = len(relevance)
    closest = np.zeros(count)
    open_ = np.ones(count, dtype=bool)
    picked: list[tuple[int, float]] = []
    for _ in range(min(limit, count)):
        value = np.where(open_, lam * relevance - (1 - lam) * closest, -np.inf)
        best = int(np.argmax(value))  # ties go to the better-ranked candidate
        picked.append((best, float(closest[best])))
        open_[best] = False
        closest = np.maximum(closest, similarity[best])
    return picked


def similarities(ranked: list[int], rows: Mapping[int, ChunkRow], vectors: Mapping[int, np.ndarray]) -> np.ndarray:
    """Pairwise cosine of the candidates' vectors; word overlap (Jaccard) for any without a vector."""
    if len(vectors) == len(ranked):
        matrix = np.stack([vectors[cid] for cid in ranked])
        return matrix @ matrix.T
    words = [set(analyze(rows[cid].text).body.split()) for cid in ranked]
    sims = np.zeros((len(ranked), len(ranked)))
    for i, a in enumerate(ranked):
        for j in range(i, len(ranked)):
            b = ranked[j]
            if a in vectors and b in vectors:
                value = float(vectors[a] @ vectors[b])
            else:
                union = words[i] | words[j]
                value = len(words[i] & words[j]) / len(union) if union else 0.0
            sims[i, j] = sims[j, i] = value
    return sims
