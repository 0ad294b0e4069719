"""What each embedding model family wants put before a query and a document, as its makers trained it.

Most retrieval models were trained with a marker on each side ("query: " / "passage: " for E5); without it their
vectors are measurably worse. A GGUF memoryd built says its own prompts (gguf_meta); for any other file the family is
recognised from the GGUF's architecture and name (or the file's name), and for Ollama from the model's name. The
settings `embedding.query_prefix` / `document_prefix` override all of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memoryd.embeddings.models.gguf_meta import DOCUMENT_PREFIX_KEY, QUERY_PREFIX_KEY

_SEARCH_QUERY = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class Family:
    name: str
    query: str
    document: str
    names: tuple[str, ...] = ()  # lowercase pieces of a model's name
    architectures: tuple[str, ...] = ()  # GGUF `general.architecture` values that are this family alone


EMBEDDING_GEMMA = Family(
    "EmbeddingGemma",
    "task: search result | query: ",
    "title: none | text: ",
    ("embeddinggemma", "embedding-gemma"),
    ("gemma-embedding",),
)
_WEB_SEARCH = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
FAMILIES = (
    EMBEDDING_GEMMA,
    Family("Qwen3-Embedding", _WEB_SEARCH, "", ("qwen3-embedding", "qwen3_embedding")),
    Family("E5 instruct", _WEB_SEARCH + " ", "", ("e5-mistral", "e5-large-instruct", "e5-instruct")),
    Family("nomic-embed", "search_query: ", "search_document: ", ("nomic-embed",), ("nomic-bert", "nomic-bert-moe")),
    Family("Arctic Embed 2", "query: ", "", ("arctic-embed-l-v2", "arctic-embed-m-v2", "arctic-embed2")),
    Family("Arctic Embed", _SEARCH_QUERY, "", ("arctic-embed",)),
    Family("mxbai-embed", _SEARCH_QUERY, "", ("mxbai-embed",)),
    Family("E5", "query: ", "passage: ", ("multilingual-e5", "e5-small", "e5-base", "e5-large")),
    Family("BGE-M3", "", "", ("bge-m3",)),
    Family("MiniLM", "", "", ("minilm",)),
)
NONE = Family("unknown", "", "")


def family(architecture: str = "", *names: str) -> Family:
    """The family of a model, from its GGUF architecture, else from the first of its names that tells (most telling
    first: a GGUF's own name before its file's); `NONE` (no prompts) if unknown."""
    for known in FAMILIES:
        if architecture and architecture in known.architectures:
            return known
    for name in (n.lower() for n in names if n):
        for known in FAMILIES:
            if any(piece in name for piece in known.names):
                return known
    return NONE


# What a GGUF's metadata must give to tell its prompts (gguf_meta.read_keys reads them without loading the model).
DESCRIBING_KEYS = {QUERY_PREFIX_KEY, DOCUMENT_PREFIX_KEY, "general.architecture", "general.name", "general.basename"}


def known_prompts(metadata: dict[str, str], path: Path) -> tuple[str, str, str]:
    """(query prompt, document prompt, where they come from) of a GGUF: its own memoryd keys, else its family's."""
    if QUERY_PREFIX_KEY in metadata or DOCUMENT_PREFIX_KEY in metadata:
        return metadata.get(QUERY_PREFIX_KEY, ""), metadata.get(DOCUMENT_PREFIX_KEY, ""), "model file"
    names = (metadata.get("general.name", ""), metadata.get("general.basename", ""), path.name)
    found = family(metadata.get("general.architecture", ""), *names)
    return found.query, found.document, "none" if found is NONE else f"{found.name} family"


def with_settings(
    known: tuple[str, str, str], query_prefix: str | None, document_prefix: str | None
) -> tuple[str, str, str]:
    """The prompts after the settings' `query_prefix` / `document_prefix`, each side overridden only if set."""
    if (query_prefix, document_prefix) == (None, None):
        return known
    query = known[0] if query_prefix is None else query_prefix
    document = known[1] if document_prefix is None else document_prefix
    return query, document, "settings"
