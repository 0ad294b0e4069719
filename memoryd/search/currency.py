"""Which statement is current. Facts change ("billing's cache moved from Redis to Memcached"), and the first
statement of a fact often reads more like the question than the change does. Among a search's best candidates, a
statement that a later one restates ranks just below it, and a statement a note marks superseded scores SUPERSEDED
of what it would, for a question about now; a question about before ("what did we use before?") gets the statement
before the current one first.

A question's weight is the BM25 IDF of its words that are not function words ("which", "does", "的", "คือ", "now":
search.function_words). A candidate's statement is its focus entry: the entry of the chunk (a list item, a short
paragraph, a line of a turn or of a long paragraph) that holds most of that weight, each word matched as a word. A
later candidate *restates* an earlier one when it is dated at least a day later, its focus holds all but
MAX_UNCOVERED of the query weight the earlier one's holds and lacks no word weighing more than MAX_LACKING_WORD of
the heaviest ("checkout's flag service moved" lacks "ledger": it restates nothing "ledger's flag service" said), both
hold at least MIN_COVERAGE of what the best candidate holds and MIN_SHARE of the whole query, it says it changes
something (CHANGE: a conversation that comes back to a topic restates nothing), and it scores at least
RESTATED_SCORE of the earlier one's; the newest restatement of one thing takes the earlier one's score, which ranks
just below it. Asked about before, a thing's history is the statements that restate each other both ways (one
scoring under WITHIN of the best too: it is only left alone when asked about now), and the one replaced is the one
the current statement names the value of ("no longer uses Memcached"; a name as written: "GitLab" names nothing of
"GitHub"), else one that was a change itself, else the latest. Each constant was chosen on the knowledge-update
bench (bench/knowledge.py) and LoCoMo together (docs/design.md, "The newest statement first")."""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memoryd.search.function_words import content_tokens, function_words
from memoryd.search.keyword import bm25_idf
from memoryd.sources.analyzer import analyze, fold_text
from memoryd.sources.entries import MARK, entries
from memoryd.sources.metadata import note_date
from memoryd.sources.text import DENSE_CHAR, HAN, SCRIPT_EDGE, WORD_CHAR_CLASS
from memoryd.store.rows import ChunkRow

CONSIDERED = 80  # best candidates looked at: both sides of the pool of a search for 10 results (candidate_multiplier 4)
WITHIN = 0.4  # a statement restated only when it scores at least this share of the best one's
ENTRY_CACHE = 2048  # chunks whose statements are kept, folded (about their text's size each)
MIN_GAP_SECONDS = 86_400.0  # a day: notes written the same day restate nothing
MIN_COVERAGE = 0.5  # share of the best candidate's query weight a statement's focus must hold to be about it
MIN_SHARE = 0.4  # ... and of the whole query's: a statement that holds less is not about the question
MAX_UNCOVERED = 0.35  # share of the earlier focus's query weight the later one may lack
MAX_LACKING_WORD = 0.5  # ... and no word it lacks weighs more than this share of the heaviest the earlier one holds
RESTATED_SCORE = 0.25  # the later statement scores at least this share of the earlier one's
BELOW = 0.98  # a restated statement's score: just under the statement that restates it
SUPERSEDED = 0.6  # a statement a note marks superseded, for a question about now


