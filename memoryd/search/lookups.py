"""The store queries the ranking of changed facts makes: one BM25 query each, not a search's plan (search.keyword)."""

from __future__ import annotations

from memoryd.search.filters import Filters
from memoryd.search.keyword import BM25_WEIGHTS, one_of_each
from memoryd.sources.analyzer import Term, analyze, query_terms
from memoryd.store.interface import MemoryStore
from memoryd.store.rows import ChunkRow, Match


def chunks_naming(store: MemoryStore, name: str, limit: int) -> list[ChunkRow]:
    """Chunks that hold a name's words, best BM25 matches first (search.kinds reads what kind of thing it is from
    them): one query, not a search's plan."""
    terms = query_terms(name)
    if not terms or not store.fts_available:
        return []
    return list(_best(store, one_of_each(store, [[term] for term in terms]), limit).values())


def chunks_holding(
    store: MemoryStore, filters: Filters, words: list[str], names: list[tuple[str, ...]], limit: int
) -> dict[int, ChunkRow]:
    """Chunks that hold one of `words` (as the analyzer makes them) and one of `names` (as written), best BM25
    matches first (search.followup)."""
    phrases = [tuple(analyze(" ".join(name)).body.split()) for name in names]
    named = [Term(phrase) for phrase in dict.fromkeys(phrases) if phrase]
    if not words or not named or not store.fts_available:
        return {}
    # a word as the question's analysis made it: a Thai or Chinese word also by its letters found more of other
    # things than of this one (varied keyword: Thai now 0.83 -> 0.823, Chinese before 0.653 -> 0.647)
    return _best(store, one_of_each(store, [[Term((word,)) for word in words], named]), limit, filters)


def _best(store: MemoryStore, match: Match, limit: int, filters: Filters | None = None) -> dict[int, ChunkRow]:
    """The rows of the chunks a query matches, best BM25 first (one deleted meanwhile is left out)."""
    hits = store.bm25(match, BM25_WEIGHTS, limit, filters)
    rows = store.chunks_by_ids([chunk_id for chunk_id, _ in hits])
    return {chunk_id: rows[chunk_id] for chunk_id, _ in hits if chunk_id in rows}
