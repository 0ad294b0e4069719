"""What a search query says about time: the days it is about, whether it asks about an earlier or the present
state, and the event it is relative to ("what did billing use before the migration?": past, anchor "the
migration", before it). One precompiled scan (temporal_words.SCANNER), as it runs on every search and recall.

Days are the calendar days of `now` as given (the user's local time), bounded at UTC midnight, as a dated note is
stored at noon UTC of its date; weeks start on Monday. The decisions keep a query that did not mean time from being
filtered by it:
- The future ("next week") sets nothing, nor does a question asking for a date ("when did we move to Postgres?").
  "in March" is the latest March not after today, "last March" not this month's; "recently" is today and the
  RECENT_DAYS before it; "the past week" the last 7 days, "last week" the calendar week.
- "before"/"after"/"since" take a date after them, else an event (the anchor): a noun phrase ("before the
  migration") unless the sentence is an instruction ("run the tests before the deploy"); a clause ("before
  deploying") only if the query speaks of the past ("what did we use before deploying Redis?"); never one with a
  present verb, a cause or a condition ("since billing uses Redis"). Other languages: only in a question or a
  sentence marking the past.
- past: an earlier-state word ("used to", "the old", "trước đây", "以前", "เมื่อก่อน"); "before" ending a clause ("what
  did we use before?") but not the conversation ("as I said before"); an anchor's before side, unless the sentence
  is advice or a plan ("what should we check before the migration?").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from memoryd.search import temporal_words as words
from memoryd.search.temporal_words import YEAR, back, month_span, rolling, span
from memoryd.sources.analyzer import fold
from memoryd.sources.text import DENSE_CHAR

Side = Literal["before", "after"]
_EPOCH = date(1970, 1, 1).toordinal()
_JOINED = re.compile(r"[\s,]*(?:and|or|to|until|through|-|–)\s*")  # "between March and June": June is a date too
_BESIDE = re.compile(r"[\s,]*(?:of|de|del)?[\s,]*")  # a month beside its year: "March of last year", "去年3月"
_CLAUSE = re.compile(r"[^,.;:!?，。？！、\n]*")
_CHUNK = re.compile(r"\S+")
_LATIN_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_THAI_JOINERS = ("ไป", "มา", "เป็น", "ที่", "ใน", "จาก", "สู่", "ของ", "กับ")
_DATE_CONTEXT = frozenset(fold(w) for w in words.DATE_CONTEXT)
_BINDS = frozenset(("before", "after", "since", "until", "from"))
_Cues = tuple[frozenset[str], frozenset[str], re.Pattern[str]]


def _cues(phrases: Sequence[str]) -> _Cues:
    """Phrases to look for: Latin words (as typed and unmarked) and the rest, looked for anywhere."""
    latin = frozenset(p for p in phrases if p.isalpha() and not DENSE_CHAR.match(p))
    others = "|".join(re.escape(p) for p in phrases if p not in latin)
    return latin, frozenset(fold(p) for p in latin), re.compile(others)


_MODALS, _ASKS = _cues(words.MODALS), _cues((*words.QUESTION_WORDS, *words.PAST_MARKERS))


@dataclass(frozen=True)
class TimeQuery:
    """What a query says about time. Neither past nor current: no cue, and the caller reads it as the present."""

    start: float | None = None  # UTC epoch seconds, inclusive; None: open
    end: float | None = None  # exclusive; None: open
    phrase: str | None = None  # the words that set the range, as the query has them ("last week")
    past: bool = False  # asks about an earlier state ("what did we use before?")
    current: bool = False  # asks about the present state explicitly ("what is it now?")
    anchor: str | None = None  # the event the query is relative to ("before the migration": "the migration")
    anchor_side: Side | None = None  # which side of it ("since" is after)

    @property
    def has_range(self) -> bool:
        return self.start is not None or self.end is not None


NO_TIME = TimeQuery()


@dataclass
class _Token:
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


class _Query:
    """The query as matched (lowercase) and as typed, and what is asked of it more than once."""

    def __init__(self, query: str, now: datetime) -> None:
        text = unicodedata.normalize("NFC", query)
        self.low = text.lower().replace("’", "'")
        self.text = text if len(text) == len(self.low) else self.low
        self.now, self.today = now, now.date()
        self.words: set[str] = set()  # its Latin words, once it has something to read

    def mentions(self, cues: _Cues, tolerant: bool = True) -> bool:
        """Any of the cues: a Latin word whole (with or without its marks if tolerant), anything else anywhere."""
        latin, folded, others = cues
        if self.words & latin or (tolerant and folded & {fold(w) for w in self.words}):
            return True
        return bool(others.search(self.low))

    def clause(self, start: int) -> re.Match[str]:
        """The rest of the clause from `start`, to its punctuation."""
        return _CLAUSE.match(self.low, start)  # type: ignore[return-value]

    def context(self, start: int) -> str:
        """The word before a position, without its punctuation."""
        before = self.low[max(0, start - 24) : start].split()
        return before[-1].strip("(\"'“”,;:") if before else ""

    def dated_by_context(self, start: int, tokens: list[_Token]) -> bool:
        word, last = self.context(start), tokens[-1] if tokens else None
        if fold(word) in _DATE_CONTEXT or (DENSE_CHAR.search(word) and word.endswith(words.DENSE_CONTEXT)):
            return True
        return bool(last and last.kind in ("range", "month") and _JOINED.fullmatch(self.low, last.end, start))


def parse_time(query: str, now: datetime) -> TimeQuery:
    """What the query says about time; `now` is the user's present, and its calendar day is "today"."""
    q = _Query(query, now)
    tokens: list[_Token] = []
    for match in words.SCANNER.finditer(q.low):
        try:
            token = _READERS[match.lastgroup or ""](match, q, tokens)
        except (ValueError, OverflowError, KeyError):  # February 30, a month 13, a year out of range
            continue
        if token is not None:
            tokens.append(token)
    if not tokens:
        return NO_TIME
    q.words = set(_LATIN_WORD.findall(q.low))
    return _combine(_months(tokens, q), q)


