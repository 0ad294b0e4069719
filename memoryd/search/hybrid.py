"""Hybrid search: keyword and vector candidates, fused, thresholded, with snippets and citations."""

from __future__ import annotations

import copy
import datetime as dt
import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, fields, replace
from typing import Any, cast

import numpy as np

from memoryd.config import QueryConfig
from memoryd.embeddings.base import Embedder, EmbeddingError, clean_vectors
from memoryd.search.accents import restorable, restore_accents
from memoryd.search.asked_time import boost_asked_time
from memoryd.search.background import background_vectors, padded
from memoryd.search.currency import CONSIDERED, rerank
from memoryd.search.filters import FilterError, Filters
from memoryd.search.focus import most_about
from memoryd.search.fusion import Candidate, fuse, vector_margin
from memoryd.search.keyword import KeywordHit, keyword_evidence, keyword_search
from memoryd.search.kinds import NameKinds
from memoryd.search.lookups import chunks_holding, chunks_naming
from memoryd.search.ranking import Explained, access_factor, decay_factor, importance_factor, mmr, similarities
from memoryd.search.regions import Region, group_regions
from memoryd.search.results import SearchResult, materialise
from memoryd.search.statements import event_words, words_of
from memoryd.search.temporal import parse_time
from memoryd.search.windows import blend_windows
from memoryd.sources.analyzer import query_terms
from memoryd.store.interface import MemoryStore
from memoryd.store.rows import ChunkRow
from memoryd.store.vectors import Vectors, VectorScan
from memoryd.threads import lasting_pool
from memoryd_client.protocol.schema import Search
from memoryd_client.protocol.validation import InvalidParams, request

MAX_QUERY_CHARS = 8192
QUERY_CACHE_SIZE = 256
RESTORE_FROM = 20  # keyword hits whose words an unmarked query's marks are taken from
# Threads that work out searches' vector sides (memoryd.threads): as many as the daemon answers searches at once
# (its RPC workers). With a thread started per search, PostgreSQL forked a server process for each and the
# nearest-neighbour query took ~30 ms instead of ~8 at 100k chunks.
QUERY_VECTOR_THREADS = 8

VectorState = Callable[[], tuple[Embedder | None, str | None]]


class SearchError(ValueError):
    """The search request itself is invalid."""