# words that say a statement replaces an earlier one ("switched to", "no longer", "từ nay", "改用", "เปลี่ยน"):
# a later statement of the same thing without one may be the same thing said again (a conversation comes back to
# a topic), not a change
CHANGE = re.compile(
    r"(?i)\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:e|es|ed|ing|ion)|replac(?:ed|ing)|chang(?:ed|ing)|swapp(?:ed|ing)"
    r"|cut ?over|roll(?:ed)? ?out|upgrad(?:ed|ing)|downgrad(?:ed|ing)|no longer|instead|now uses?|as of"
    r"|from today|from now on|from this \w+ on|starting (?:today|now|this \w+)|going forward|retired|deprecated"
    r"|chuyển|đổi|thay|từ nay|từ hôm nay|kể từ|không còn|không (?:dùng|sử dụng)[^\n]{0,40}nữa"
    r"|(?:bây giờ|giờ đây|giờ|hiện tại|hiện nay) (?:dùng|sử dụng|là))\b"
    r"|换成|換成|改用|改成|改为|改為|迁移|遷移|迁到|遷到|切换|切換|切到|替换|替換|不再|从今天起|從今天起|今天起|上线|上線"
    r"|(?:现在|現在|目前)(?:用|使用|采用|採用)|(?:本周|本週|这周|這週|本月|今天|今日)(?:起|开始|開始)"
    r"|เปลี่ยน|ย้าย|สลับ|แทน|เลิกใช้|ตั้งแต่|(?:ตอนนี้|ปัจจุบัน)[^\n]{0,40}ใช้|เริ่ม(?:วันนี้|สัปดาห์นี้|เดือนนี้)"
)
# words that say a thing is used ("before we used Redis", "trước khi dùng", "用Redis之前", "ก่อนใช้ Redis"): an
# event named by them is told by what is used
USE = re.compile(
    r"(?i)\b(?:us(?:e|es|ed|ing)|(?:chuyển|đổi|thay) (?:sang|qua|bằng)|dùng|sử dụng)\b|使用|采用|採用|用|ใช้(?:งาน)?"
)
_WRITTEN = re.compile(f"{WORD_CHAR_CLASS}+")
SPEAKERS = frozenset(("user", "assist", "assistant", "system"))  # a transcript line's "User:", "Assistant:"
LONG_ENTRY = 3  # lines: a longer paragraph (a conversation written as a note) is read line by line


@dataclass(frozen=True)
class Focus:
    terms: frozenset[str]  # the query's tokens its focus entry holds
    weight: float  # their share of the query's weight
    marked: bool  # the focus entry is struck through as superseded
    when: float
    change: bool = False  # it says it replaces something (CHANGE)
    dated: bool = True  # its date is when it was said (is_dated)
    words: frozenset[str] = frozenset()  # its focus entry's words as written, but those saying it is a change


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
    tokens: frozenset[str]  # its words as the analyzer makes them (folded, stemmed, segmented), as a query's are
    folded: str  # its text folded: where a word of an unspaced script is looked for (search.function_words)
    marked: bool  # struck through as superseded
    change: bool  # says it replaces something (CHANGE)
    changing: frozenset[str] = frozenset()  # the words that say so ("switched", "no longer"): no value it names
    written: frozenset[str] = frozenset()  # its words as written, but those saying it is a change (_written)


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
        changed = CHANGE.findall(entry)
        marked = MARK.search(entry) is not None
        changing = _words(" ".join(changed))
        written = frozenset(w for w in _written(entry) if not _words(w) <= changing)
        found.append(Statement(_words(entry), fold_text(entry), marked, bool(changed), changing, written))
    return tuple(found)


@functools.lru_cache(maxsize=65536)
def _words(text: str) -> frozenset[str]:
    """A statement's words as the analyzer makes them; entries recur (overlapping chunks, a note saved again)."""
    return frozenset(analyze(text).body.split())


def _written(entry: str) -> frozenset[str]:
    """Its words as written: a name stays whole ("GitLab" and "GitHub" share no word, though the analyzer makes
    git lab and git hub of them); a word of an unspaced script is the analyzer's."""
    found: set[str] = set()
    for run in _WRITTEN.findall(entry):
        for piece in SCRIPT_EDGE.split(run):
            if DENSE_CHAR.search(piece):
                found.update(_words(piece))
            elif piece:
                found.add(piece)
    return frozenset(found)


def _each(first: int, last: int) -> list[tuple[int, int]]:
    return [(i, i) for i in range(first, last + 1)]


_statements_of = _EntryCache()


def words_of(row: ChunkRow) -> frozenset[str]:
    """Every word of a chunk's statements, as the analyzer makes them."""
    return frozenset().union(*(statement.tokens for statement in _statements_of(row)))


def event_words(event: str) -> frozenset[str]:
    """The words that tell an event a question is relative to ("before the switch to Redis": "redis"): neither a
    question's words nor those saying a change or a use; none when it names nothing ("before the switch")."""
    return frozenset(content_tokens(unchanging(event)))


def unchanging(text: str) -> str:
    """The text without the words that say a change or a use: what is left names things."""
    return CHANGE.sub(" ", USE.sub(" ", text))