def _range(match: re.Match[str], days: tuple[int, int], year: int | None = None) -> _Token:
    return _Token("range", match.start(), match.end(), *days, year=year)


def _read_iso(match: re.Match[str], q: _Query, tokens: list[_Token]) -> _Token:
    year, month = words.year(match["iy"]), int(match["im"])
    day = date(year, month, int(match["id"] or 1)).toordinal()
    return _range(match, (day, day + 1) if match["id"] else month_span(year, month))


def _read_count(match: re.Match[str], q: _Query, tokens: list[_Token]) -> _Token | None:
    """ "3 days ago", "cách đây 3 ngày", "三天前", "3 วันที่แล้ว"; "the past 3 days", "3 ngày qua", "过去三天"."""
    count, unit = words.count(match["n"]), words.UNIT_OF[words.key(match["unit"])]
    cues = {words.key(match[cue]) for cue in ("pre", "post") if match[cue]}
    if cues & words.AGO:
        return _range(match, back(q.now, unit, count))
    if not cues and not match["mid"]:
        return None  # "in 3 days", "3 weeks of work"
    return _range(match, rolling(q.now, unit, count[1] if isinstance(count, tuple) else count))


def _read_month(match: re.Match[str], q: _Query, tokens: list[_Token]) -> _Token | None:
    day = match["md"] or match["md2"] or match["td"] or match["vd"] or match["zd"]
    year = match["my"] or match["ty"] or match["vy"] or match["zy"]
    name = match["mn"] or match["tm"] or match["vm"]
    alone = match["mn"] and not day and not year
    if alone and name in words.MONTH_ABBREVIATIONS:
        return None  # "Mar"
    if name == "may" and q.text[match.start("mn")] != "M":
        return None  # the verb
    month = words.MONTH_OF[words.key(name)] if name else words.number(match["zm"] or match["vn"])
    if not 1 <= month <= 12:
        raise ValueError(month)
    hint = q.context(match.start()) if not day and not year else ""
    hint = "?" if alone and not q.dated_by_context(match.start(), tokens) else hint  # only beside a year
    token = _Token("month", match.start(), match.end(), month=month, hint=hint)
    token.day, token.year = words.number(day) if day else None, words.year(year) if year else None
    return token


