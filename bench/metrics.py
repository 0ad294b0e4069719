"""Standard IR metrics over ranked document ids."""

from __future__ import annotations

import math


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def mrr_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if relevant.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def evaluate(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]], k: int = 10) -> dict[str, float]:
    n = len(qrels)
    return {
        f"ndcg@{k}": sum(ndcg_at(runs.get(q, []), rel, k) for q, rel in qrels.items()) / n,
        f"recall@{k}": sum(recall_at(runs.get(q, []), rel, k) for q, rel in qrels.items()) / n,
        f"mrr@{k}": sum(mrr_at(runs.get(q, []), rel, k) for q, rel in qrels.items()) / n,
    }


def dedupe_docs(paths: list[str], mapping: dict[str, str]) -> list[str]:
    """Chunk results -> document ranking (a document's best chunk decides its place)."""
    seen: dict[str, None] = {}
    for path in paths:
        doc = mapping.get(path)
        if doc is not None and doc not in seen:
            seen[doc] = None
    return list(seen)
