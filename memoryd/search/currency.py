"""Which statement is current. Facts change ("billing's cache moved from Redis to Memcached"), and the first
statement of a fact often reads more like the question than the change does. Among a search's best candidates, a
statement that a later one restates ranks just below it, and a statement a note marks superseded ranks below the
rest, for a question about now; a question about before ("what did we use before?") gets the statement before the
current one first.

A candidate's statement is its focus entry: the entry of the chunk (a list item, a short paragraph, a line of a
turn or of a long paragraph) that holds most of the query's weight. A later candidate *restates* an earlier one
when it is dated at least a day later, its focus holds all but MAX_UNCOVERED of the query weight the earlier one's
holds, both hold at least MIN_COVERAGE of what the best candidate holds and MIN_SHARE of the whole query, it says
it changes something (CHANGE: a conversation that comes back to a topic restates nothing), and it scores at least
RESTATED_SCORE of the earlier one's. Each constant was chosen on the knowledge-update bench (bench/knowledge.py)
and LoCoMo together (docs/design.md, "The newest statement first")."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memoryd.sources.analyzer import analyze
from memoryd.sources.entries import MARK, entries
from memoryd.store.rows import ChunkRow

CONSIDERED = 24  # best candidates looked at
WITHIN = 0.4  # a statement restated only when it scores at least this share of the best one's
ENTRY_CACHE = 8192  # chunks whose entries' tokens are kept
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


def _tokens(text: str) -> set[str]:
    return set(analyze(text).body.split())


@functools.lru_cache(maxsize=ENTRY_CACHE)
def _entries(text: str, transcript: bool) -> tuple[tuple[frozenset[str], bool, bool], ...]:
    """Each statement of a chunk's text (an entry; a line of a turn or of a long paragraph) as its tokens, whether
    it is marked superseded and whether it says it changes something; kept for the chunks that searches keep
    finding: analysing them is most of what this stage costs."""
    lines = text.split("\n")
    spans = [(i, i) for i in range(len(lines))] if transcript else entries(lines)
    spans = [
        one for first, last in spans for one in ([(first, last)] if last - first < LONG_ENTRY else _each(first, last))
    ]
    found = []
    for first, last in spans:
        entry = "\n".join(lines[first : last + 1])
        found.append((frozenset(_tokens(entry)), MARK.search(entry) is not None, CHANGE.search(entry) is not None))
    return tuple(found)


def _each(first: int, last: int) -> list[tuple[int, int]]:
    return [(i, i) for i in range(first, last + 1)]


def focus(row: ChunkRow, query: Mapping[str, float], words: frozenset[str] | None = None) -> Focus:
    """The entry of a chunk that holds most of the query's weight (`words`: the query's, when the caller has them)."""
    total = sum(query.values()) or 1.0
    words = frozenset(query) if words is None else words
    best: tuple[float, frozenset[str], bool, bool] = (-1.0, frozenset(), False, False)
    for tokens, marked, change in _entries(row.text, row.source == "sessions"):
        held = tokens & words
        weight = sum(query[t] for t in held) if held else 0.0
        if weight > best[0]:
            best = (weight, held, marked, change)
    return Focus(best[1], best[0] / total, best[2], when(row), best[3])


def query_weights(query: str, frequencies: Callable[[list[str]], Mapping[str, int]], total: int) -> dict[str, float]:
    """IDF of each of the query's tokens that some note holds, from the index's own counts: words most notes hold
    weigh little, and words none holds (the question's own: "which", "does") tell no statement from another."""
    tokens = list(_tokens(query))
    counts = frequencies(tokens)
    weights = {t: math.log((total - counts[t] + 0.5) / (counts[t] + 0.5)) for t in tokens if counts.get(t)}
    return {t: w for t, w in weights.items() if w > 0}


def when(row: ChunkRow) -> float:
    return row.ts if row.ts is not None else row.mtime_ns / 1e9


def _any_marked(ranked: list[int], rows: Mapping[int, ChunkRow]) -> bool:
    return any("superseded" in rows[cid].text and MARK.search(rows[cid].text) for cid in ranked)


def _restates(later: Focus, earlier: Focus, query: Mapping[str, float], best: float) -> bool:
    """Whether `later` says, later, that what `earlier` said of the thing asked about changed: it holds (nearly)
    all the query words `earlier` holds, and words of a change (CHANGE)."""
    if not later.change or later.when - earlier.when < MIN_GAP_SECONDS:
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
    times = [when(rows[cid]) for cid in ranked]
    if len(ranked) < 2 or (max(times) - min(times) < MIN_GAP_SECONDS and not _any_marked(ranked, rows)):
        return {}  # nothing dated apart and nothing marked: no statement can have replaced another
    query = query_weights(question, frequencies, total)
    if not query:
        return {}
    words = frozenset(query)
    foci = {cid: focus(rows[cid], query, words) for cid in ranked}
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
