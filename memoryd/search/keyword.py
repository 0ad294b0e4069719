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
# Terms in more than half of the chunks get no weight from FTS5's BM25 (negative IDF, clamped to 1e-6) but cost
# most of the query time: dropped. Terms in more than a fifth carry little (IDF below 1.4) and are dropped too,
# but only once their posting lists are long enough to dominate the query (FTS5 spends about 0.8 µs ranking each
# matching row here): in a smaller index they are often words that matter (`python -m bench.keyword_terms`: always
# dropping them cost XQuAD Vietnamese keyword MRR@10 0.924 -> 0.864, LoCoMo turn R@5 0.883 -> 0.876), and at a
# million chunks keeping them makes keyword p50 113 -> 140 ms for a top 10 that is 0.975 the same.
COMMON_TERM_SHARE = 0.5
LOW_WEIGHT_SHARE = 0.2
COSTLY_POSTINGS = 50_000
MIN_KEPT_TERMS = 4
# Long questions keep their rarest terms only: on SciFact, 12 terms keep nDCG@10 (0.6882 vs 0.6875 with all)
# and make a 100k-chunk keyword search 15% faster (10 terms: 25% faster, but hybrid nDCG@10 -0.0016).
MAX_SCORED_TERMS = 12


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
    terms = informative_terms(store, query_terms(query))
    if not terms:
        return []
    scores = dict(_run(store, match_expression(terms, "OR"), limit, filters))
    complete: set[int] = set()
    if len(terms) > 1:
        for chunk_id, score in _run(store, match_expression(terms, "AND"), limit, filters):
            complete.add(chunk_id)
            scores[chunk_id] = score
    hits = [
        KeywordHit(cid, score * (ALL_TERMS_BOOST if cid in complete else 1.0), cid in complete)
        for cid, score in scores.items()
    ]
    hits.sort(key=lambda h: h.bm25, reverse=True)
    return hits[:limit]


def informative_terms(store: Store, terms: list[Term]) -> list[Term]:
    """Drop terms no chunk contains and, when rarer ones remain, terms too common to weigh much (see
    COMMON_TERM_SHARE); keep at most MAX_SCORED_TERMS, the rarest, in query order."""
    if not terms:
        return terms
    frequencies = store.document_frequencies(t for term in terms for t in term.phrase)

    def frequency(term: Term) -> int:
        body = min(frequencies.get(t, 0) for t in term.phrase)
        # an exact form, or a word's characters, may match what the body does not
        return body if body or not (term.exact or term.grams) else 1

    present = sorted(((frequency(t), i, t) for i, t in enumerate(terms)), key=lambda x: (x[0], x[1]))
    present = [(df, i, t) for df, i, t in present if df > 0]  # rarest first
    chunks = max(store.chunk_count(), 1)
    limit = min(COMMON_TERM_SHARE * chunks, max(LOW_WEIGHT_SHARE * chunks, COSTLY_POSTINGS))
    rare = [(i, t) for df, i, t in present if df <= limit]
    if len(rare) < MIN_KEPT_TERMS and len(rare) < len(present):
        rare = [(i, t) for _, i, t in present[:MIN_KEPT_TERMS]]
    return [t for _, t in sorted(rare[:MAX_SCORED_TERMS], key=lambda pair: pair[0])]