def _read_year(match: re.Match[str], q: _Query, tokens: list[_Token]) -> _Token | None:
    if match["zy2"] is None and not q.dated_by_context(match.start(), tokens):
        return None  # "port 2024"
    year = words.year(match["zy2"] or match.group())
    return _range(match, (date(year, 1, 1).toordinal(), date(year + 1, 1, 1).toordinal()), year)


def _read_word(match: re.Match[str], q: _Query, tokens: list[_Token]) -> _Token:
    kind, value = words.LITERALS[words.key(match.group())]
    if kind == "calendar":
        unit, offset = value
        return _range(match, span(q.now, unit, offset), q.today.year + offset if unit == YEAR else None)
    if kind in ("rolling", "fuzzy"):
        unit, *count = value
        return _range(match, rolling(q.now, unit, count[0]) if kind == "rolling" else back(q.now, unit, tuple(count)))
    role, lang = value if kind == "connector" else ("", "")
    return _Token(kind, match.start(), match.end(), role=role, lang=lang)


_READERS = dict(iso=_read_iso, count=_read_count, month=_read_month, year=_read_year, word=_read_word)


def _months(tokens: list[_Token], q: _Query) -> list[_Token]:
    """Dates the months: one beside a whole year takes it ("March last year", "tháng 3 năm ngoái", "去年3月"),
    others are the most recent not after today ("last March": nor this month's)."""
    paired: list[_Token] = []
    for token in tokens:
        last = paired[-1] if paired else None
        if last and {last.kind, token.kind} == {"month", "range"} and _BESIDE.fullmatch(q.low, last.end, token.start):
            month, whole = (last, token) if last.kind == "month" else (token, last)
            if month.year is None and whole.year is not None:
                month.year, month.start, month.end, month.hint = whole.year, last.start, token.end, ""
                paired[-1] = month
                continue
        paired.append(token)
    this_month = date(q.today.year, q.today.month, 1).toordinal()
    for token in paired:
        if token.kind == "month" and (token.hint != "?" or token.year):
            latest = this_month - 1 if token.hint == "last" and not token.day else q.today.toordinal()
            _date_month(token, token.year or q.today.year, None if token.year or token.hint == "this" else latest)
    return [t for t in paired if t.kind != "month"]


def _date_month(token: _Token, year: int, latest: int | None) -> None:
    """Dates a month (or a day of it) in `year`, or in the latest year up to it where it begins by `latest`."""
    for candidate in range(year, year - (9 if latest else 1), -1):
        try:
            lo = date(candidate, token.month, token.day or 1).toordinal()
        except ValueError:  # February 29 of a common year
            continue
        if latest is None or lo <= latest:
            token.kind, token.lo = "range", lo
            token.hi = lo + 1 if token.day else month_span(candidate, token.month)[1]
            return


