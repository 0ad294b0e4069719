"""Choose the embedder an agent uses from its configuration."""

from __future__ import annotations

from pathlib import Path

from memoryd.config import AgentConfig
from memoryd.embeddings.base import Embedder, EmbeddingError
from memoryd.embeddings.hashing import HashingEmbedder


def _local(agent: AgentConfig) -> Embedder:
    from memoryd.embeddings.local import LocalEmbedder

    return LocalEmbedder(agent.embedding.model_path)


def create_embedder(agent: AgentConfig) -> tuple[Embedder | None, str | None]:
    """The agent's embedder, or None with the reason why search will be keyword-only."""
    cfg = agent.embedding
    provider = cfg.provider
    if provider == "none":
        return None, "embeddings disabled (provider = none)"
    if provider == "hash":
        return HashingEmbedder(cfg.dims or 256), None
    if provider in ("local", "auto"):
        if not Path(cfg.model_path).is_file():
            return None, f"no local model at {cfg.model_path} (run: memoryd model prepare)"
        try:
            return _local(agent), None
        except (EmbeddingError, OSError) as exc:
            return None, str(exc)
    return None, f"embedding provider {provider!r} is not available"
