"""Hybrid search: keyword and vector candidates, fused, thresholded, with snippets and citations."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from memoryd.config import SOURCES, QueryConfig
from memoryd.embeddings.base import Embedder, EmbeddingError, clean_vectors
from memoryd.index.analyzer import snippet_words
from memoryd.index.store import Store
from memoryd.search.fusion import Candidate, rrf_fusion, weighted_fusion
from memoryd.search.keyword import keyword_search
from memoryd.search.snippets import best_snippet
from memoryd.search.vector import VectorIndex

MODES = ("hybrid", "keyword", "vector")
MAX_QUERY_CHARS = 8192
MAX_RESULTS_CAP = 200

VectorState = Callable[[], tuple[Embedder | None, str | None]]


class SearchError(ValueError):
    """The search request itself is invalid."""


@dataclass(frozen=True)
class SearchResult:
    path: str
    start_line: int
    end_line: int
    score: float
    vector_score: float | None
    text_score: float | None
    snippet: str
    source: str
    citation: str
    chunk_id: int


@dataclass
class SearchResponse:
    results: list[SearchResult]
    mode: str
    provider: str | None
    model: str | None
    took_ms: float
    fusion: str
    degraded: str | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out.pop("extra")
        out.update(self.extra)
        return out


def _check(query: object, mode: str, max_results: int, min_score: float, sources: Sequence[str] | None) -> str:
    if not isinstance(query, str):
        raise SearchError("query must be a string")
    query = query.strip()
    if not query:
        raise SearchError("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchError(f"query is longer than {MAX_QUERY_CHARS} characters")
    if mode not in MODES:
        raise SearchError(f"mode must be one of {', '.join(MODES)}")
    if not isinstance(max_results, int) or isinstance(max_results, bool) or not 1 <= max_results <= MAX_RESULTS_CAP:
        raise SearchError(f"max_results must be an integer from 1 to {MAX_RESULTS_CAP}")
    if not isinstance(min_score, (int, float)) or isinstance(min_score, bool):
        raise SearchError("min_score must be a number")
    for source in sources or ():
        if source not in SOURCES:
            raise SearchError(f"unknown source {source!r} (use {', '.join(SOURCES)})")
    return query


class SearchEngine:
    def __init__(self, store: Store, settings: QueryConfig, vectors: VectorIndex, vector_state: VectorState) -> None:
        self.store = store
        self.settings = settings
        self.vectors = vectors
        self.vector_state = vector_state

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        mode: str = "hybrid",
        sources: Sequence[str] | None = None,
        fusion: str | None = None,
    ) -> SearchResponse:
        started = time.perf_counter()
        cfg = self.settings
        max_results = cfg.max_results if max_results is None else max_results
        min_score = cfg.min_score if min_score is None else min_score
        fusion = fusion or cfg.fusion
        query = _check(query, mode, max_results, min_score, sources)
        sources = list(sources) if sources else None
        pool = max_results * cfg.candidate_multiplier

        embedder, degraded = (None, None)
        query_vector = None
        if mode != "keyword":
            embedder, degraded = self.vector_state()
            if embedder is not None:
                try:
                    query_vector = clean_vectors(embedder.embed_query(query), embedder.dims)[0]
                except EmbeddingError as exc:
                    degraded = f"query embedding failed: {exc}"
                    embedder = None
        if mode == "vector" and query_vector is None and degraded is None:
            degraded = "no vectors available"
        use_text = mode != "vector" or query_vector is None
        use_text = use_text and self.store.fts_available

        candidates: dict[int, Candidate] = {}
        if use_text:
            hits = keyword_search(self.store, query, pool, sources)
            top = hits[0].bm25 if hits else 1.0
            for rank, hit in enumerate(hits, 1):
                candidates[hit.chunk_id] = Candidate(hit.chunk_id, text_score=hit.bm25 / top, text_rank=rank)
        if query_vector is not None:
            allowed = self._allowed(sources)
            for rank, (chunk_id, similarity) in enumerate(self.vectors.search(query_vector, pool, allowed), 1):
                cand = candidates.setdefault(chunk_id, Candidate(chunk_id))
                cand.vector_score, cand.vector_rank = similarity, rank
            missing = [cid for cid, c in candidates.items() if c.vector_score is None]
            for chunk_id, similarity in self.vectors.similarity(query_vector, missing).items():
                candidates[chunk_id].vector_score = similarity

        has_vector, has_text = query_vector is not None, use_text
        pool_list = list(candidates.values())
        if fusion == "rrf":
            rrf_fusion(
                pool_list, cfg.vector_weight, cfg.text_weight, cfg.rrf_k, has_vector=has_vector, has_text=has_text
            )
        else:
            weighted_fusion(pool_list, cfg.vector_weight, cfg.text_weight, has_vector=has_vector, has_text=has_text)
        ranked = sorted((c for c in pool_list if c.score >= min_score), key=lambda c: (-c.score, c.chunk_id))
        ranked = ranked[:max_results]

        actual = "hybrid" if has_vector and has_text else ("vector" if has_vector else "keyword")
        if mode == "hybrid" and actual == "keyword" and degraded is None:
            degraded = "vector search unavailable"
        results = self._materialise(ranked, query)
        return SearchResponse(
            results=results,
            mode=actual,
            provider=embedder.provider if embedder and has_vector else None,
            model=embedder.model if embedder and has_vector else None,
            took_ms=round((time.perf_counter() - started) * 1000, 3),
            fusion=fusion,
            degraded=degraded,
        )

    def _allowed(self, sources: list[str] | None) -> set[int] | None:
        if not sources or set(sources) >= set(SOURCES):
            return None
        marks = ",".join("?" * len(sources))
        rows = self.store.reader.execute(f"SELECT id FROM chunks WHERE source IN ({marks})", sources)
        return {r[0] for r in rows}

    def _materialise(self, ranked: list[Candidate], query: str) -> list[SearchResult]:
        rows = self.store.chunks_by_ids([c.chunk_id for c in ranked])
        words = snippet_words(query)
        results = []
        for cand in ranked:
            row = rows.get(cand.chunk_id)
            if row is None:  # deleted between ranking and reading
                continue
            snip = best_snippet(row.text, row.start_line, words, self.settings.snippet_chars)
            results.append(
                SearchResult(
                    path=row.path,
                    start_line=snip.start_line,
                    end_line=snip.end_line,
                    score=round(cand.score, 6),
                    vector_score=None if cand.vector_score is None else round(cand.vector_score, 6),
                    text_score=None if cand.text_score is None else round(cand.text_score, 6),
                    snippet=snip.text,
                    source=row.source,
                    citation=f"{row.path}#L{snip.start_line}-L{snip.end_line}",
                    chunk_id=cand.chunk_id,
                )
            )
        return results
