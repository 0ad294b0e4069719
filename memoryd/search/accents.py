"""Put back the marks a query was typed without, from the words of the chunks it matched by keyword.

People often type Vietnamese, French or Spanish without diacritics (a phone keyboard, a hurry). Keyword search
folds marks away and still matches, but an embedding model reads "thanh pho" as other words than "thành phố"
(multilingual-e5-small: XQuAD Vietnamese vector MRR@10 0.93 with tone marks, 0.36 without). The chunks a query
matched by keyword hold the marked forms of its words in context, so each unmarked query word takes the form
those chunks use most, preferring forms that follow the previous word the way they do there (a bigram model with
interpolated smoothing, decoded with Viterbi). Nothing is guessed from outside the user's own notes; a word the
chunks only use unmarked stays as typed, and a query is left alone unless at least half of its words have marked
forms there, so an English query never takes a Vietnamese "thẻ" for its "the".
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from memoryd.sources.analyzer import fold

_WORD = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[a-z]")
SMOOTHING = 1.0  # weight of a word's own frequency against what follows the previous word (Witten-Bell style)
MAX_WORDS = 64


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFC", text).lower())


def _is_marked(word: str) -> bool:
    return fold(word) != word


class _Model:
    """Counts of marked forms, and of adjacent pairs of forms, for the query's folded words only."""

    def __init__(self, wanted: set[str], texts: Iterable[str]) -> None:
        self.forms: dict[str, Counter[str]] = {w: Counter() for w in wanted}
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.following: Counter[str] = Counter()
        for text in texts:
            if text.isascii():
                continue  # holds no marked form of anything
            previous = ""
            for word in _words(text):
                folded = fold(word)
                if previous:
                    self.following[previous] += 1
                if folded in self.forms:
                    self.forms[folded][word] += 1
                    if previous:
                        self.pairs[(previous, word)] += 1
                    previous = word
                else:
                    previous = ""

    def options(self, word: str) -> list[str]:
        seen = self.forms.get(fold(word))
        if _is_marked(word) or not seen or not any(_is_marked(f) for f in seen):
            return [word]
        return list(seen)

    def unigram(self, form: str) -> float:
        seen = self.forms.get(fold(form))
        if not seen:
            return 1.0
        return (seen[form] + 0.5) / (sum(seen.values()) + 0.5 * len(seen))

    def bigram(self, previous: str, form: str) -> float:
        return (self.pairs[(previous, form)] + SMOOTHING * self.unigram(form)) / (self.following[previous] + SMOOTHING)


def restorable(query: str) -> bool:
    """Whether the query has an unmarked Latin word at all (cheap; checked before any chunk is read)."""
    return any(_LATIN.search(w) and not _is_marked(w) for w in _words(query))


def restore_accents(query: str, texts: Iterable[str]) -> str | None:
    """The query with the marks its matching chunks use restored, or None when no word changes."""
    query = unicodedata.normalize("NFC", query)  # decomposed marks (as macOS may send them) are not word chars
    spans = [m for m in _WORD.finditer(query)][:MAX_WORDS]
    words = [m.group().lower() for m in spans]
    if not restorable(query):
        return None
    model = _Model({fold(w) for w in words}, texts)
    lattice = [model.options(w) for w in words]
    open_words = sum(len(options) > 1 or options[0] != w for options, w in zip(lattice, words, strict=True))
    if open_words * 2 < sum(1 for w in words if _LATIN.search(w)):
        return None  # most words are as the notes write them: this is not an unmarked spelling of their language
    # Viterbi over the forms of each word: best log-probability of a path ending in each form
    best: dict[str, tuple[float, list[str]]] = {f: (math.log(model.unigram(f)), [f]) for f in lattice[0]}
    for options in lattice[1:]:
        step: dict[str, tuple[float, list[str]]] = {}
        for form in options:
            score, path = max(
                ((s + math.log(model.bigram(p[-1], form)), p) for s, p in best.values()), key=lambda x: x[0]
            )
            step[form] = (score, [*path, form])
        best = step
    chosen = max(best.values(), key=lambda x: x[0])[1]
    out, last = [], 0
    for match, original, form in zip(spans, words, chosen, strict=True):
        out.append(query[last : match.start()])
        typed = match.group()
        out.append(form if typed == original else _recase(typed, form))
        last = match.end()
    out.append(query[last:])
    restored = "".join(out)
    return restored if restored != query else None


def _recase(typed: str, form: str) -> str:
    if typed.isupper() and len(typed) > 1:
        return form.upper()
    if typed[:1].isupper():
        return form[:1].upper() + form[1:]
    return form
