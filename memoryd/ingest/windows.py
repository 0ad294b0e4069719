"""Windows: a chunk cut again into parts of a few sentences, each embedded on its own beside the chunk. One vector
for a 400-token chunk blurs the sentence a question is about; search scores a chunk by its own vector and its best
window's (memoryd.search.windows; docs/design.md, "Vectors for parts of a chunk"). Here: what the windows are, what
sync embeds of them, and how it finds them in the embedding cache."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from memoryd.config import AgentConfig
from memoryd.embeddings.base import Embedder
from memoryd.sources.markdown import chunk_markdown, embed_input, sha256
from memoryd.store.interface import MemoryStore

WINDOW_TOKENS = 64  # python -m research.window_study: 64 against 400-token chunks


def window_inputs(heading: str, text: str) -> list[str]:
    """What the embedder sees of each window of a chunk (its heading path, then the window's text), cached by
    its hash as a chunk's is; none for a chunk that is a single window already, whose own vector says it all."""
    parts = chunk_markdown(text, WINDOW_TOKENS, 0)
    if len(parts) < 2:
        return []
    return [embed_input("" if part.text.lstrip().startswith("#") else heading, part.text) for part in parts]


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
