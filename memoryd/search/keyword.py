"""BM25 keyword search over FTS5: any-term matches ranked, all-term matches boosted."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from memoryd.search.filters import Filters
from memoryd.sources.analyzer import Term, match_expression, phrase_hits, query_terms
from memoryd.store.interface import MemoryStore
from memoryd.store.rows import Match, Phrase

# Column weights for bm25(): body, exact forms (identifiers, accented words), heading path, characters of
# unspaced scripts.
BM25_WEIGHTS = (1.0, 0.25, 1.0, 0.5)
ALL_TERMS_BOOST = 1.25
# Terms in more than half of the chunks get no weight from FTS5's BM25 (negative IDF, clamped to 1e-6) but cost
# most of the query time: dropped. Terms in more than a fifth carry little (IDF below 1.4) and are dropped too,
# but only once their posting lists are long enough to dominate the query (FTS5 spends about 0.8 µs ranking each
# matching row here): in a smaller index they are often words that matter (`python -m research.keyword_terms`: always
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
# (`python -m research.keyword_scale`: p50 114 -> 41 ms with the three queries side by side, the same top 10 by score on
# 200 of 200 queries). When that finds too little (fewer than `limit` chunks, or a last one scoring below what one
# occurrence of each common term would give), the chunks holding only common terms are ranked as well.
RECRUIT_POSTINGS = 20_000
# A store that ranks rows dearly (PostgreSQL's BM25 in SQL) lets fewer terms recruit, down to those in 2% of the
# chunks: PostgreSQL at 7,332 SciFact chunks was fastest recruiting terms in up to 500 of them (231 -> 37 ms p50),
# at 100,000 synthetic ones up to 2,000 (354 -> 40 ms); the same top 10 on every query at both.
RECRUIT_SHARE = 0.02
# When the chunks holding every term fill the `limit` (likely for a short query of common words), the last of
# them bounds what the others must score: terms too weak to reach it together only score (MaxScore), with their
# IDF known in advance and FTS5's k1. A margin covers a count read just before a write.
FTS5_K1 = 1.2
CEILING_MARGIN = 1.05


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: int
    bm25: float  # positive, larger is better, after the all-term boost
    all_terms: bool


@dataclass(frozen=True)
class _Plan:
    """Which chunks a search ranks beside those holding every term: the chunks holding a recruit, scored on the
    scorers too where they hold one; with `alone`, also those holding recruits only. `exact` when no chunk left out
    can outrank the last one kept; otherwise `_too_little` checks the chunks holding only scorers."""

    recruits: list[Term]
    scorers: list[Term]
    alone: bool
    exact: bool

    def queries(self, terms: list[Term], frequencies: Mapping[str, int]) -> list[Match]:
        """Its FTS5 queries, the paired one (recruits and scorers) first; none that would repeat the all-terms one."""
        if not self.recruits:
            return []
        rare = match_expression(self.recruits, "OR")
        out = []
        if self.scorers and len(terms) > 2:
            paired = f"({rare}) AND ({match_expression(self.scorers, 'OR')})"
            out.append(_match(paired, [self.recruits, self.scorers], frequencies))
        if self.alone or not self.scorers:
            out.append(_match(rare, [self.recruits], frequencies))
        return out


def keyword_search(
    store: MemoryStore, query: str, limit: int, filters: Filters | None = None, terms: list[Term] | None = None
) -> list[KeywordHit]:
    """Up to `limit` chunks matching any query term, best first; never raises on query syntax. `terms`: the
    query's, when the caller has analysed it already."""
    if not store.fts_available or limit <= 0:
        return []
    weighed = weighed_terms(store, query_terms(query) if terms is None else terms)
    if not weighed:
        return []
    terms = [t for _, t in weighed]
    chunks = max(store.chunk_count(), 1)
    frequencies = store.document_frequencies(t for term in terms for t in term.phrase)
    every = _match(match_expression(terms, "AND"), [[t] for t in terms], frequencies) if len(terms) > 1 else None
    complete: list[tuple[int, float]] | None = None
    plan = None
    if every is not None and _expected_complete(weighed, chunks) >= limit:
        complete = store.bm25(every, BM25_WEIGHTS, limit, filters)
        if len(complete) >= limit:
            plan = _bounded_plan(weighed, complete[limit - 1][1] * ALL_TERMS_BOOST, chunks)
    if plan is None:
        plan = _frequency_plan(weighed, store.ranking_cost, chunks)
    queries = plan.queries(terms, frequencies)
    if every is not None and complete is None:
        queries.append(every)
    found = store.bm25_many(queries, BM25_WEIGHTS, limit, filters) if queries else []
    if every is not None and complete is None:
        complete = found.pop()
    scores = _whole_scores(found)
    if plan.scorers and len(terms) == 2 and complete:
        scores.update(complete)  # for two terms the paired query is the all-terms one
    if not plan.exact and _too_little(scores, limit, [df for df, t in weighed if t in plan.scorers], chunks):
        scores = _widened(store, weighed, terms, frequencies, scores, limit, filters, chunks)
    ranked = dict.fromkeys(scores, 1.0)
    for chunk_id, score in complete or ():
        ranked[chunk_id] = ALL_TERMS_BOOST
        scores[chunk_id] = score
    hits = [KeywordHit(cid, score * ranked[cid], ranked[cid] > 1.0) for cid, score in scores.items()]
    hits.sort(key=lambda h: h.bm25, reverse=True)
    return hits[:limit]


