"""Which statement is current. Facts change ("billing's cache moved from Redis to Memcached"), and the first
statement of a fact often reads more like the question than the change does. Among a search's best candidates, a
statement that a later one restates ranks just below it, and a statement a note marks superseded scores SUPERSEDED
of what it would, for a question about now; a question about before ("what did we use before?") gets the statement
before the current one first.

A candidate's statement is its focus entry: the entry of the chunk (a list item, a short paragraph, a line of a
turn or of a long paragraph) that holds most of the query's weight. A later candidate *restates* an earlier one
when it is dated at least a day later, its focus holds all but MAX_UNCOVERED of the query weight the earlier one's
holds, both hold at least MIN_COVERAGE of what the best candidate holds and MIN_SHARE of the whole query, it says
it changes something (CHANGE: a conversation that comes back to a topic restates nothing), and it scores at least
RESTATED_SCORE of the earlier one's. Each constant was chosen on the knowledge-update bench (bench/knowledge.py)
and LoCoMo together (docs/design.md, "The newest statement first")."""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memoryd.search.keyword import bm25_idf
from memoryd.sources.analyzer import analyze, fold_text
from memoryd.sources.entries import MARK, entries
from memoryd.sources.metadata import note_date
from memoryd.store.rows import ChunkRow

CONSIDERED = 24  # best candidates looked at
WITHIN = 0.4  # a statement restated only when it scores at least this share of the best one's
ENTRY_CACHE = 2048  # chunks whose statements are kept, folded (about their text's size each)
MIN_GAP_SECONDS = 86_400.0  # a day: notes written the same day restate nothing
MIN_COVERAGE = 0.5  # share of the best candidate's query weight a statement's focus must hold to be about it
MIN_SHARE = 0.4  # ... and of the whole query's: a statement that holds less is not about the question
MAX_UNCOVERED = 0.35  # share of the earlier focus's query weight the later one may lack
RESTATED_SCORE = 0.5  # the later statement scores at least this share of the earlier one's
BELOW = 0.98  # a restated statement's score: just under the statement that restates it
SUPERSEDED = 0.6  # a statement a note marks superseded, for a question about now


# words that say a statement replaces an earlier one ("switched to", "no longer", "từ nay", "改用", "เปลี่ยน"):
# a later statement of the same thing without one may be the same thing said again (a conversation comes back to
# a topic), not a change
CHANGE = re.compile(
    r"(?i)\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing|ion)|replac(?:ed|ing)|chang(?:ed|ing)|swapp(?:ed|ing)"
    r"|cut ?over|roll(?:ed)? ?out|upgrad(?:ed|ing)|downgrad(?:ed|ing)|no longer|instead|now uses?|as of"
    r"|from (?:today|now|this \w+) on|starting (?:today|now|this \w+)|retired|deprecated"
    r"|chuyển|đổi|thay|từ nay|từ hôm nay|kể từ|không còn)\b"
    r"|换成|換成|改用|改成|改为|改為|迁移|遷移|迁到|遷到|切换|切換|切到|替换|替換|不再|从今天起|從今天起|今天起"
    r"|เปลี่ยน|ย้าย|สลับ|แทน|เลิกใช้|ตั้งแต่"
)
LONG_ENTRY = 3  # lines: a longer paragraph (a conversation written as a note) is read line by line


@dataclass(frozen=True)
class Focus:
    terms: frozenset[str]  # the query's tokens its focus entry holds
    weight: float  # their share of the query's weight
    marked: bool  # the focus entry is struck through as superseded
    when: float
    change: bool = False  # it says it replaces something (CHANGE)
    dated: bool = True  # its date is when it was said (is_dated)