def focus(row: ChunkRow, query: Mapping[str, float]) -> Focus:
    """The statement of a chunk that holds most of the query's weight (_holds: a query word is held as a word)."""
    total = sum(query.values()) or 1.0
    best: tuple[float, frozenset[str], Statement | None] = (-1.0, frozenset(), None)
    asked = frozenset(query)
    unspaced = [word for word in asked if DENSE_CHAR.match(word)]
    for statement in _statements_of(row):
        held = statement.tokens & asked
        if unspaced:
            held |= {word for word in unspaced if _holds(statement, word)}
        if not held and best[2] is not None:
            continue
        weight = sum(map(query.__getitem__, held))
        if weight > best[0]:
            best = (weight, held, statement)
    weight, held, said = best
    if said is None:
        return Focus(frozenset(), 0.0, False, row.when, False, is_dated(row))
    return Focus(held, weight / total, said.marked, row.when, said.change, is_dated(row), said.written)


def _holds(statement: Statement, word: str) -> bool:
    """A query word is held as a word of the statement. A word of an unspaced script may be segmented differently in
    a note and in a question: a Thai one is held inside a longer word, a Chinese one where its characters are
    ("云服务商用的" -> 云 服务 商用 in a question, "云服务商。" -> 云 服务 商 in a note; a Thai letter is no word). A
    stem is never looked for inside the text: "price" (of "pricing") is not in "pricing", and "us" (of "use") is
    in "status"."""
    if word in statement.tokens:
        return True
    if HAN.match(word):
        return all(char in statement.folded for char in word)
    return DENSE_CHAR.match(word) is not None and word in statement.folded


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
    weights = [focus(rows[cid], query).weight for cid in candidates]
    return candidates[weights.index(max(weights))]


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
    if _lacks_heavy(later, earlier, query):
        return False  # "shipping's flag service moved" restates nothing "ledger's flag service" said
    held = sum(query[t] for t in earlier.terms) or 1.0
    return sum(query[t] for t in earlier.terms - later.terms) <= MAX_UNCOVERED * held


def _lacks_heavy(one: Focus, other: Focus, query: Mapping[str, float]) -> bool:
    """`one` lacks a word of the question `other` holds that weighs more than MAX_LACKING_WORD of the heaviest."""
    lacking = [query[t] for t in other.terms - one.terms]
    return bool(lacking) and max(lacking) > MAX_LACKING_WORD * max(query[t] for t in other.terms)


def rerank(
    scores: dict[int, float],
    rows: Mapping[int, ChunkRow],
    question: str,
    frequencies: Callable[[list[str]], Mapping[str, int]],
    total: int,
    *,
    past: bool,
    anchor: str = "",
) -> dict[int, str]:
    """Change `scores` in place so that the current statement of each thing asked about ranks first (or, `past`,
    the one before it); returns a note per candidate moved, for `explain`. `anchor`, the event a question about
    before names ("before Valkey"), says when and not what: only the current statement can hold it. Scores may
    change without a note (the current statement right after the one before it)."""
    if not scores:
        return {}
    ranked = [cid for cid in sorted(scores, key=lambda cid: -scores[cid])[:CONSIDERED] if cid in rows]
    times = [rows[cid].when for cid in ranked if is_dated(rows[cid])]
    spread = max(times) - min(times) if times else 0.0
    if len(ranked) < 2 or (spread < MIN_GAP_SECONDS and not _any_marked(ranked, rows)):
        return {}  # nothing dated apart and nothing marked: no statement can have replaced another
    query = query_weights(question, frequencies, total)
    if anchor:  # "before billing moved to Valkey" still asks about billing: only words said in the anchor alone go
        elsewhere = set(content_tokens(question.replace(anchor, " ")))
        for word in set(content_tokens(anchor)) - elsewhere:
            query.pop(word, None)
    if not query:
        return {}
    foci = {cid: focus(rows[cid], query) for cid in ranked}
    best = max((f.weight for f in foci.values()), default=0.0)
    notes: dict[int, str] = {}
    newer: dict[int, list[int]] = {cid: [] for cid in foci}
    # of those, the ones that say the same of it as it of them: its history, not a better match of a weaker one
    same: dict[int, list[int]] = {cid: [] for cid in foci}
    top = scores[ranked[0]]
    floor = max(MIN_COVERAGE * best, MIN_SHARE)  # what both statements of a restatement hold of the question
    changes = [cid for cid, f in foci.items() if f.change and f.dated and f.weight >= floor]  # only a change restates
    for earlier in foci if changes else ():
        said = foci[earlier]
        if said.weight < floor or not said.dated or (scores[earlier] < WITHIN * top and not past):
            continue
        for later in changes:
            if foci[later].when - said.when < MIN_GAP_SECONDS or scores[later] < RESTATED_SCORE * scores[earlier]:
                continue
            if _restates(foci[later], said, query, best):
                newer[earlier].append(later)
                if not _lacks_heavy(said, foci[later], query):
                    same[earlier].append(later)
    if past:
        _before_first(scores, foci, same, notes, _named_values(foci, query, frequencies))
        return notes
    for cid, found in foci.items():
        if found.marked:
            scores[cid] *= SUPERSEDED
            notes[cid] = "marked superseded"
    # newest restatements first, so that a chain (Redis -> Memcached -> Valkey) settles in date order: the newest
    # statement takes the score of what it replaced, which ranks just below it
    for cid in sorted(newer, key=lambda c: -foci[c].when):
        if newer[cid]:
            latest = max(newer[cid], key=lambda c: foci[c].when)
            # the question matched the old statement: the new one, of the same thing, takes its place
            if latest in same[cid] and scores[latest] < scores[cid]:
                scores[latest] = scores[cid]
                notes[latest] = "in the place of the statement it replaced"
            lowest = min(scores[later] for later in newer[cid])
            if scores[cid] >= lowest * BELOW:
                scores[cid] = lowest * BELOW
                notes[cid] = "restated later"
    return notes


