"""Choose an agent's embedder from its configuration, with an optional fallback provider."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from memoryd.embeddings.base import Embedder, EmbeddingError, embed_documents
from memoryd.embeddings.builtin import KEY_ENV, ProviderUnavailable
from memoryd.embeddings.registry import factory, provider_names
from memoryd.embeddings.remote import api_key
from memoryd.settings import AgentConfig, EmbeddingConfig

AUTO_ORDER = ("local", "openai", "gemini", "voyage")


def build_provider(name: str, cfg: EmbeddingConfig, *, as_fallback: bool = False) -> Embedder:
    """One provider by name, from the registry; raises ProviderUnavailable with the reason."""
    try:
        make = factory(name)
    except KeyError:
        raise ProviderUnavailable(
            f"unknown embedding provider {name!r} (known: {', '.join(provider_names())})"
        ) from None
    except ImportError as exc:
        raise ProviderUnavailable(f"embedding provider {name!r} cannot be loaded: {exc}") from None
    made = make(cfg, as_fallback)
    if not isinstance(made, Embedder):
        raise ProviderUnavailable(
            f"embedding provider {name!r} made a {type(made).__name__}, which does not derive from"
            " memoryd.embeddings.base.Embedder"
        )
    return made


def resolve_auto(cfg: EmbeddingConfig) -> str | None:
    """auto: the local model if it is there, else the first remote provider with a key."""
    if Path(cfg.model_path).is_file():
        return "local"
    for name in AUTO_ORDER[1:]:
        if api_key(cfg.api_key, *KEY_ENV[name]):
            return name
    return None


class ProviderChain(Embedder):
    """A primary provider and its fallbacks. A document-embedding failure moves to the next provider (the
    index then needs a reindex in the new vector space); a failed query only degrades that query."""

    retry_primary_seconds = 600.0  # how often a fallen-back chain checks whether the primary is back

    def __init__(self, providers: list[Embedder]) -> None:
        self.providers = providers
        self.active = 0
        self.fallback_reason: str | None = None
        self._failed_at = 0.0

    @property
    def current(self) -> Embedder:
        return self.providers[self.active]

    @property
    def provider(self) -> str:  # type: ignore[override]  # read-only: the active provider's
        return self.current.provider

    @property
    def model(self) -> str:  # type: ignore[override]  # read-only: the active provider's
        return self.current.model

    @property
    def dims(self) -> int:  # type: ignore[override]  # read-only: the active provider's
        return self.current.dims

    @property
    def key_fingerprint(self) -> str:  # type: ignore[override]  # read-only: the active provider's
        return self.current.key_fingerprint

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        self._maybe_return_to_primary()
        try:
            return embed_documents(self.current, texts, urgent=urgent)
        except EmbeddingError as exc:
            if self.active + 1 < len(self.providers):
                failed = self.current.provider
                self.active += 1
                self._failed_at = time.monotonic()
                self.fallback_reason = f"{failed} failed ({exc}); now using {self.current.provider}"
            raise

    def _maybe_return_to_primary(self) -> None:
        """Every retry_primary_seconds on a fallback, probe the primary; when it answers, switch back. The
        switch is raised as an error so that no vectors of two spaces mix: the index is then rebuilt."""
        if self.active == 0 or time.monotonic() - self._failed_at < self.retry_primary_seconds:
            return
        self._failed_at = time.monotonic()
        primary = self.providers[0]
        try:
            primary.embed_query("memoryd: is the primary provider back?")
        except EmbeddingError:
            return
        left = self.current.provider
        self.active = 0
        self.fallback_reason = f"{primary.provider} is back (was using {left}); reindexing for it"
        raise EmbeddingError(f"{primary.provider} recovered: switching back from {left}")

    def embed_query(self, text: str) -> np.ndarray:
        return self.current.embed_query(text)

    @property
    def loaded(self) -> bool:
        return self.current.loaded

    @property
    def last_batch_error(self) -> str | None:  # type: ignore[override]  # read-only: the active provider's
        return self.current.last_batch_error

    def unload_if_idle(self, idle_seconds: float) -> bool:
        return any([provider.unload_if_idle(idle_seconds) for provider in self.providers])  # every one of them

    def release_idle_contexts(self, idle_seconds: float) -> bool:
        return any([provider.release_idle_contexts(idle_seconds) for provider in self.providers])

    def interrupt(self) -> None:
        for provider in self.providers:
            provider.interrupt()

    def close(self) -> None:
        for provider in self.providers:
            provider.close()


def create_embedder(agent: AgentConfig) -> tuple[Embedder | None, str | None]:
    """The agent's embedder (None: keyword-only) and a note on any provider that could not be used."""
    cfg = agent.embedding
    if cfg.provider == "none":
        return None, "embeddings disabled (provider = none)"
    primary = resolve_auto(cfg) if cfg.provider == "auto" else cfg.provider
    chain: list[Embedder] = []
    reasons: list[str] = []
    if primary is None:
        reasons.append("no local model and no API key (run: memoryd model prepare)")
    else:
        try:
            chain.append(build_provider(primary, cfg))
        except ProviderUnavailable as exc:
            reasons.append(str(exc))
    if cfg.fallback not in ("none", "", primary):
        try:
            fallback = resolve_auto(cfg) if cfg.fallback == "auto" else cfg.fallback
            if fallback and fallback != primary:
                chain.append(build_provider(fallback, cfg, as_fallback=True))
        except ProviderUnavailable as exc:
            reasons.append(f"fallback: {exc}")
    if not chain:
        return None, "; ".join(reasons)
    return (chain[0] if len(chain) == 1 else ProviderChain(chain)), "; ".join(reasons) or None
