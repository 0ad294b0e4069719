"""The embedder interface every provider implements, and the hygiene applied to every vector."""

from __future__ import annotations

import hashlib
import inspect
from typing import Protocol, runtime_checkable

import numpy as np


class EmbeddingError(RuntimeError):
    """A provider could not produce embeddings (after its retries)."""


class Interrupted(RuntimeError):
    """The embedder is shutting down; the batch in progress stopped at an input boundary."""


@runtime_checkable
class Embedder(Protocol):
    provider: str
    model: str
    dims: int  # 0 until known
    key_fingerprint: str  # distinguishes caches of different accounts or endpoints, never the key itself

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def close(self) -> None: ...


def embed_documents(embedder: Embedder, texts: list[str], *, urgent: bool = False) -> np.ndarray:
    """Embed documents; `urgent` (a note a client waits for) reaches the providers that can put it ahead of
    batch work (they take an `urgent` keyword), and the others embed it as usual."""
    if urgent and "urgent" in inspect.signature(embedder.embed_documents).parameters:
        return embedder.embed_documents(texts, urgent=True)  # type: ignore[call-arg]
    return embedder.embed_documents(texts)


def fingerprint(secret: str) -> str:
    """A short, non-reversible tag for an API key or endpoint."""
    return hashlib.sha256(secret.encode()).hexdigest()[:12] if secret else ""


def clean_vectors(vectors: np.ndarray | list[list[float]], dims: int = 0) -> np.ndarray:
    """NaN/Inf become 0, rows are L2-normalised, and the dimension is checked."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise EmbeddingError(f"provider returned vectors of shape {matrix.shape}")
    if dims and matrix.shape[1] != dims:
        raise EmbeddingError(f"provider returned {matrix.shape[1]}-dimensional vectors, expected {dims}")
    matrix = np.nan_to_num(matrix, nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)
