"""BM25 keyword search over FTS5: any-term matches ranked, all-term matches boosted."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.index.store import Store
from memoryd.search.filters import Filters
from memoryd.sources.analyzer import Term, match_expression, query_terms

# Column weights for bm25(): body, exact forms (identifiers, accented words), heading path, characters of
# unspaced scripts.
BM25_WEIGHTS = (1.0, 0.25, 1.0, 0.5)
ALL_TERMS_BOOST = 1.25
# Terms in more than this share of chunks add almost nothing to BM25 but cost most of the query time.
COMMON_TERM_SHARE = 0.2
MIN_KEPT_TERMS = 4
# Long questions keep their rarest terms only: on SciFact, 12 terms keep nDCG@10 (0.6882 vs 0.6875 with all)
# and make a 100k-chunk keyword search 15% faster (10 terms: 25% faster, but hybrid nDCG@10 -0.0016).
MAX_SCORED_TERMS = 12


# An any-term query scores every chunk that holds any of its terms, so its cost is the postings of its terms: at
# a million chunks a few common words make that a large part of the index. Past this many postings, chunks are
# gathered by the rarer terms alone (RESCORED x limit of them) and each gathered chunk is then scored with every
# term, by rowid. A chunk missed that way holds none of the rare terms, so it ranks low anyway.
GATHER_POSTINGS = 40_000
RESCORED = 4


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: int
    bm25: float  # positive, larger is better, after the all-term boost
    all_terms: bool


def _run(store: Store, expression: str, limit: int, filters: Filters | None) -> list[tuple[int, float]]:
    return store.bm25(expression, BM25_WEIGHTS, limit, filters)


def keyword_search(store: Store, query: str, limit: int, filters: Filters | None = None) -> list[KeywordHit]:
    """Up to `limit` chunks matching any query term, best first; never raises on query syntax."""
    if not store.fts_available or limit <= 0:
        return []
    weighed = _informative(store, query_terms(query))
    terms = [t for t, _ in weighed]
    if not terms:
        return []
    gathering = _gathering_terms(weighed)
    if gathering is not None:
        pool = [cid for cid, _ in _run(store, match_expression(gathering, "OR"), limit * RESCORED, filters)]
        return _score_ids(store, terms, pool)[:limit]
    scores = dict(_run(store, match_expression(terms, "OR"), limit, filters))
    complete: set[int] = set()
    if len(terms) > 1:
        for chunk_id, score in _run(store, match_expression(terms, "AND"), limit, filters):
            complete.add(chunk_id)
            scores[chunk_id] = score
    return _hits(scores, complete)[:limit]


def keyword_scores(store: Store, query: str, ids: list[int]) -> list[KeywordHit]:
    """The keyword score `keyword_search` would give each of these chunks, for those the query matches at all:
    so a chunk found by meaning alone is not scored as if it shared no word with the query."""
    if not store.fts_available or not ids:
        return []
    terms = informative_terms(store, query_terms(query))
    return _score_ids(store, terms, ids) if terms else []


def _gathering_terms(weighed: list[tuple[Term, int]]) -> list[Term] | None:
    """The rarest terms whose postings fit GATHER_POSTINGS (at least one), in query order; None when all fit."""
    if sum(df for _, df in weighed) <= GATHER_POSTINGS or len(weighed) < 2:
        return None
    kept: list[int] = []
    total = 0
    for i in sorted(range(len(weighed)), key=lambda i: weighed[i][1]):
        if kept and total + weighed[i][1] > GATHER_POSTINGS:
            break
        kept.append(i)
        total += weighed[i][1]
    return [weighed[i][0] for i in sorted(kept)]


def _score_ids(store: Store, terms: list[Term], ids: list[int]) -> list[KeywordHit]:
    scores = store.bm25_of(match_expression(terms, "OR"), BM25_WEIGHTS, ids)
    complete: set[int] = set()
    if len(terms) > 1 and scores:
        complete = set(store.bm25_of(match_expression(terms, "AND"), BM25_WEIGHTS, list(scores)))
    return _hits(scores, complete)


def _hits(scores: dict[int, float], complete: set[int]) -> list[KeywordHit]:
    hits = [
        KeywordHit(cid, score * (ALL_TERMS_BOOST if cid in complete else 1.0), cid in complete)
        for cid, score in scores.items()
    ]
    hits.sort(key=lambda h: h.bm25, reverse=True)
    return hits


def informative_terms(store: Store, terms: list[Term]) -> list[Term]:
    """Drop terms no chunk contains and, when rarer ones remain, terms most chunks contain; keep at most
    MAX_SCORED_TERMS, the rarest, in query order."""
    return [t for t, _ in _informative(store, terms)]


def _informative(store: Store, terms: list[Term]) -> list[tuple[Term, int]]:
    """`informative_terms`, each with how many chunks hold it."""
    if not terms:
        return []
    frequencies = store.document_frequencies(t for term in terms for t in term.phrase)

    def frequency(term: Term) -> int:
        body = min(frequencies.get(t, 0) for t in term.phrase)
        # an exact form, or a word's characters, may match what the body does not
        return body if body or not (term.exact or term.grams) else 1

    present = sorted(((frequency(t), i, t) for i, t in enumerate(terms)), key=lambda x: (x[0], x[1]))
    present = [(df, i, t) for df, i, t in present if df > 0]  # rarest first
    limit = COMMON_TERM_SHARE * max(store.chunk_count(), 1)
    rare = [(df, i, t) for df, i, t in present if df <= limit]
    if len(rare) < MIN_KEPT_TERMS and len(rare) < len(present):
        rare = present[:MIN_KEPT_TERMS]
    return [(t, df) for df, _, t in sorted(rare[:MAX_SCORED_TERMS], key=lambda x: x[1])]
