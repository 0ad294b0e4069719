"""What a search answers per result: the cited lines' snippet, scores, date, whether they are marked
superseded, and (on request) how the score was made."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from memoryd.config import QueryConfig
from memoryd.search.ranking import Explained
from memoryd.search.regions import Region
from memoryd.search.snippets import best_snippet, word_weights
from memoryd.sources.analyzer import snippet_words
from memoryd.sources.entries import MARK, entries
from memoryd.store.interface import MemoryStore
from memoryd.store.rows import ChunkRow


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
    chunk_start_line: int  # the whole chunk that matched (overlapping matches joined); the citation is its best part
    chunk_end_line: int
    date: str | None = None  # when it happened: the note's date, the turn's time, else the file's (UTC, ISO)
    superseded: str | None = None  # the cited lines are marked superseded: "2026-11-27 by memory/...#L5-L5"
    explain: dict[str, object] | None = None


def materialise(
    store: MemoryStore,
    settings: QueryConfig,
    regions: list[Region],
    explained: dict[int, Explained],
    include: bool,
    query: str,
) -> list[SearchResult]:
    """Each region as a result: its best lines for the query, cited."""
    words = word_weights(snippet_words(query), store.document_frequencies, store.chunk_count())
    results = []
    for region in regions:
        lead, info = region.rows[0], explained[region.lead]
        text, line_of = region.text()
        # a joined result shows as much as its chunks would have shown as separate results
        snip = best_snippet(text, line_of, words, settings.snippet_chars * len(region.rows))
        details = None
        if include:
            details = _explain_dict(info, lead)
            details["chunks"] = [f"L{row.start_line}-L{row.end_line}" for row in region.rows]
        results.append(
            SearchResult(
                path=lead.path,
                start_line=snip.start_line,
                end_line=snip.end_line,
                score=round(info.final, 6),
                vector_score=_rounded(info.vector_score),
                text_score=_rounded(info.text_score),
                snippet=snip.text,
                source=lead.source,
                citation=f"{lead.path}#L{snip.start_line}-L{snip.end_line}",
                chunk_id=region.lead,
                chunk_start_line=region.start_line,
                chunk_end_line=region.end_line,
                date=_date(lead),
                superseded=_superseded(text, line_of, snip.start_line, snip.end_line),
                explain=details,
            )
        )
    return results


def _date(row: ChunkRow) -> str:
    return dt.datetime.fromtimestamp(row.when, dt.timezone.utc).date().isoformat()


def _superseded(text: str, line_of: Callable[[int], int], start: int, end: int) -> str | None:
    """How the cited lines are marked superseded ("2026-11-27 by path#L5-L5"): the mark after them, within the
    entry they belong to."""
    if "*(superseded " not in text:  # the mark's own words: most results have none, and entries() costs
        return None
    lines = text.split("\n")
    for first, last in entries(lines):
        if line_of(last) < start or line_of(first) > end:
            continue
        for line in lines[first : last + 1]:
            if mark := MARK.search(line):
                return f"{mark[1]} by {mark[2]}"
    return None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _explain_dict(info: Explained, row: ChunkRow) -> dict[str, object]:
    return {
        "vector_score": _rounded(info.vector_score),
        "text_score": _rounded(info.text_score),
        "fused": round(info.fused, 6),
        "decay": round(info.decay, 6),
        "age_days": None if info.age_days is None else round(info.age_days, 2),
        "importance": round(info.importance, 6),
        "access_hits": info.access_hits,
        "access_factor": round(info.access_factor, 6),
        "mmr_step": info.mmr_step,
        "mmr_penalty": info.mmr_penalty,
        "final": round(info.final, 6),
        "type": row.kind or None,
        "ts": row.ts,
        "notes": info.notes or None,
    }