def _whole_scores(parts: list[list[tuple[int, float]]], scores: dict[int, float] | None = None) -> dict[int, float]:
    """The rankings of a plan's queries as one, over `scores`: a chunk the paired query (the first) found has its whole
    score there, where the query of recruits alone scored only those."""
    whole = dict(scores or {})
    for part in reversed(parts):
        whole.update(part)
    return whole


def _widened(
    store: MemoryStore,
    weighed: list[tuple[int, Term]],
    terms: list[Term],
    frequencies: Mapping[str, int],
    scores: dict[int, float],
    limit: int,
    filters: Filters | None,
    chunks: int,
) -> dict[int, float]:
    """The rare terms found too little: the chunks holding only the commoner ones are ranked too. Once `limit` chunks
    are scored, the last of them bounds what the others must reach, so the terms too weak to reach it together only
    score (MaxScore, `_bounded_plan`): the same page as ranking every chunk that holds any term, which on PostgreSQL
    ranked tens of thousands of chunks (0.3 s at 100k for "In adult tissue, most T cells are memory T cells.")."""
    if len(scores) >= limit:
        plan = _bounded_plan(weighed, sorted(scores.values(), reverse=True)[limit - 1], chunks)
        if plan.scorers:
            found = store.bm25_many(plan.queries(terms, frequencies), BM25_WEIGHTS, limit, filters)
            return _whole_scores(found, scores)
    anything = _match(match_expression(terms, "OR"), [terms], frequencies)
    return dict(store.bm25(anything, BM25_WEIGHTS, limit, filters))


def keyword_evidence(store: MemoryStore, terms: list[Term], hits: list[KeywordHit]) -> float | None:
    """How much of the query the best keyword hit holds: its BM25 over what a chunk holding each query term once
    would score (the sum of their IDFs; a term no chunk holds counts at the highest IDF there is). About 1 or more
    when the hit holds the query; near 0 when it shares only a name or a stray syllable with it, as a question in
    another language does. None without hits: there is no keyword ranking to weigh."""
    if not hits:
        return None
    chunks = max(store.chunk_count(), 1)
    frequencies = store.document_frequencies(t for term in terms for t in term.phrase)
    whole = 0.0
    for term in terms:
        df = min(frequencies.get(t, 0) for t in term.phrase)
        whole += max(1e-6, bm25_idf(df, chunks))
    return hits[0].bm25 / whole if whole > 0 else 0.0


def bm25_idf(df: int, chunks: int) -> float:
    """BM25's inverse document frequency of a token `df` of `chunks` chunks hold (negative past half of them)."""
    return math.log((max(chunks - df, 0) + 0.5) / (df + 0.5))  # counts read apart may say df > chunks


def one_of_each(store: MemoryStore, groups: list[list[Term]]) -> Match:
    """The chunks that hold a term of every group, as every store takes the query."""
    frequencies = store.document_frequencies(t for group in groups for term in group for t in term.phrase)
    return _match(" AND ".join(f"({match_expression(group, 'OR')})" for group in groups), groups, frequencies)


def _match(expression: str, groups: list[list[Term]], frequencies: Mapping[str, int]) -> Match:
    """A keyword query as every store takes it: the FTS5 expression (its terms in group order) and its groups of
    phrases (a chunk must hold a phrase of every group)."""
    terms = [t for group in groups for t in group]
    phrased = tuple(tuple(p for t in group for p in term_phrases(t, frequencies)) for group in groups)
    return Match(expression, phrase_hits(terms, frequencies), phrased)


