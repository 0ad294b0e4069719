"""Embed through the index's cache, so that unchanged text is never sent to a provider twice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from memoryd.embeddings.base import Embedder, clean_vectors, embed_documents


class VectorCache(Protocol):
    def cache_get(self, provider: str, model: str, key_fp: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    def cache_put(self, provider: str, model: str, key_fp: str, items: dict[str, np.ndarray]) -> None: ...


def embed_with_cache(
    embedder: Embedder, cache: VectorCache, hashes: Sequence[str], inputs: Sequence[str], *, urgent: bool = False
) -> tuple[np.ndarray, int]:
    """Vectors for inputs (keyed by their content hashes); returns (matrix, how many were computed). `urgent`
    work (a note a client waits for) goes ahead of batch work where the provider can tell them apart."""
    provider, model, key_fp = embedder.provider, embedder.model, embedder.key_fingerprint
    found = cache.cache_get(provider, model, key_fp, hashes)
    missing: dict[str, str] = {}
    for digest, text in zip(hashes, inputs, strict=True):
        if digest not in found and digest not in missing:
            missing[digest] = text
    if missing:
        vectors = embed_documents(embedder, list(missing.values()), urgent=urgent)
        computed = clean_vectors(vectors, embedder.dims)
        fresh = dict(zip(missing, computed, strict=True))
        cache.cache_put(provider, model, key_fp, fresh)
        found.update(fresh)
    if not hashes:
        return np.zeros((0, max(embedder.dims, 1)), dtype=np.float32), 0
    return np.stack([found[h] for h in hashes]).astype(np.float32), len(missing)