def _combine(tokens: list[_Token], q: _Query) -> TimeQuery:
    """Dates alone join into one range, a connector's date bounds it; cues and events are read on the way."""
    plain: list[tuple[int, int]] = []
    lower: list[int] = []
    upper: list[int] = []
    spans: list[_Token] = []
    past = current = False
    anchor: tuple[str, Side] | None = None
    ranges = [t.kind == "range" for t in tokens] + [False]  # "until" between two dates joins them, like "to"
    tokens = [t for j, t in enumerate(tokens) if not (t.role == "until" and ranges[j - 1] and ranges[j + 1])]
    i = 0
    while i < len(tokens):
        token, (nxt, then) = tokens[i], ([*tokens[i + 1 : i + 3], None, None])[:2]
        i += 1
        if token.kind == "range" and nxt and nxt.role.startswith("post_") and not q.low[token.end : nxt.start].strip():
            _bound(nxt.role[5:], token, lower, upper)  # "3月之前", "上周以来"
            spans += (token, nxt)
            i += 1
        elif token.kind == "range":
            plain.append((token.lo, token.hi))
            spans.append(token)
        elif token.kind in ("current", "past"):
            current = current or token.kind == "current"
            past = past or (token.kind == "past" and not _conversational(q, token))
        elif nxt and nxt.kind == "range" and token.role in _BINDS and not q.low[token.end : nxt.start].strip():
            if _until(q, token, nxt, then):
                plain.append((nxt.lo, then.hi))  # type: ignore[union-attr]
                spans.append(then)  # type: ignore[arg-type]
                i += 1
            elif token.role == "from" and not (then and then.role == "post_since"):
                plain.append((nxt.lo, nxt.hi))
            else:  # "从上周开始": from last week on
                _bound("since" if token.role == "from" else token.role, nxt, lower, upper)
            spans += (token, nxt)
            i += 1
        else:
            event = _event(token, tokens[: i - 1], q)
            anchor = anchor or event
            if token.role in ("before", "post_before") and (
                event or _bare(q, token) or (token.lang == "zh" and not _framed_event(q, token, tokens[: i - 1]))
            ):
                past = past or not (q.mentions(_MODALS, False) if event else _conversational(q, token))
    lo, hi = min((p[0] for p in plain), default=None), max((p[1] for p in plain), default=None)
    lo = max(lower + ([] if lo is None else [lo]), default=None)
    hi = min(upper + ([] if hi is None else [hi]), default=None)
    if lo is not None and hi is not None and lo >= hi:
        lo = hi = None  # bounds that contradict ("after May, before March"): nothing rather than a wrong range
    start, end = (None if day is None else (day - _EPOCH) * 86400.0 for day in (lo, hi))
    phrase = _phrase(q, spans) if start is not None or end is not None else None
    return TimeQuery(start, end, phrase, past, current, *(anchor or (None, None)))


def _until(q: _Query, token: _Token, first: _Token, then: _Token | None) -> bool:
    """Whether "from"/"since" a date runs to a second one ("from March to June"); June then follows March."""
    if token.role not in ("from", "since") or not then or then.kind != "range":
        return False
    if not words.TO.fullmatch(q.low, first.end, then.start):
        return False
    if then.hi <= first.lo and then.day is None and then.month and not then.year:
        _date_month(then, date.fromordinal(first.lo).year + (then.month <= first.month), None)
    return True


def _bound(role: str, dated: _Token, lower: list[int], upper: list[int]) -> None:
    """Before a date: up to its first day; until it: through its last; after it: from the day after; since: from it."""
    (upper if role in ("before", "until") else lower).append(dated.lo if role in ("before", "since") else dated.hi)


def _phrase(q: _Query, spans: list[_Token]) -> str:
    """The words that set the range, neighbours joined ("from March to June"), others apart."""
    parts: list[list[int]] = []
    for token in sorted(spans, key=lambda t: t.start):
        gap = q.low[parts[-1][1] : token.start] if parts else "?"
        if parts and (not gap.strip(" ,") or words.TO.fullmatch(gap)):
            parts[-1][1] = max(parts[-1][1], token.end)
        else:
            parts.append([token.start, token.end])
    return " ".join(q.text[a:b] for a, b in parts)


def _conversational(q: _Query, token: _Token) -> bool:
    """ "as I said before", "as previously discussed": about the conversation, not an earlier state."""
    near = _LATIN_WORD.findall(q.low, max(0, token.start - 40), token.start)[-3:]
    near += _LATIN_WORD.findall(q.low, token.end, token.end + 20)[:1]
    return any(w in words.EN_DISCOURSE for w in near)