def term_phrases(term: Term, frequencies: Mapping[str, int]) -> tuple[Phrase, ...]:
    """The phrases of a term, as `term_expression` writes them: its words anywhere (or, for a word of an unspaced
    script, in the body and heading, or its characters in the grams column), or any exact form."""
    lone = len(term.phrase) == 1 and term.phrase[0] in frequencies
    if term.grams:
        return (Phrase(term.phrase, (0, 2)), Phrase(term.grams, (3,)))
    words = Phrase(term.phrase, (), frequencies[term.phrase[0]] if lone else -1)
    return (words, *(Phrase((e,), (1,)) for e in term.exact))


def _frequency_plan(weighed: list[tuple[int, Term]], ranking_cost: float = 1.0, chunks: int = 0) -> _Plan:
    """Terms in more than RECRUIT_POSTINGS chunks score what rarer terms recruit (when there are rarer ones).
    Where ranking a row costs the store more than it costs FTS5, fewer terms recruit, but never fewer than those
    in RECRUIT_SHARE of the chunks: past that, chunks holding only the commoner terms are too likely to reach the
    page (`_too_little`), and ranking them all costs more than it saved."""
    limit = min(RECRUIT_POSTINGS, max(RECRUIT_POSTINGS / max(ranking_cost, 1.0), RECRUIT_SHARE * chunks))
    recruits = [t for df, t in weighed if df <= limit]
    if not recruits:
        return _Plan([t for _, t in weighed], [], alone=True, exact=True)
    scorers = [t for df, t in weighed if df > limit]
    return _Plan(recruits, scorers, alone=True, exact=not scorers)


def _bounded_plan(weighed: list[tuple[int, Term]], bound: float, chunks: int) -> _Plan:
    """MaxScore against the last of the chunks holding every term: the terms whose ceilings add up to less than
    `bound` only score, as no chunk holding nothing else can reach it; and chunks holding no such term are ranked
    only if the other terms' ceilings together can reach it. Exact: no chunk left out can take a place."""
    ceilings = [_ceiling(df, t, chunks) for df, t in weighed]
    scoring: set[int] = set()
    reach = 0.0
    for i in sorted(range(len(weighed)), key=ceilings.__getitem__):
        if reach + ceilings[i] >= bound:
            break
        reach += ceilings[i]
        scoring.add(i)
    recruits = [t for i, (_, t) in enumerate(weighed) if i not in scoring]
    scorers = [t for i, (_, t) in enumerate(weighed) if i in scoring]
    alone = sum(c for i, c in enumerate(ceilings) if i not in scoring) >= bound
    return _Plan(recruits, scorers, alone=alone, exact=True)


def _ceiling(df: int, term: Term, chunks: int) -> float:
    """The most a term can add to a chunk's bm25(): its IDF x (k1 + 1), whatever its frequency and the chunk's
    length. Only a single token's IDF is known beforehand (an exact form's or a phrase's is not): the others
    have none."""
    if term.exact or term.grams or len(term.phrase) != 1:
        return math.inf
    return (FTS5_K1 + 1) * max(1e-6, math.log((chunks - df + 0.5) / (df + 0.5))) * CEILING_MARGIN


def _expected_complete(weighed: list[tuple[int, Term]], chunks: int) -> float:
    """How many chunks would hold every term if terms fell independently (co-occurring terms make it more)."""
    expected = float(chunks)
    for df, _ in weighed:
        expected *= df / chunks
    return expected


def _too_little(scores: dict[int, float], limit: int, common_frequencies: list[int], chunks: int) -> bool:
    """Whether a chunk holding only the common terms, each once at an average length, would outrank the last of
    the `limit` best chunks the rare terms found (FTS5's BM25 gives such a term about its IDF)."""
    if len(scores) < limit:
        return True
    last = sorted(scores.values(), reverse=True)[limit - 1]
    reach = sum(max(1e-6, math.log((chunks - df + 0.5) / (df + 0.5))) for df in common_frequencies)
    return last < reach


def informative_terms(store: MemoryStore, terms: list[Term]) -> list[Term]:
    """Drop terms no chunk contains and, when rarer ones remain, terms too common to weigh much (see
    COMMON_TERM_SHARE); keep at most MAX_SCORED_TERMS, the rarest, in query order."""
    return [t for _, t in weighed_terms(store, terms)]


def weighed_terms(store: MemoryStore, terms: list[Term]) -> list[tuple[int, Term]]:
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
