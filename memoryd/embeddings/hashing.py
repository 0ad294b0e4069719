"""A deterministic, dependency-free embedder: signed feature hashing of words and character trigrams.

It is lexical, not semantic. Tests use it to drive the real vector code path without a model, and it
is a last-resort provider (`provider = "hash"`) where no model can be had.
"""

from __future__ import annotations

import hashlib

import numpy as np

from memoryd.embeddings.base import Embedder, clean_vectors
from memoryd.sources.analyzer import analyze


class HashingEmbedder(Embedder):
    provider = "hash"
    key_fingerprint = ""

    def __init__(self, dims: int = 256) -> None:
        self.dims = dims
        self.model = f"hash-{dims}"

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dims, dtype=np.float32)
        tokens = analyze(text).body.split()
        features = tokens + [f"#{t[i : i + 3]}" for t in tokens if len(t) > 3 for i in range(len(t) - 2)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dims
            vector[index] += 1.0 if digest[4] & 1 else -1.0
        return vector

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return clean_vectors(np.stack([self._vector(t) for t in texts]), self.dims)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def close(self) -> None:
        pass
