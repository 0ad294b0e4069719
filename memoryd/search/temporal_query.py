"""A query as the temporal parser reads it (search.temporal): as matched (lowercase) and as typed, the tokens read
from it, and the cues asked of it more than once."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memoryd.search import temporal_words as words
from memoryd.sources.analyzer import fold
from memoryd.sources.text import DENSE_CHAR

Side = Literal["before", "after"]
JOINED = re.compile(r"[\s,]*(?:and|or|to|until|through|-|–)\s*")  # "between March and June": June is a date too
CLAUSE = re.compile(r"[^,.;:!?，。？！、\n]*")
CHUNK = re.compile(r"\S+")
LATIN_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_DATE_CONTEXT = frozenset(fold(w) for w in words.DATE_CONTEXT)
Cues = tuple[frozenset[str], frozenset[str], re.Pattern[str]]


def cues(phrases: Sequence[str]) -> Cues:
    """Phrases to look for: Latin words (as typed and unmarked) and the rest, looked for anywhere."""
    latin = frozenset(p for p in phrases if p.isalpha() and not DENSE_CHAR.match(p))
    others = "|".join(re.escape(p) for p in phrases if p not in latin)
    return latin, frozenset(fold(p) for p in latin), re.compile(others)


MODALS, ASKS = cues(words.MODALS), cues((*words.QUESTION_WORDS, *words.PAST_MARKERS))


@dataclass
class Token:
    kind: str  # range, month (its year not known yet), connector, past, current
    start: int
    end: int
    lo: int = 0  # the first day, as a date ordinal
    hi: int = 0  # the day after the last
    role: str = ""  # a connector's: before, after, since, until, from, frame, post_before, post_after, post_since
    lang: str = ""  # the language whose event phrases a connector may anchor
    month: int = 0
    day: int | None = None
    year: int | None = None  # a month's; a range's when it is one whole year (a month beside it takes it)
    hint: str = ""  # the word before a month's name ("last March", "this March")


class Query:
    """The query as matched (lowercase) and as typed, and what is asked of it more than once."""

    def __init__(self, query: str, now: datetime) -> None:
        text = unicodedata.normalize("NFC", query)
        self.low = text.lower().replace("’", "'")
        self.text = text if len(text) == len(self.low) else self.low
        self.now, self.today = now, now.date()
        self.words: set[str] = set()  # its Latin words, once it has something to read

    def mentions(self, cues: Cues, tolerant: bool = True) -> bool:
        """Any of the cues: a Latin word whole (with or without its marks if tolerant), anything else anywhere."""
        latin, folded, others = cues
        if self.words & latin or (tolerant and folded & {fold(w) for w in self.words}):
            return True
        return bool(others.search(self.low))

    def clause(self, start: int) -> re.Match[str]:
        """The rest of the clause from `start`, to its punctuation."""
        return CLAUSE.match(self.low, start)  # type: ignore[return-value]

    def context(self, start: int) -> str:
        """The word before a position, without its punctuation."""
        before = self.low[max(0, start - 24) : start].split()
        return before[-1].strip("(\"'“”,;:") if before else ""

    def dated_by_context(self, start: int, tokens: list[Token]) -> bool:
        word, last = self.context(start), tokens[-1] if tokens else None
        if fold(word) in _DATE_CONTEXT or (DENSE_CHAR.search(word) and word.endswith(words.DENSE_CONTEXT)):
            return True
        return bool(last and last.kind in ("range", "month") and JOINED.fullmatch(self.low, last.end, start))
