"""What each embedding model family wants put before a query and a document, as its makers trained it.

Most retrieval models were trained with a marker on each side ("query: " / "passage: " for E5); without it their
vectors are measurably worse. A GGUF memoryd built says its own prompts (gguf_meta); for any other file the family is
recognised from the GGUF's architecture and name (or the file's name), and for Ollama from the model's name. The
settings `embedding.query_prefix` / `document_prefix` override all of it.
"""

from __future__ import annotations

from dataclasses import dataclass

_SEARCH_QUERY = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class Family:
    name: str
    query: str
    document: str
    names: tuple[str, ...] = ()  # lowercase pieces of a model's name
    architectures: tuple[str, ...] = ()  # GGUF `general.architecture` values that are this family alone


FAMILIES = (
    Family(
        "EmbeddingGemma",
        "task: search result | query: ",
        "title: none | text: ",
        ("embeddinggemma", "embedding-gemma"),
        ("gemma-embedding",),
    ),
    Family(
        "Qwen3-Embedding",
        "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
        "",
        ("qwen3-embedding", "qwen3_embedding"),
    ),
    Family("nomic-embed", "search_query: ", "search_document: ", ("nomic-embed",), ("nomic-bert", "nomic-bert-moe")),
    Family("Arctic Embed 2", "query: ", "", ("arctic-embed-l-v2", "arctic-embed-m-v2", "arctic-embed2")),
    Family("Arctic Embed", _SEARCH_QUERY, "", ("arctic-embed",)),
    Family("mxbai-embed", _SEARCH_QUERY, "", ("mxbai-embed",)),
    Family("E5", "query: ", "passage: ", ("multilingual-e5", "e5-small", "e5-base", "e5-large", "e5-mistral")),
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
