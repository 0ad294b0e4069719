"""The SQLite store: memoryd's embedded default, one file per agent (FTS5, vectors, embedding cache)."""

import apsw

from memoryd.index.sqlite.access import Access
from memoryd.index.sqlite.cache import EmbeddingCache
from memoryd.index.sqlite.files import Files
from memoryd.index.sqlite.keyword import Keyword, filter_sql

CORRUPT = (apsw.CorruptError, apsw.NotADBError)  # an index file that cannot be read: set aside and rebuilt


class Store(Files, Keyword, EmbeddingCache, Access):
    """One agent's SQLite index (memoryd.index.interface.MemoryStore)."""

    ranking_cost = 1.0


__all__ = ["CORRUPT", "Store", "filter_sql"]
