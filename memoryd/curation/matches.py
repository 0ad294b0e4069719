"""What a forget by query forgets: not the whole lines a search hit cites (a chunk, often a whole small note), but
the entries in them that hold the query's words: the list items, paragraphs or transcript lines the query is
about. A heading is a title, never forgotten this way; a hit none of whose entries holds a query word (found by its
meaning alone) is left out, so a confirmed forget removes only what visibly matched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd.curation.lines import lines_hash
from memoryd.notes import RequestError
from memoryd.sources.analyzer import Term, analyze, query_terms
from memoryd.sources.discovery import is_transcript
from memoryd.sources.entries import HEADING, entries

CONTEXT_LINES = 40  # read around a hit, so that an entry it cuts is seen whole
Get = Callable[[str, int, int], dict[str, Any]]


def _holds(tokens: list[str], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    return size > 0 and any(tuple(tokens[i : i + size]) == phrase for i in range(len(tokens) - size + 1))


def score(terms: list[Term], text: str) -> int:
    """How many of the query's terms the text holds (as search matches them: folded, stemmed, or exact)."""
    doc = analyze(text)
    body, exact, grams = doc.body.split(), set(doc.exact.split()), doc.grams.split()
    held = 0
    for term in terms:
        if _holds(body, term.phrase) or any(e in exact for e in term.exact) or _holds(grams, term.grams):
            held += 1
    return held


def matching_entries(query: str, hits: list[Any], get: Get) -> list[dict[str, Any]]:
    """The entries of the hits' lines that hold the most of the query's terms (as many as the best entry found
    holds), merged per file; each with its citation, text and hash (what a confirmed forget checks)."""
    terms = query_terms(query)
    scored: list[tuple[int, str, int, int, float]] = []
    for hit in hits:
        first = max(1, hit.start_line - CONTEXT_LINES)
        try:
            window = get(hit.path, first, hit.end_line - first + 1 + CONTEXT_LINES)["text"].split("\n")
        except RequestError:  # the file went or shrank since it was indexed: nothing of it to show
            continue
        if is_transcript(Path(hit.path)):
            spans = [(i, i) for i in range(len(window))]  # each line a turn of its own
        else:
            spans = [(a, b) for a, b in entries(window) if not HEADING.match(window[a])]
        for a, b in spans:
            if first + b >= hit.start_line and first + a <= hit.end_line:
                held = score(terms, "\n".join(window[a : b + 1]))
                scored.append((held, hit.path, first + a, first + b, hit.score))
    best = max((held for held, *_ in scored), default=0)
    ranges: dict[str, list[tuple[int, int, float]]] = {}
    for held, path, start, end, hit_score in scored:
        if held and held == best:
            ranges.setdefault(path, []).append((start, end, hit_score))
    found = []
    for path, found_spans in ranges.items():
        for start, end, hit_score in _merged(found_spans):
            text = get(path, start, end - start + 1)["text"]
            found.append(
                {
                    "citation": f"{path}#L{start}-L{end}",
                    "path": path,
                    "start_line": start,
                    "end_line": end,
                    "snippet": text,
                    "score": hit_score,
                    "hash": lines_hash(text),
                }
            )
    return found


def _merged(spans: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """Overlapping or repeated ranges as one (an entry two hits both hold is forgotten once)."""
    out: list[tuple[int, int, float]] = []
    for start, end, hit_score in sorted(spans):
        if out and start <= out[-1][1]:
            last = out[-1]
            out[-1] = (last[0], max(last[1], end), max(last[2], hit_score))
        else:
            out.append((start, end, hit_score))
    return out
