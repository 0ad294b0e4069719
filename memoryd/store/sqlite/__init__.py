"""The SQLite store: memoryd's embedded default, one file per agent (FTS5, vectors, embedding cache)."""

from memoryd.store.errors import CORRUPT
from memoryd.store.sqlite.access import Access
from memoryd.store.sqlite.cache import EmbeddingCache
from memoryd.store.sqlite.files import Files
from memoryd.store.sqlite.keyword import Keyword, filter_sql


class Store(Files, Keyword, EmbeddingCache, Access):
    """One agent's SQLite index (memoryd.store.interface.MemoryStore)."""

    ranking_cost = 1.0


__all__ = ["CORRUPT", "Store", "filter_sql"]