def _named_values(
    foci: Mapping[int, Focus], query: Mapping[str, float], frequencies: Callable[[list[str]], Mapping[str, int]]
) -> Callable[[int, int], bool]:
    """Whether a statement names what an earlier one said ("no longer uses Memcached" of "switched to Memcached"):
    they share a word that is not the question's, nor one a question or a change is made of ("switched", "no
    longer"), nor a speaker's label, and that no more notes hold than hold the question's most specific word: a name,
    not "team"."""
    ignored = function_words() | set(query) | SPEAKERS
    tokens = {w: _words(w) for f in foci.values() for w in f.words}
    words = {t for found in tokens.values() for t in found if t not in ignored}
    counts = frequencies(sorted(words)) if words else {}
    ceiling = min((n for n in frequencies(sorted(query)).values() if n), default=0)
    specific = {w for w in words if 0 < counts.get(w, 0) <= ceiling}
    names = {w for w, found in tokens.items() if found and found <= specific}

    def named(later: int, earlier: int) -> bool:
        return bool(
            {w.casefold() for w in foci[later].words & names} & {w.casefold() for w in foci[earlier].words & names}
        )

    return named


def _before_first(
    scores: dict[int, float],
    foci: Mapping[int, Focus],
    newer: Mapping[int, list[int]],
    notes: dict[int, str],
    named: Callable[[int, int], bool],
) -> None:
    """For a question about before: the statement just before the current one ranks first, the current one right
    after it (asked "what did we use before?", both are the answer's context). The thing asked about is the one whose
    current statement holds most of the question (then scores best): its two go above every other candidate; any
    other thing's previous statement only trades places with its current one."""
    chains = []
    for current, found in foci.items():
        if newer[current] or found.marked:
            continue
        older = [cid for cid, later in newer.items() if current in later]
        # the statement it replaced: one it names the value of, else one that was itself a change, else the latest
        replaced = [cid for cid in older if named(current, cid)] or [cid for cid in older if foci[cid].change]
        previous = max(replaced or older, key=lambda cid: foci[cid].when, default=None)
        if previous is not None:
            chains.append((found.weight, scores[current], current, previous))
    if not chains:
        return
    top = max(scores.values())
    chains.sort(key=lambda chain: (chain[0], chain[1]), reverse=True)
    for rank, (_, _, current, previous) in enumerate(chains):
        if rank == 0:
            scores[previous], scores[current] = top / BELOW**2, top / BELOW
        elif scores[previous] <= scores[current]:
            scores[previous], scores[current] = scores[current], scores[current] * BELOW
        else:
            continue
        notes[previous] = "the statement before the current one"
