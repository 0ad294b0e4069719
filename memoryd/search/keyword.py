"""BM25 keyword search over FTS5: any-term matches ranked, all-term matches boosted."""

from __future__ import annotations

import math
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
# In a large index a term in more than RECRUIT_POSTINGS chunks only scores the chunks that rarer terms found, as in
# MaxScore: ranking every chunk that holds only common terms was most of a keyword search at a million chunks
# (`python -m bench.keyword_scale`: p50 114 -> 41 ms with the three queries side by side, the same top 10 by score on
# 200 of 200 queries). When that finds too little (fewer than `limit` chunks, or a last one scoring below what one
# occurrence of each common term would give), the chunks holding only common terms are ranked as well.
RECRUIT_POSTINGS = 20_000


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: int
    bm25: float  # positive, larger is better, after the all-term boost
    all_terms: bool


def keyword_search(store: Store, query: str, limit: int, filters: Filters | None = None) -> list[KeywordHit]:
    """Up to `limit` chunks matching any query term, best first; never raises on query syntax."""
    if not store.fts_available or limit <= 0:
        return []
    weighed = weighed_terms(store, query_terms(query))
    if not weighed:
        return []
    terms = [t for _, t in weighed]
    recruits = [t for df, t in weighed if df <= RECRUIT_POSTINGS]
    scorers = [(df, t) for df, t in weighed if df > RECRUIT_POSTINGS]
    split = bool(recruits and scorers)
    if split:
        rare = match_expression(recruits, "OR")
        common = match_expression([t for _, t in scorers], "OR")
        expressions = [f"({rare}) AND ({common})", rare]
    else:
        expressions = [match_expression(terms, "OR")]
    if len(terms) > 1:
        expressions.append(match_expression(terms, "AND"))
    found = store.bm25_many(expressions, BM25_WEIGHTS, limit, filters)
    scores = dict(found[1]) if split else {}
    scores.update(found[0])  # with both: a chunk holding rare and common terms takes its whole score
    if split and _too_little(scores, limit, [df for df, _ in scorers], store.chunk_count()):
        scores = dict(store.bm25(match_expression(terms, "OR"), BM25_WEIGHTS, limit, filters))
    complete: set[int] = set()
    if len(terms) > 1:
        for chunk_id, score in found[-1]:
            complete.add(chunk_id)
            scores[chunk_id] = score
    hits = [
        KeywordHit(cid, score * (ALL_TERMS_BOOST if cid in complete else 1.0), cid in complete)
        for cid, score in scores.items()
    ]
    hits.sort(key=lambda h: h.bm25, reverse=True)
    return hits[:limit]


def _too_little(scores: dict[int, float], limit: int, common_frequencies: list[int], chunks: int) -> bool:
    """Whether a chunk holding only the common terms, each once at an average length, would outrank the last of
    the `limit` best chunks the rare terms found (FTS5's BM25 gives such a term about its IDF)."""
    if len(scores) < limit:
        return True
    last = sorted(scores.values(), reverse=True)[limit - 1]
    reach = sum(max(1e-6, math.log((chunks - df + 0.5) / (df + 0.5))) for df in common_frequencies)
    return last < reach


def informative_terms(store: Store, terms: list[Term]) -> list[Term]:
    """Drop terms no chunk contains and, when rarer ones remain, terms too common to weigh much (see
    COMMON_TERM_SHARE); keep at most MAX_SCORED_TERMS, the rarest, in query order."""
    return [t for _, t in weighed_terms(store, terms)]


def weighed_terms(store: Store, terms: list[Term]) -> list[tuple[int, Term]]:
    """`informative_terms`, each with the number of chunks holding it."""
    if not terms:
        return []
    frequencies = store.document_frequencies(t for term in terms for t in term.phrase)

    def frequency(term: Term) -> int:
        body = min(frequencies.get(t, 0) for t in term.phrase)
        # an exact form, or a word's characters, may match what the body does not
        return body if body or not (term.exact or term.grams) else 1

    present = sorted(((frequency(t), i, t) for i, t in enumerate(terms)), key=lambda x: (x[0], x[1]))
    present = [(df, i, t) for df, i, t in present if df > 0]  # rarest first
    chunks = max(store.chunk_count(), 1)
    limit = min(COMMON_TERM_SHARE * chunks, max(LOW_WEIGHT_SHARE * chunks, COSTLY_POSTINGS))
    rare = [(df, i, t) for df, i, t in present if df <= limit]
    if len(rare) < MIN_KEPT_TERMS and len(rare) < len(present):
        rare = present[:MIN_KEPT_TERMS]
    return [(df, t) for df, _, t in sorted(rare[:MAX_SCORED_TERMS], key=lambda x: x[1])]
