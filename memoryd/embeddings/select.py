"""Choose the embedder an agent uses from its configuration."""

from __future__ import annotations

from memoryd.config import AgentConfig
from memoryd.embeddings.base import Embedder
from memoryd.embeddings.hashing import HashingEmbedder


class ProviderUnavailable(RuntimeError):
    """The configured provider cannot be used here (no model, no key, missing package)."""


def create_embedder(agent: AgentConfig) -> tuple[Embedder | None, str | None]:
    """The agent's embedder, or None with the reason why search will be keyword-only."""
    provider = agent.embedding.provider
    if provider == "none":
        return None, "embeddings disabled (provider = none)"
    if provider == "hash":
        return HashingEmbedder(agent.embedding.dims or 256), None
    return None, f"embedding provider {provider!r} is not available"
