"""The built-in providers' factories, as the registry names them: `(EmbeddingConfig, as_fallback) -> Embedder`."""

from __future__ import annotations

from pathlib import Path

from memoryd.embeddings.base import Embedder, EmbeddingError
from memoryd.embeddings.remote import RetryPolicy, api_key
from memoryd.settings import EmbeddingConfig

DEFAULT_MODELS = {
    "openai": "text-embedding-3-small",
    "gemini": "gemini-embedding-001",
    "voyage": "voyage-3.5-lite",
    "ollama": "nomic-embed-text",
}
KEY_ENV = {"openai": ("OPENAI_API_KEY",), "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "voyage": ("VOYAGE_API_KEY",)}


class ProviderUnavailable(RuntimeError):
    """The provider cannot be used here (no model file, no key, missing package)."""


def hashing(cfg: EmbeddingConfig, as_fallback: bool = False) -> Embedder:
    from memoryd.embeddings.hashing import HashingEmbedder

    return HashingEmbedder(cfg.dims or 256)


def local(cfg: EmbeddingConfig, as_fallback: bool = False) -> Embedder:
    if not Path(cfg.model_path).is_file():
        raise ProviderUnavailable(f"no local model at {cfg.model_path} (run: memoryd model prepare)")
    from memoryd.embeddings.local import LocalEmbedder

    try:
        return LocalEmbedder(
            cfg.model_path,
            cfg.threads or None,
            query_prefix=cfg.query_prefix,
            document_prefix=cfg.document_prefix,
        )
    except (EmbeddingError, OSError) as exc:
        raise ProviderUnavailable(str(exc)) from exc


def _remote(name: str, cls: type, default_base: str, cfg: EmbeddingConfig, as_fallback: bool) -> Embedder:
    model = (cfg.fallback_model if as_fallback else cfg.model) or DEFAULT_MODELS[name]
    base = (cfg.fallback_base_url if as_fallback else cfg.base_url) or default_base
    key = api_key("" if as_fallback else cfg.api_key, *KEY_ENV.get(name, ()))
    if name in KEY_ENV and not key:
        raise ProviderUnavailable(f"{name}: no API key (set {' or '.join(KEY_ENV[name])} or embedding.api_key)")
    return cls(
        model,
        key,
        base,
        dims=cfg.dims,
        timeout=cfg.timeout,
        retries=RetryPolicy(max_retries=cfg.max_retries),
        batch_api=cfg.batch_api,
    )


def openai(cfg: EmbeddingConfig, as_fallback: bool = False) -> Embedder:
    from memoryd.embeddings import openai as module

    return _remote("openai", module.OpenAIEmbedder, module.DEFAULT_BASE, cfg, as_fallback)


def gemini(cfg: EmbeddingConfig, as_fallback: bool = False) -> Embedder:
    from memoryd.embeddings import gemini as module

    return _remote("gemini", module.GeminiEmbedder, module.DEFAULT_BASE, cfg, as_fallback)


def voyage(cfg: EmbeddingConfig, as_fallback: bool = False) -> Embedder:
    from memoryd.embeddings import voyage as module

    return _remote("voyage", module.VoyageEmbedder, module.DEFAULT_BASE, cfg, as_fallback)


def ollama(cfg: EmbeddingConfig, as_fallback: bool = False) -> Embedder:
    """Ollama serves models of every family under their own names: each gets its family's prompts (prompts.py)."""
    from memoryd.embeddings import ollama as module
    from memoryd.embeddings.prompts import NONE, family, with_settings

    embedder = _remote("ollama", module.OllamaEmbedder, module.DEFAULT_BASE, cfg, as_fallback)
    if not isinstance(embedder, module.OllamaEmbedder):
        raise TypeError(f"expected an Ollama embedder, got {type(embedder).__name__}")
    known = family("", embedder.api_model)
    found = (known.query, known.document, "none" if known is NONE else f"{known.name} family")
    if not as_fallback:  # the settings' prefixes are the primary's
        found = with_settings(found, cfg.query_prefix, cfg.document_prefix)
    embedder.use_prompts(*found)
    return embedder