def _bare(q: _Query, token: _Token) -> bool:
    """English "before" with nothing after it in its clause: "what did we use before?"."""
    return token.lang == "en" and not q.clause(token.end).group().strip()


def _event(token: _Token, earlier: list[_Token], q: _Query) -> tuple[str, Side] | None:
    """The event an unbound "before"/"after"/"since" is relative to, if the sentence asks about one."""
    if token.role.startswith("post_"):
        text = _framed_event(q, token, earlier)
    elif token.role not in ("before", "after", "since") or token.lang in ("", "zh"):
        return None
    else:
        text = (_english_event(q, token) if token.lang == "en" else _words_event(q, token)) or ""
    if not text or (token.lang != "en" and not q.mentions(_ASKS)):
        return None
    return text, "before" if token.role in ("before", "post_before") else "after"


def _english_event(q: _Query, token: _Token) -> str | None:
    """A noun phrase ("the migration"), or a clause about the past ("we migrated"; "deploying" after "did")."""
    if q.context(token.start) in words.EN_NOT_BEFORE_AFTER:
        return None  # "look after the servers"
    chunks = list(_CHUNK.finditer(q.low, token.end, q.clause(token.end).end()))[:6]
    if not chunks or chunks[0].group() in words.EN_NO_EVENT:
        return None  # "since when", "before that"
    kept: list[re.Match[str]] = []
    for chunk in chunks:
        if chunk.group() in words.EN_CONDITION:
            return None  # "since billing uses Redis", "after the cache is warm"
        if kept and chunk.group() in words.EN_CLAUSE_END:
            break
        kept.append(chunk)
    first, verb = kept[0].group(), kept[1].group() if len(kept) > 1 else ""
    if first in words.EN_SUBJECTS or (first.endswith("ing") and len(first) > 4):
        if not (q.words & words.EN_PAST_MARKERS or verb in words.EN_IRREGULAR_PAST or verb.endswith("ed")):
            return None  # "before deploying, run the tests", "before we migrate"
    elif _instruction(q):
        return None
    return q.text[kept[0].start() : kept[-1].end()]


def _instruction(q: _Query) -> bool:
    """Starts with an imperative, or does after a leading clause ("Before the deploy, run the tests")."""
    comma = q.low.find(",")
    firsts = (_LATIN_WORD.search(q.low), _LATIN_WORD.search(q.low, comma + 1) if comma > 0 else None)
    return any(w is not None and w.group() in words.EN_IMPERATIVES for w in firsts)


def _words_event(q: _Query, token: _Token) -> str:
    """Vietnamese: up to six words, ending before a conjunction or a question word. Thai: up to the next space,
    with a Latin name a word leads into ("ย้ายไป Postgres"); a bare ก่อน/หลัง only where a phrase starts."""
    if q.low[token.start : token.end] in words.TH_AFTER_SPACE and q.low[token.start - 1 : token.start].strip():
        return ""
    kept: list[re.Match[str]] = []
    for chunk in list(_CHUNK.finditer(q.low, token.end, q.clause(token.end).end()))[:6]:
        joins = kept and kept[-1].group().endswith(_THAI_JOINERS) and chunk.group().isascii()
        if token.lang == "th" and (chunk.start() != token.end if not kept else not joins):
            break
        if kept and fold(chunk.group()) in words.CLAUSE_STOPS:
            break
        kept.append(chunk)
    return q.text[kept[0].start() : kept[-1].end()] if kept else ""


def _framed_event(q: _Query, token: _Token, earlier: list[_Token]) -> str:
    """ "在迁移之前", "自从迁移以来": the event between 在 or 自从 and the postposition, in one clause."""
    for other in reversed(earlier):
        if other.kind == "range" or other.role == "frame" or (other.role == "since" and other.lang == "zh"):
            between = q.low[other.end : token.start]
            framed = other.kind != "range" and 0 < len(between) <= 20 and _CLAUSE.fullmatch(between)
            return q.text[other.end : token.start].strip() if framed else ""
    return ""
