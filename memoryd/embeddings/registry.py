"""Embedding providers by name. The built-in ones are listed here; others plug in through the Python entry-point
group `memoryd.embeddings` (as llm's plugins do), each naming a factory `(EmbeddingConfig, as_fallback) -> Embedder`,
the Embedder a subclass of memoryd.embeddings.base.Embedder:

    [project.entry-points."memoryd.embeddings"]
    mycloud = "memoryd_mycloud:provider"

Then `provider = "mycloud"` in an agent's [agents.embedding] table selects it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoryd.embeddings.base import Embedder

GROUP = "memoryd.embeddings"
# (memoryd.settings.EmbeddingConfig, as_fallback) -> Embedder; the settings validate names against this registry
ProviderFactory = Callable[[Any, bool], "Embedder"]

BUILTIN = {
    "hash": "memoryd.embeddings.builtin:hashing",
    "local": "memoryd.embeddings.builtin:local",
    "openai": "memoryd.embeddings.builtin:openai",
    "gemini": "memoryd.embeddings.builtin:gemini",
    "voyage": "memoryd.embeddings.builtin:voyage",
    "ollama": "memoryd.embeddings.builtin:ollama",
}
SPECIAL = ("auto", "none")  # not providers: "pick one" and "keyword search only"


@lru_cache(maxsize=1)
def _plugins() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=GROUP) if ep.name not in BUILTIN}


def provider_names() -> tuple[str, ...]:
    """Every name a config may use: auto, none, the built-ins and the installed plugins."""
    return (*SPECIAL, *BUILTIN, *sorted(_plugins()))


def factory(name: str) -> ProviderFactory:
    """The factory registered under `name` (imported on first use); KeyError for an unknown name."""
    target = BUILTIN.get(name) or _plugins()[name]
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
