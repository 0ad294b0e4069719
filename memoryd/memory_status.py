"""What `status` says of one agent's memory: counts, provider, store, health."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memoryd.index.interface import StoreUnavailable
from memoryd.index.sqlite import CORRUPT

if TYPE_CHECKING:
    from memoryd.memory import AgentMemory


def agent_status(memory: AgentMemory) -> dict[str, Any]:
    try:
        with memory.gate.use():
            return _status(memory)
    except StoreUnavailable as exc:
        return {
            "agent": memory.agent.id,
            "workspace": str(memory.agent.workspace),
            **_store_status(memory),
            "index_error": f"store_unavailable: {exc}",
            **_memory_use(memory),
            "time": time.time(),
        }
    except CORRUPT as exc:
        return {
            "agent": memory.agent.id,
            "workspace": str(memory.agent.workspace),
            "store": str(memory.agent.store),
            "index_error": f"{type(exc).__name__}: {exc}; the next sync rebuilds it",
            "index_healed": memory.healed,
            **_memory_use(memory),
            "time": time.time(),
        }


def _memory_use(memory: AgentMemory) -> dict[str, Any]:
    return {
        "vector_matrix_mb": round(memory.vectors.nbytes / 2**20, 3),
        "sqlite_cache_mb": round(memory.store.cache_bytes() / 2**20, 1),
        "model_loaded": memory.embedder is not None and memory.embedder.loaded,
    }


def _store_status(memory: AgentMemory) -> dict[str, Any]:
    """What the store is and how it is: for a shared store, the server's health, this daemon's role, and
    the replica's lag."""
    pg = memory.agent.postgres
    if pg is None:
        return {"store": str(memory.agent.store), "store_kind": "sqlite"}
    from memoryd.index.postgres import redact_url

    return {
        "store": redact_url(pg.url),
        "store_kind": "postgresql",
        "namespace": pg.namespace,
        "role": memory.role,
        "store_health": dict(memory.store.health),
        "read_from": redact_url(pg.read_url) if pg.read_url else "primary",
        "replica_lag_s": memory.store.replica_lag() if pg.read_url else None,
    }


def _status(memory: AgentMemory) -> dict[str, Any]:
    counts = memory.store.counts()
    embedder, reason = memory._vector_state()
    last = memory.store.get_meta("last_sync")
    return {
        "agent": memory.agent.id,
        "workspace": str(memory.agent.workspace),
        **_store_status(memory),
        **counts,
        "embedding": {"waiting": memory._vectors_waiting(counts)},
        "provider": memory.embedder.provider if memory.embedder else None,
        "model": memory.embedder.model if memory.embedder else None,
        "dims": memory.store.dims or (memory.embedder.dims if memory.embedder else 0),
        "vector_available": embedder is not None,
        "vector_backend": memory.store.vector_backend or None,
        "fts_available": memory.store.fts_available,
        "languages": memory.vectors.languages(),
        "keyword_ranking": "bm25 (postgresql)"
        if memory.agent.postgres
        else "bm25_topk"
        if memory.store.ranking_error is None
        else "bm25",
        "keyword_ranking_reason": memory.store.ranking_error,
        "fallback_reason": "; ".join(
            dict.fromkeys(
                r
                for r in (memory.embedder.fallback_reason if memory.embedder else None, reason, memory.embedder_reason)
                if r
            )
        )
        or None,
        "needs_reindex": memory.syncer.needs_reindex(),
        "batch_api_error": memory.embedder.current.last_batch_error if memory.embedder else None,
        "last_sync": float(last) if last else None,
        "last_sync_report": memory.last_sync.as_dict() if memory.last_sync else None,
        "skipped_files": dict(memory.last_sync.skipped) if memory.last_sync else {},
        "index_healed": memory.healed,
        **_memory_use(memory),
        "skipped_lines": {path: str(errors) for path, errors in memory.syncer.skipped_lines.items()},
        "time": time.time(),
    }
