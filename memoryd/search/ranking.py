"""Ranking after fusion: time decay, importance, access statistics, and MMR diversity."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from memoryd.config import QueryConfig
from memoryd.index.store import ChunkRow

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
    when = row.ts if row.ts is not None else row.mtime_ns / 1e9
    age = max(0.0, (now - when) / DAY)
    if not settings.decay or is_evergreen(row.path, row.kind, settings):
        return 1.0, age
    half_life = settings.half_life_days * TYPE_HALF_LIFE.get(row.kind, 1.0)
    return (0.5 ** (age / half_life) if math.isfinite(half_life) else 1.0), age


def importance_factor(row: ChunkRow) -> float:
    """0.5 .. 1.5 for importance 0 .. 1; 1.0 when a note says nothing."""
    return 1.0 if row.importance is None else 0.5 + row.importance


def access_factor(hits: int, weight: float) -> float:
    return 1.0 + weight * math.log1p(hits) if weight else 1.0


def mmr(
    order: list[int], relevance: dict[int, float], similarity: Callable[[int, int], float], lam: float, limit: int
) -> list[tuple[int, float]]:
    """Maximal marginal relevance: each pick trades relevance against likeness to what was already picked."""
    chosen: list[tuple[int, float]] = []
    remaining = list(order)
    while remaining and len(chosen) < limit:
        best, best_value, best_penalty = remaining[0], -math.inf, 0.0
        for candidate in remaining:
            penalty = max((similarity(candidate, c) for c, _ in chosen), default=0.0)
            value = lam * relevance[candidate] - (1 - lam) * penalty
            if value > best_value:
                best, best_value, best_penalty = candidate, value, penalty
        chosen.append((best, best_penalty))
        remaining.remove(best)
    return chosen
