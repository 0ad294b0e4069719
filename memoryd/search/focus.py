"""A candidate's statement about a question: of the entries of its chunk (a list item, a short paragraph, a line
of a turn or of a long paragraph), the one that holds most of the question's weight, each word matched as a word,
and what its names stand for (search.kinds). A question's weight is the BM25 IDF of its words that are not function
words ("which", "does", "的", "คือ", "now": search.function_words)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memoryd.search.function_words import content_tokens
from memoryd.search.keyword import bm25_idf
from memoryd.search.statements import Statement, holds, statements_of
from memoryd.sources.metadata import note_date
from memoryd.sources.text import DENSE_CHAR
from memoryd.store.rows import ChunkRow


@dataclass(frozen=True)
class Focus:
    terms: frozenset[str]  # the query's tokens its focus entry holds
    weight: float  # their share of the query's weight
    when: float
    dated: bool = True  # its date is when it was said (is_dated)
    said: Statement | None = None  # its focus entry
    named: frozenset[str] = frozenset()  # the query's tokens it holds only through what its names stand for

    @property
    def marked(self) -> bool:
        """The focus entry is struck through as superseded."""
        return self.said is not None and self.said.marked

    @property
    def change(self) -> bool:
        """It says it replaces something (CHANGE)."""
        return self.said is not None and self.said.change

    @property
    def words(self) -> frozenset[str]:
        """Its focus entry's words as written, but those saying it is a change."""
        return self.said.written if self.said is not None else frozenset()


def find_foci(
    rows: Mapping[int, ChunkRow],
    candidates: list[int],
    query: Mapping[str, float],
    kinds: Mapping[tuple[str, ...], frozenset[str]] | None = None,
) -> dict[int, Focus]:
    """Each candidate's statement that holds most of the query's weight (holds: a query word is held as a word; a
    statement that holds one also holds the words its values stand for, `kinds`)."""
    total = math.fsum(query.values()) or 1.0
    asked = frozenset(query)
    unspaced = [word for word in asked if DENSE_CHAR.match(word)]
    found = {}
    for cid in candidates:
        row = rows[cid]
        best: tuple[float, frozenset[str], Statement | None, frozenset[str]] = (-1.0, frozenset(), None, frozenset())
        for statement in statements_of(row):
            held = statement.tokens & asked
            if unspaced:
                held |= {word for word in unspaced if holds(statement, word)}
            if not held and best[2] is not None:
                continue
            named = stands_for(statement, kinds) - held if held and kinds else frozenset()
            held |= named
            weight = math.fsum(map(query.__getitem__, held))  # in any order: equal holdings weigh the same
            if weight > best[0]:
                best = (weight, held, statement, named)
        weight, held, said, named = best
        found[cid] = Focus(held, max(weight, 0.0) / total, row.when, is_dated(row), said, named)
    return found


def query_weights(query: str, frequencies: Callable[[list[str]], Mapping[str, int]], total: int) -> dict[str, float]:
    """BM25 IDF of each of the query's words that some note holds and that is no function word, from the index's own
    counts: words most notes hold weigh little, and a question's own words ("which", "does") tell no statement from
    another."""
    tokens = list(set(content_tokens(query)))  # folded, stemmed, segmented, as a statement's words are
    counts = frequencies(tokens)
    weights = {t: bm25_idf(counts[t], total) for t in tokens if counts.get(t)}
    return {t: weight for t, weight in weights.items() if weight > 0}


def most_about(
    candidates: list[int],
    rows: Mapping[int, ChunkRow],
    question: str,
    frequencies: Callable[[list[str]], Mapping[str, int]],
    total: int,
) -> int:
    """Of these candidates (best first), the one whose statement holds most of the question; the first on a tie."""
    query = query_weights(question, frequencies, total)
    if not query:
        return candidates[0]
    weights = [found.weight for found in find_foci(rows, candidates, query).values()]
    return candidates[weights.index(max(weights))]


def is_dated(row: ChunkRow) -> bool:
    """Its date says when it was said (a dated note's name, a turn's time), not when its file was last saved: only
    such statements are ordered in time (an edit re-dates every undated line of its note)."""
    return row.source == "sessions" or _dated_name(row.path)


@functools.lru_cache(maxsize=65536)
def _dated_name(path: str) -> bool:
    return note_date(path) is not None


def stands_for(statement: Statement, kinds: Mapping[tuple[str, ...], frozenset[str]]) -> frozenset[str]:
    """The words the statement's names stand for (search.kinds)."""
    found: frozenset[str] = frozenset()
    for name in statement.proper:
        found |= kinds.get(name, frozenset())
    return found