@dataclass
class SearchResponse:
    results: list[SearchResult]
    mode: str
    provider: str | None
    model: str | None
    took_ms: float
    fusion: str
    degraded: str | None = None
    restored_query: str | None = None  # the query as embedded, with the diacritics the notes use put back
    partial: bool = False  # some chunks have no vector yet (the index is still embedding): they match by keyword
    embedded: str | None = None  # "n/m" chunks embedded, when partial
    # how clearly the index answers the query (automatic recall weighs it; not part of a search reply)
    evidence: float | None = None  # keyword_evidence of the best keyword hit
    vector_margin: float | None = None  # fusion.vector_margin

    def as_dict(self) -> dict[str, Any]:
        """The reply's fields (`dataclasses.asdict`'s deep copy of every value was a tenth of a keyword search)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _RESPONSE_FIELDS}
        out["results"] = [_result_dict(result) for result in self.results]
        return out


_RESPONSE_FIELDS = tuple(f.name for f in fields(SearchResponse) if f.name not in ("evidence", "vector_margin"))
_RESULT_FIELDS = tuple(f.name for f in fields(SearchResult) if f.name != "chunk_id")


def _result_dict(result: SearchResult) -> dict[str, Any]:
    out = {name: getattr(result, name) for name in _RESULT_FIELDS}
    if out["explain"] is None:
        del out["explain"]
    else:
        out["explain"] = copy.deepcopy(out["explain"])
    if out["superseded"] is None:
        del out["superseded"]
    return out


def _check(query: str) -> str:
    """What the schema cannot say of a query: that it holds words, and not too many."""
    query = query.strip()
    if not query:
        raise SearchError("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchError(f"query is longer than {MAX_QUERY_CHARS} characters")
    return query


IDF_CHUNKS = 2  # in an index of this many chunks or fewer, a word one of them holds weighs nothing (BM25 IDF <= 0)


@dataclass
class Gathered:
    candidates: list[Candidate]
    has_vector: bool
    has_text: bool
    embedder: Embedder | None
    degraded: str | None
    vector_scan: VectorScan | None = None
    restored_query: str | None = None  # what the vector side embedded, when marks were put back
    evidence: float | None = None  # how much of the query the best keyword hit holds (keyword_evidence)


class SearchEngine:
    def __init__(self, store: MemoryStore, settings: QueryConfig, vectors: Vectors, vector_state: VectorState) -> None:
        self.store = store
        self.settings = settings
        self.vectors = vectors
        self.vector_state = vector_state
        self._query_vectors: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()
        self._query_lock = threading.Lock()
        # not a bound method: the engine and its profiles would hold each other, and the store past a reindex
        self.name_kinds = NameKinds(functools.partial(chunks_naming, store))

    def query_vector(self, query: str) -> tuple[Embedder, np.ndarray] | None:
        """The embedder and the query's vector (cached as searches cache it), or None with no vector side."""
        embedder, _ = self.vector_state()
        if embedder is None:
            return None
        return embedder, self._embed_query(embedder, query)

    def _embed_query(self, embedder: Embedder, query: str) -> np.ndarray:
        """The query's vector, from a small LRU cache: agents repeat their queries, and a local model spends
        most of a hybrid search's time embedding the query."""
        key = _query_key(embedder, query)
        with self._query_lock:
            cached = self._query_vectors.get(key)
            if cached is not None:
                self._query_vectors.move_to_end(key)
                return cached
        vector = clean_vectors(embedder.embed_query(query), embedder.dims)[0]
        with self._query_lock:
            self._query_vectors[key] = vector
            while len(self._query_vectors) > QUERY_CACHE_SIZE:
                self._query_vectors.popitem(last=False)
        return vector

    def _vector_side(
        self, embedder: Embedder, query: str, pool: int, allowed: set[int] | None
    ) -> Future[tuple[np.ndarray, VectorScan]]:
        """The query's vector and its nearest chunks, worked out on another thread while the keyword side runs:
        llama.cpp, remote providers, numpy and the stores all release the GIL while they work."""

        def run() -> tuple[np.ndarray, VectorScan]:
            vector = self._embed_query(embedder, query)
            return vector, self.vectors.scan(vector, pool, allowed)

        return lasting_pool("query-vector", QUERY_VECTOR_THREADS).submit(run)

    def search(self, query: str, *, record_access: bool = True, **options: object) -> SearchResponse:
        """A search with the protocol's options (protocol.schema.Search), checked as the daemon checks them."""
        try:
            checked = request("search", query=query, **options)
        except InvalidParams as exc:
            raise SearchError(str(exc)) from None
        return self.run(cast(Search, checked), record_access=record_access)  # request("search") makes a Search

    def run(self, req: Search, *, record_access: bool = True) -> SearchResponse:
        """Answer a checked search request."""
        started = time.perf_counter()
        cfg = self.settings
        overrides: dict[str, Any] = {k: v for k, v in (("mmr", req.mmr), ("decay", req.decay)) if v is not None}
        if overrides:
            cfg = replace(cfg, **overrides)
        max_results = cfg.max_results if req.max_results is None else req.max_results
        min_score = cfg.min_score if req.min_score is None else req.min_score
        fusion = req.fusion or cfg.fusion
        mode = req.mode
        query = _check(req.query)
        try:
            filters = Filters.parse(req.sources, req.path, req.after, req.before, req.type)
        except FilterError as exc:
            raise SearchError(str(exc)) from None
        pool = max_results * cfg.candidate_multiplier
        gathered = self.gather(query, mode, pool, filters, fill=fusion == "adaptive")
        pool_list = gathered.candidates
        has_vector, has_text, embedder = gathered.has_vector, gathered.has_text, gathered.embedder
        fuse(
            pool_list,
            fusion,
            cfg,
            has_vector=has_vector,
            has_text=has_text,
            scan=gathered.vector_scan,
            # in two chunks a word either chunk holds weighs nothing (IDF <= 0): the evidence measures nothing there
            evidence=gathered.evidence if self.store.chunk_count() > IDF_CHUNKS else None,
        )
        regions, explained = self._rank(pool_list, cfg, min_score, max_results, query, filters if has_text else None)

        actual = "hybrid" if has_vector and has_text else ("vector" if has_vector else "keyword")
        degraded = gathered.degraded
        if mode == "hybrid" and actual == "keyword" and degraded is None:
            degraded = "vector search unavailable"
        results = materialise(self.store, self.settings, regions, explained, req.explain, query)
        if record_access and results and cfg.access_weight:
            self.store.record_access([row.hash for region in regions for row in region.rows])
        return SearchResponse(
            results=results,
            mode=actual,
            provider=embedder.provider if embedder and has_vector else None,
            model=embedder.model if embedder and has_vector else None,
            took_ms=round((time.perf_counter() - started) * 1000, 3),
            fusion=fusion,
            degraded=degraded,
            restored_query=gathered.restored_query if has_vector else None,
            evidence=gathered.evidence,
            vector_margin=vector_margin(gathered.vector_scan, pool_list) if has_vector else None,
        )

    def gather(self, query: str, mode: str, pool: int, filters: Filters, *, fill: bool = True) -> Gathered:
        """Keyword and vector candidates for a query, each with both scores where the chunk has a vector; `fill`:
        a scan of fewer chunks than the pool is filled with the background (search.background), as adaptive fusion
        of both sides reads it."""
        embedder, degraded = (None, None)
        if mode != "keyword":
            embedder, degraded = self.vector_state()
        allowed = self._allowed(filters) if embedder is not None else None
        vector_side = self._vector_side(embedder, query, pool, allowed) if embedder is not None else None
        terms = query_terms(query)
        # keyword hits also serve the vector side: an unmarked query is embedded with the marks they use
        hits = keyword_search(self.store, query, pool, filters, terms) if self.store.fts_available else []
        query_vector = None
        scan = None
        restored = None
        if embedder is not None and vector_side is not None:
            restored = self._restored(query, hits)
            try:
                query_vector, scan = vector_side.result()  # also when restored: its error is the one to report
                if restored:
                    query_vector = self._embed_query(embedder, restored)
                    scan = self.vectors.scan(query_vector, pool, allowed)
            except EmbeddingError as exc:
                degraded = f"query embedding failed: {exc}"
                embedder, query_vector, scan = None, None, None
        if fill and mode != "vector" and embedder is not None and query_vector is not None and scan is not None:
            background = background_vectors(embedder) if scan.count < pool else None
            if background is not None:
                scan = padded(scan, background, query_vector, pool)
        if mode == "vector" and query_vector is None and degraded is None:
            degraded = "no vectors available"
        use_text = (mode != "vector" or query_vector is None) and self.store.fts_available

        candidates: dict[int, Candidate] = {}
        if use_text:
            top = hits[0].bm25 if hits else 1.0
            for rank, hit in enumerate(hits, 1):
                candidates[hit.chunk_id] = Candidate(hit.chunk_id, text_score=hit.bm25 / top, text_rank=rank)
        if query_vector is not None and scan is not None:
            for rank, (chunk_id, similarity) in enumerate(scan.hits, 1):
                cand = candidates.setdefault(chunk_id, Candidate(chunk_id))
                cand.vector_score, cand.vector_rank = similarity, rank
            missing = [cid for cid, c in candidates.items() if c.vector_score is None]
            for chunk_id, similarity in self.vectors.similarity(query_vector, missing, scan).items():
                candidates[chunk_id].vector_score = similarity
            if self.settings.window_weight > 0:
                blend_windows(self.store, query_vector, candidates, self.settings.window_weight, scan)
        evidence = keyword_evidence(self.store, terms, hits) if use_text else None
        return Gathered(
            list(candidates.values()), scan is not None, use_text, embedder, degraded, scan, restored, evidence
        )

    def _restored(self, query: str, hits: list[KeywordHit]) -> str | None:
        """The query with the diacritics its best keyword hits use, when it was typed without them."""
        if not hits or not restorable(query):
            return None
        rows = self.store.chunks_by_ids([h.chunk_id for h in hits[:RESTORE_FROM]])
        return restore_accents(query, (row.text for row in rows.values()))

    def _rank(
        self,
        pool: list[Candidate],
        cfg: QueryConfig,
        min_score: float,
        max_results: int,
        query: str,
        filters: Filters | None,
    ) -> tuple[list[Region], dict[int, Explained]]:
        """Fused score x time decay x importance x access, the current statement of what is asked first
        (search.currency), threshold, then MMR or plain order, grouped into regions (overlapping chunks of one
        file become one result)."""
        rows = self.store.chunks_by_ids([c.chunk_id for c in pool])
        access = self.store.access_stats([r.hash for r in rows.values()]) if cfg.access_weight else {}
        moment = time.time()
        explained: dict[int, Explained] = {}
        for cand in pool:
            row = rows.get(cand.chunk_id)
            if row is None:  # deleted between ranking and reading
                continue
            factor, age = decay_factor(row, cfg, moment)
            hits = access.get(row.hash, (0, 0.0))[0]
            info = Explained(
                cand.vector_score,
                cand.text_score,
                cand.score,
                factor,
                age,
                importance_factor(row),
                hits,
                access_factor(hits, cfg.access_weight),
            )
            info.final = cand.score * info.decay * info.importance * info.access_factor
            explained[cand.chunk_id] = info
        self._time_aware(explained, rows, query, moment, filters)
        ranked = sorted(
            (cid for cid, e in explained.items() if e.final >= min_score), key=lambda cid: (-explained[cid].final, cid)
        )
        if not cfg.mmr:
            return group_regions(ranked, rows, max_results), explained
        picked = mmr(
            np.array([explained[cid].final for cid in ranked]),
            similarities(ranked, rows, self.vectors.vectors_of(ranked)),
            cfg.mmr_lambda,
            max_results,
        )
        for step, (index, penalty) in enumerate(picked, 1):
            info = explained[ranked[index]]
            info.mmr_step, info.mmr_penalty = step, round(penalty, 6)
        return group_regions([ranked[index] for index, _ in picked], rows, max_results), explained

    def _time_aware(
        self,
        explained: dict[int, Explained],
        rows: dict[int, ChunkRow],
        query: str,
        now: float,
        filters: Filters | None,
    ) -> None:
        """What the query says about time: memories of the time it names raised (search.asked_time), and restated
        or superseded statements below what replaced them, or before it for a question about before
        (search.currency)."""
        if len(explained) < 2:
            return
        asked = parse_time(query, dt.datetime.fromtimestamp(now).astimezone())  # "yesterday" is the user's
        finals = {cid: info.final for cid, info in explained.items()}
        ranked = sorted(finals, key=lambda cid: -finals[cid])
        anchor = functools.partial(self._anchor_time, query=query, ranked=ranked, rows=rows)
        moved = boost_asked_time(finals, rows, asked, anchor) if asked.has_range or asked.anchor else {}
        past = asked.past and not asked.current
        frequencies, total = self.store.document_frequencies, self.store.chunk_count()
        event = (asked.anchor or "") if past else ""
        # the keyword side's follow-up, within the search's filters (None: a search without one)
        followed = functools.partial(chunks_holding, self.store, filters) if filters is not None else None
        for cid, why in rerank(
            finals, rows, query, frequencies, total, past=past, anchor=event, profiles=self.name_kinds, more=followed
        ).items():
            moved[cid] = f"{moved[cid]}; {why}" if cid in moved else why
        for cid in finals.keys() - explained.keys():  # statements the follow-up found (search.followup)
            explained[cid] = Explained(None, None, 0.0)
        for cid, info in explained.items():  # a score can move without a note (the current one after the one before)
            info.final = finals[cid]
            if cid in moved:
                info.notes.append(moved[cid])

    def _anchor_time(self, event: str, *, query: str, ranked: list[int], rows: dict[int, ChunkRow]) -> float | None:
        """When an event a query names happened ("before the migration", "before Memcached"): the date of the
        candidate that names it and is most about the rest of the question ("what cache did billing use before
        Memcached?": billing's move to Memcached, not another service's), else of the memory that matches it best by
        keyword."""
        wanted = event_words(event)
        if not wanted:
            return None
        naming = [cid for cid in ranked[:CONSIDERED] if cid in rows and wanted <= words_of(rows[cid])]
        if naming:
            frequencies, total = self.store.document_frequencies, self.store.chunk_count()
            return rows[most_about(naming, rows, query.replace(event, " "), frequencies, total)].when
        hits = keyword_search(self.store, event, 1, Filters.parse(), query_terms(event))
        row = self.store.chunks_by_ids([hits[0].chunk_id]).get(hits[0].chunk_id) if hits else None
        return None if row is None else row.when

    def _allowed(self, filters: Filters) -> set[int] | None:
        if not filters.active:
            return None
        return self.store.chunk_ids(filters)


def _query_key(embedder: Embedder, query: str) -> tuple[str, ...]:
    """Query vectors are kept per provider, model and account."""
    return (embedder.provider, embedder.model, embedder.key_fingerprint, query)
