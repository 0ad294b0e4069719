"""The embedder interface every provider implements, and the hygiene applied to every vector."""

from __future__ import annotations

import hashlib

import numpy as np


class EmbeddingError(RuntimeError):
    """A provider could not produce embeddings (after its retries)."""


class Interrupted(RuntimeError):
    """The embedder is shutting down; the batch in progress stopped at an input boundary."""


class Embedder:
    """What every provider derives from (built-in or a plugin's): the calls it must implement, and each optional
    capability with what it means for a provider that does not have it. The daemon calls these, never probes."""

    provider: str = ""
    model: str = ""
    dims: int = 0  # 0 until known
    key_fingerprint: str = ""  # distinguishes caches of different accounts or endpoints, never the key itself
    fallback_reason: str | None = None  # a chain that fell back to another provider says why
    last_batch_error: str | None = None  # the last asynchronous batch job that failed, where a provider runs them
    prompts_from: str = ""  # where the query and document prompts come from ("" for a provider that has none)
    licence: str = ""  # the model's licence, where known

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        """One vector per text; `urgent` (a note a client waits for) may go ahead of batch work."""
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        raise NotImplementedError

    def close(self) -> None:
        """Let go of what it holds (connections, a loaded model)."""

    @property
    def prompts(self) -> tuple[str, str]:
        """(put before a query, put before a document): what this provider adds to the text it embeds."""
        return "", ""

    @property
    def loaded(self) -> bool:
        """Whether its model is in memory now (a local model is unloaded when idle); remote ones always are."""
        return True

    @property
    def current(self) -> Embedder:
        """The provider that answers now: itself, or a chain's active member."""
        return self

    def unload_if_idle(self, idle_seconds: float) -> bool:
        """Free the model after this long unused; returns whether it did."""
        return False

    def release_idle_contexts(self, idle_seconds: float) -> bool:
        """Free per-call working memory (model contexts) after this long unused; returns whether it did."""
        return False

    def interrupt(self) -> None:
        """Stop a batch in progress at the next input (the daemon is stopping)."""


def embed_documents(embedder: Embedder, texts: list[str], *, urgent: bool = False) -> np.ndarray:
    """Embed documents; `urgent` (a note a client waits for) goes ahead of batch work where a provider can."""
    return embedder.embed_documents(texts, urgent=urgent)


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
