"""Window vectors at index time: what sync embeds of each chunk's windows (memoryd.sources.windows) beside the
chunk's own vector, and how it finds them in the embedding cache."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from memoryd.config import AgentConfig
from memoryd.embeddings.base import Embedder
from memoryd.index.interface import MemoryStore
from memoryd.sources.markdown import sha256
from memoryd.sources.windows import window_inputs


def window_plan(agent: AgentConfig, chunks: Iterable[tuple[str, str]]) -> list[list[str]] | None:
    """What the embedder sees of each window of these (heading, text) chunks; None with windows off."""
    if not agent.chunking.windows:
        return None
    return [window_inputs(heading, text) for heading, text in chunks]


def split_windows(vectors: np.ndarray, windows: list[list[str]] | None) -> list[np.ndarray] | None:
    """Rows of `vectors` handed back per chunk, as many as each chunk has windows."""
    if windows is None:
        return None
    out, at = [], 0
    for chunk_windows in windows:
        out.append(vectors[at : at + len(chunk_windows)])
        at += len(chunk_windows)
    return out


def cached_windows(store: MemoryStore, embedder: Embedder, windows: list[list[str]]) -> list[np.ndarray | None]:
    """Each chunk's window vectors where the embedding cache holds them all, else None (no rows for a chunk that
    is one window)."""
    keys = [[sha256(w) for w in chunk_windows] for chunk_windows in windows]
    found = store.cache_get(embedder.provider, embedder.model, embedder.key_fingerprint, [k for ks in keys for k in ks])
    out: list[np.ndarray | None] = []
    for ks in keys:
        if not ks:
            out.append(np.zeros((0, max(embedder.dims, 1)), dtype=np.float32))
        else:
            out.append(np.stack([found[k] for k in ks]) if all(k in found for k in ks) else None)
    return out
