"""Pick the lines of a chunk that best show why it matched, within a character budget.

Query words count by how rare they are in the index, so the snippet (and with it the citation) lands on the
line that holds "LGBTQ support group", not on the one that repeats the speaker's name."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from memoryd.sources.analyzer import analyze, fold_text


@dataclass(frozen=True)
class Snippet:
    text: str
    start_line: int
    end_line: int


def word_weights(
    words: Iterable[str], document_frequencies: Callable[[list[str]], Mapping[str, int]], total: int
) -> dict[str, float]:
    """IDF of each snippet word, from the index's own token counts (a word it never saw weighs most)."""
    tokens = {word: (analyze(word).body.split() or [word])[0] for word in words}
    frequencies = document_frequencies(list(set(tokens.values())))
    return {word: math.log(1.0 + (total + 1) / (frequencies.get(token, 0) + 1)) for word, token in tokens.items()}


def best_snippet(
    text: str, line_of: Callable[[int], int], query_words: Mapping[str, float], budget: int = 700
) -> Snippet:
    """`line_of` maps a line of the chunk's text (0-based) to its line in the file."""
    lines = text.split("\n")
    if len(text) <= budget:
        return Snippet(text, line_of(0), line_of(len(lines) - 1))
    folded = [fold_text(line) for line in lines]
    hits = [sum(weight for word, weight in query_words.items() if word in line) for line in folded]
    best_start, best_hits = 0, -1.0
    for start in range(len(lines)):
        size, score, end = 0, 0.0, start
        while end < len(lines) and size + len(lines[end]) + 1 <= budget:
            size += len(lines[end]) + 1
            score += hits[end]
            end += 1
        if score > best_hits:
            best_start, best_hits = start, score
        if end >= len(lines):
            break
    size, end = 0, best_start
    while end < len(lines) and size + len(lines[end]) + 1 <= budget:
        size += len(lines[end]) + 1
        end += 1
    if end == best_start:  # a single line longer than the budget: a window around the first hit
        line = lines[best_start]
        return Snippet(_window(line, query_words, budget), line_of(best_start), line_of(best_start))
    return Snippet("\n".join(lines[best_start:end]), line_of(best_start), line_of(end - 1))


def _window(line: str, query_words: Mapping[str, float], budget: int) -> str:
    lowered = fold_text(line)
    positions = [p for p in (lowered.find(w) for w in query_words) if p >= 0]
    start = max(0, min(positions) - budget // 4) if positions else 0
    start = min(start, max(0, len(line) - budget + 2))
    piece = line[start : start + budget - 2]
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(line) else "")
