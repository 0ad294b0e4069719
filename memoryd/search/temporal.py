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
  sentence marking the past; a bare connector ("trước", "之前") only beside a name ("trước Backblaze B2", "换成Redis
  之前"): alone it is also "in front of", "first" or a subject's earlier state ("billing之前用的"). Events are read by
  search.temporal_events, the query and its tokens are search.temporal_query.
- past: an earlier-state word ("used to", "the old", "trước đây", "以前", "เมื่อก่อน"); "before" ending a clause ("what
  did we use before?") but not the conversation ("as I said before"); an anchor's before side, unless the sentence
  is advice or a plan ("what should we check before the migration?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from memoryd.search import temporal_words as words
from memoryd.search.temporal_events import bare, conversational, event_of, framed_event
from memoryd.search.temporal_query import LATIN_WORD, MODALS, Query, Side, Token
from memoryd.search.temporal_words import YEAR, back, month_span, rolling, span

_EPOCH = date(1970, 1, 1).toordinal()
_BESIDE = re.compile(r"[\s,]*(?:of|de|del)?[\s,]*")  # a month beside its year: "March of last year", "去年3月"
_BINDS = frozenset(("before", "after", "since", "until", "from"))


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


def parse_time(query: str, now: datetime) -> TimeQuery:
    """What the query says about time; `now` is the user's present, and its calendar day is "today"."""
    q = Query(query, now)
    tokens: list[Token] = []
    for match in words.SCANNER.finditer(q.low):
        try:
            token = _READERS[match.lastgroup or ""](match, q, tokens)
        except (ValueError, OverflowError, KeyError):  # February 30, a month 13, a year out of range
            continue
        if token is not None:
            tokens.append(token)
    if not tokens:
        return NO_TIME
    q.words = set(LATIN_WORD.findall(q.low))
    return _combine(_months(tokens, q), q)


def _range(match: re.Match[str], days: tuple[int, int], year: int | None = None) -> Token:
    return Token("range", match.start(), match.end(), *days, year=year)


def _read_iso(match: re.Match[str], q: Query, tokens: list[Token]) -> Token:
    year, month = words.year(match["iy"]), int(match["im"])
    day = date(year, month, int(match["id"] or 1)).toordinal()
    return _range(match, (day, day + 1) if match["id"] else month_span(year, month))


def _read_count(match: re.Match[str], q: Query, tokens: list[Token]) -> Token | None:
    """ "3 days ago", "cách đây 3 ngày", "三天前", "3 วันที่แล้ว"; "the past 3 days", "3 ngày qua", "过去三天"."""
    count, unit = words.count(match["n"]), words.UNIT_OF[words.key(match["unit"])]
    cues = {words.key(match[cue]) for cue in ("pre", "post") if match[cue]}
    if cues & words.AGO:
        return _range(match, back(q.now, unit, count))
    if not cues and not match["mid"]:
        return None  # "in 3 days", "3 weeks of work"
    return _range(match, rolling(q.now, unit, count[1] if isinstance(count, tuple) else count))


def _read_month(match: re.Match[str], q: Query, tokens: list[Token]) -> Token | None:
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
    token = Token("month", match.start(), match.end(), month=month, hint=hint)
    token.day, token.year = words.number(day) if day else None, words.year(year) if year else None
    return token


def _read_year(match: re.Match[str], q: Query, tokens: list[Token]) -> Token | None:
    if match["zy2"] is None and not q.dated_by_context(match.start(), tokens):
        return None  # "port 2024"
    year = words.year(match["zy2"] or match.group())
    return _range(match, (date(year, 1, 1).toordinal(), date(year + 1, 1, 1).toordinal()), year)


def _read_word(match: re.Match[str], q: Query, tokens: list[Token]) -> Token:
    kind, value = words.LITERALS[words.key(match.group())]
    if kind == "calendar":
        unit, offset = value
        return _range(match, span(q.now, unit, offset), q.today.year + offset if unit == YEAR else None)
    if kind in ("rolling", "fuzzy"):
        unit, *count = value
        return _range(match, rolling(q.now, unit, count[0]) if kind == "rolling" else back(q.now, unit, tuple(count)))
    role, lang = value if kind == "connector" else ("", "")
    return Token(kind, match.start(), match.end(), role=role, lang=lang)


_READERS = dict(iso=_read_iso, count=_read_count, month=_read_month, year=_read_year, word=_read_word)


def _months(tokens: list[Token], q: Query) -> list[Token]:
    """Dates the months: one beside a whole year takes it ("March last year", "tháng 3 năm ngoái", "去年3月"),
    others are the most recent not after today ("last March": nor this month's)."""
    paired: list[Token] = []
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


def _date_month(token: Token, year: int, latest: int | None) -> None:
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


def _combine(tokens: list[Token], q: Query) -> TimeQuery:
    """Dates alone join into one range, a connector's date bounds it; cues and events are read on the way."""
    plain: list[tuple[int, int]] = []
    lower: list[int] = []
    upper: list[int] = []
    spans: list[Token] = []
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
            past = past or (token.kind == "past" and not conversational(q, token))
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
            event = event_of(token, tokens[: i - 1], q)
            anchor = anchor or event
            if token.role in ("before", "post_before") and (
                event or bare(q, token) or (token.lang == "zh" and not framed_event(q, token, tokens[: i - 1]))
            ):
                past = past or not (q.mentions(MODALS, False) if event else conversational(q, token))
    lo, hi = min((p[0] for p in plain), default=None), max((p[1] for p in plain), default=None)
    lo = max(lower + ([] if lo is None else [lo]), default=None)
    hi = min(upper + ([] if hi is None else [hi]), default=None)
    if lo is not None and hi is not None and lo >= hi:
        lo = hi = None  # bounds that contradict ("after May, before March"): nothing rather than a wrong range
    start, end = (None if day is None else (day - _EPOCH) * 86400.0 for day in (lo, hi))
    phrase = _phrase(q, spans) if start is not None or end is not None else None
    return TimeQuery(start, end, phrase, past, current, *(anchor or (None, None)))


def _until(q: Query, token: Token, first: Token, then: Token | None) -> bool:
    """Whether "from"/"since" a date runs to a second one ("from March to June"); June then follows March."""
    if token.role not in ("from", "since") or not then or then.kind != "range":
        return False
    if not words.TO.fullmatch(q.low, first.end, then.start):
        return False
    if then.hi <= first.lo and then.day is None and then.month and not then.year:
        _date_month(then, date.fromordinal(first.lo).year + (then.month <= first.month), None)
    return True


def _bound(role: str, dated: Token, lower: list[int], upper: list[int]) -> None:
    """Before a date: up to its first day; until it: through its last; after it: from the day after; since: from it."""
    (upper if role in ("before", "until") else lower).append(dated.lo if role in ("before", "since") else dated.hi)


def _phrase(q: Query, spans: list[Token]) -> str:
    """The words that set the range, neighbours joined ("from March to June"), others apart."""
    parts: list[list[int]] = []
    for token in sorted(spans, key=lambda t: t.start):
        gap = q.low[parts[-1][1] : token.start] if parts else "?"
        if parts and (not gap.strip(" ,") or words.TO.fullmatch(gap)):
            parts[-1][1] = max(parts[-1][1], token.end)
        else:
            parts.append([token.start, token.end])
    return " ".join(q.text[a:b] for a, b in parts)