class _EntryCache:
    """Each chunk's statements, folded, by the chunk's hash: small (a search reads a couple of dozen chunks and
    searches keep finding the same ones), and holding no more than ENTRY_CACHE chunks."""

    def __init__(self) -> None:
        self._held: OrderedDict[tuple[str, bool], tuple[Statement, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, row: ChunkRow) -> tuple[Statement, ...]:
        key = (row.hash, row.source == "sessions")
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                return found
        found = _statements(row.text, key[1])
        with self._lock:
            self._held[key] = found
            while len(self._held) > ENTRY_CACHE:
                self._held.popitem(last=False)
        return found


@dataclass(frozen=True)
class Statement:
    folded: str  # its text, folded as the query's words are, for finding them in it
    marked: bool  # struck through as superseded
    change: bool  # says it replaces something (CHANGE)


def _statements(text: str, transcript: bool) -> tuple[Statement, ...]:
    """A chunk's statements: its entries, a line of a turn or of a long paragraph each."""
    lines = text.split("\n")
    spans = [(i, i) for i in range(len(lines))] if transcript else entries(lines)
    spans = [
        one for first, last in spans for one in ([(first, last)] if last - first < LONG_ENTRY else _each(first, last))
    ]
    found = []
    for first, last in spans:
        entry = "\n".join(lines[first : last + 1])
        found.append(Statement(fold_text(entry), MARK.search(entry) is not None, CHANGE.search(entry) is not None))
    return tuple(found)


def _each(first: int, last: int) -> list[tuple[int, int]]:
    return [(i, i) for i in range(first, last + 1)]


_statements_of = _EntryCache()


def focus(row: ChunkRow, query: Mapping[str, float]) -> Focus:
    """The statement of a chunk that holds most of the query's weight (a query word is held where it appears)."""
    total = sum(query.values()) or 1.0
    best: tuple[float, frozenset[str], bool, bool] = (-1.0, frozenset(), False, False)
    for statement in _statements_of(row):
        held = frozenset(word for word in query if word in statement.folded)
        weight = sum(query[word] for word in held)
        if weight > best[0]:
            best = (weight, held, statement.marked, statement.change)
    return Focus(best[1], best[0] / total, best[2], row.when, best[3], is_dated(row))


def query_weights(query: str, frequencies: Callable[[list[str]], Mapping[str, int]], total: int) -> dict[str, float]:
    """BM25 IDF of each of the query's words that some note holds, from the index's own counts: words most notes hold
    weigh little, and words none holds (the question's own: "which", "does") tell no statement from another."""
    tokens = list(set(analyze(query).body.split()))  # folded, stemmed, segmented: each found in a folded statement
    counts = frequencies(tokens)
    weights = {t: bm25_idf(counts[t], total) for t in tokens if counts.get(t)}
    return {t: weight for t, weight in weights.items() if weight > 0}


def is_dated(row: ChunkRow) -> bool:
    """Its date says when it was said (a dated note's name, a turn's time), not when its file was last saved: only
    such statements are ordered in time (an edit re-dates every undated line of its note)."""
    return row.source == "sessions" or _dated_name(row.path)


@functools.lru_cache(maxsize=65536)
def _dated_name(path: str) -> bool:
    return note_date(path) is not None


def _any_marked(ranked: list[int], rows: Mapping[int, ChunkRow]) -> bool:
    return any("superseded" in rows[cid].text and MARK.search(rows[cid].text) for cid in ranked)


def _restates(later: Focus, earlier: Focus, query: Mapping[str, float], best: float) -> bool:
    """Whether `later` says, later, that what `earlier` said of the thing asked about changed: it holds (nearly)
    all the query words `earlier` holds, and words of a change (CHANGE)."""
    if not later.change or not (later.dated and earlier.dated) or later.when - earlier.when < MIN_GAP_SECONDS:
        return False
    if min(earlier.weight, later.weight) < max(MIN_COVERAGE * best, MIN_SHARE):
        return False
    held = sum(query[t] for t in earlier.terms) or 1.0
    lacking = sum(query[t] for t in earlier.terms - later.terms)
    return lacking <= MAX_UNCOVERED * held


def rerank(
    scores: dict[int, float],
    rows: Mapping[int, ChunkRow],
    question: str,
    frequencies: Callable[[list[str]], Mapping[str, int]],
    total: int,
    *,
    past: bool,
) -> dict[int, str]:
    """Change `scores` in place so that the current statement of each thing asked about ranks first (or, `past`,
    the one before it); returns a note per candidate moved, for `explain`."""
    if not scores:
        return {}
    ranked = [cid for cid in sorted(scores, key=lambda cid: -scores[cid])[:CONSIDERED] if cid in rows]
    times = [rows[cid].when for cid in ranked if is_dated(rows[cid])]
    spread = max(times) - min(times) if times else 0.0
    if len(ranked) < 2 or (spread < MIN_GAP_SECONDS and not _any_marked(ranked, rows)):
        return {}  # nothing dated apart and nothing marked: no statement can have replaced another
    query = query_weights(question, frequencies, total)
    if not query:
        return {}
    foci = {cid: focus(rows[cid], query) for cid in ranked}
    best = max((f.weight for f in foci.values()), default=0.0)
    notes: dict[int, str] = {}
    newer: dict[int, list[int]] = {cid: [] for cid in foci}
    top = scores[ranked[0]]
    changes = [cid for cid in foci if foci[cid].change]  # only a statement of a change restates another
    for earlier in foci if changes else ():
        if foci[earlier].weight < MIN_COVERAGE * best or scores[earlier] < WITHIN * top:
            continue
        for later in changes:
            if scores[later] >= RESTATED_SCORE * scores[earlier] and _restates(foci[later], foci[earlier], query, best):
                newer[earlier].append(later)
    if past:
        _before_first(scores, foci, newer, notes)
        return notes
    for cid, found in foci.items():
        if found.marked:
            scores[cid] *= SUPERSEDED
            notes[cid] = "marked superseded"
    # newest restatements first, so that a chain (Redis -> Memcached -> Valkey) settles in date order
    for cid in sorted(newer, key=lambda c: -foci[c].when):
        if newer[cid]:
            lowest = min(scores[later] for later in newer[cid])
            if scores[cid] >= lowest * BELOW:
                scores[cid] = lowest * BELOW
                notes[cid] = "restated later"
    return notes


def _before_first(
    scores: dict[int, float], foci: Mapping[int, Focus], newer: Mapping[int, list[int]], notes: dict[int, str]
) -> None:
    """For a question about before: the statement just before each current one ranks first, the current one right
    after it (asked "what did we use before?", both are the answer's context)."""
    for current, found in foci.items():
        if newer[current] or found.marked:
            continue
        older = [cid for cid, later in newer.items() if current in later]
        previous = max(older, key=lambda cid: foci[cid].when, default=None)
        if previous is not None and scores[previous] <= scores[current]:
            scores[previous], scores[current] = scores[current], scores[current] * BELOW
            notes[previous] = "the statement before the current one"
