"""One search over several agents' memories (shared namespaces among them): each agent answers with its own
ranked list, and the lists are merged into one by fused score, each result naming the agent it came from.

Why by score and not by rank: fused scores are on one scale across indexes (the vector side is a cosine from the
same kind of model, the keyword side is scaled to each index's best hit), so a namespace with strong hits fills
the page while one with only weak hits gives way; interleaving by rank would give both the same share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memoryd.search.hybrid import SearchResponse


@dataclass(frozen=True)
class Skipped:
    """An agent that could not answer this search, and why (the RPC error code and its message)."""

    agent: str
    code: str
    message: str


def merge(
    answered: list[tuple[str, SearchResponse]], skipped: list[Skipped], max_results: int, took_ms: float
) -> dict[str, Any]:
    """The agents' answers as one `search` reply: the best `max_results` results of all of them by score (ties
    keep the order the agents were asked in), each with its `agent`."""
    pooled: list[tuple[float, int, int, str, dict[str, Any]]] = []
    for order, (agent, response) in enumerate(answered):
        for rank, hit in enumerate(response.as_dict()["results"]):
            pooled.append((-float(hit["score"]), order, rank, agent, hit))
    pooled.sort(key=lambda entry: entry[:3])
    results = [{**hit, "agent": agent} for _, _, _, agent, hit in pooled[:max_results]]
    responses = [response for _, response in answered]
    modes = {r.mode for r in responses}
    degraded = [f"{agent}: {r.degraded}" for agent, r in answered if r.degraded]
    degraded += [f"{s.agent}: {s.code}: {s.message}" for s in skipped]
    partial = [r for r in responses if r.partial]
    first = responses[0]
    return {
        "results": results,
        "mode": modes.pop() if len(modes) == 1 else "mixed",
        "provider": first.provider,
        "model": first.model,
        "took_ms": took_ms,
        "fusion": first.fusion,
        "degraded": "; ".join(degraded) or None,
        "restored_query": next((r.restored_query for r in responses if r.restored_query), None),
        "partial": bool(partial),
        "embedded": "; ".join(f"{agent}: {r.embedded}" for agent, r in answered if r.partial) or None,
        "agent": None,
        "agents": [agent for agent, _ in answered],
        "skipped": [vars(s) for s in skipped],
    }
