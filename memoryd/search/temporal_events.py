"""The event a "before", "after" or "since" without a date is relative to ("before the migration", "trước khi
chuyển sang Postgres", "trước Backblaze B2", "在迁移之前", "换成Redis之前", "ก่อนใช้ Redis"), and what the words around a
connector say of the sentence (search.temporal)."""

from __future__ import annotations

import re

from memoryd.search import temporal_words as words
from memoryd.search.temporal_query import ASKS, CHUNK, CLAUSE, LATIN_WORD, Query, Side, Token
from memoryd.sources.analyzer import fold

# a name: a Latin word with a capital, and the capitalised words or those with a digit that go on with it
_NAME_WORDS = r"[a-z]*[A-Z][A-Za-z0-9.+-]*(?: +(?:[A-Z][A-Za-z0-9.+-]*|[A-Za-z.+-]*[0-9][A-Za-z0-9.+-]*))*"
_NAME = re.compile(rf" *({_NAME_WORDS})(?![\w.+-])")
_VI_NAMED = ("trước", "sau")  # "dùng gì trước Backblaze B2?"
# a verb of using (not in a word made with 用: 费用, 作用, "cost", "effect"), or of moving to something
_ZH_MADE_WITH_USE = "费費作信应應功效有专專常通实實日备備试試适適启啟停禁调調引享占佔挪租录錄聘雇任运運"
_ZH_MOVE = (
    f"(?<![{_ZH_MADE_WITH_USE}])用|使用|采用|採用|换成|換成|换到|換到|改用|改成"
    "|迁到|遷到|迁移到|遷移到|切换到|切換到|切到"
)
_TO_NAME = re.compile(rf"(?:{_ZH_MOVE})\s*{_NAME_WORDS}\s*$")
_NAME_REACH = 48  # characters before 之前 a move to a name is looked for in
# a Vietnamese question about what was used or changed: only there is "trước <name>" a thing's move to it ("Ai đứng
# trước Nam?" is who stands in front of Nam)
_VI_USE = re.compile(r"(?i)\b(?:dùng|sử dụng|xài|chuyển|đổi|thay|chọn|là)\b")
_THAI_JOINERS = ("ไป", "มา", "เป็น", "ที่", "ใน", "จาก", "สู่", "ของ", "กับ", "ใช้")


def conversational(q: Query, token: Token) -> bool:
    """ "as I said before", "as previously discussed": about the conversation, not an earlier state."""
    near = LATIN_WORD.findall(q.low, max(0, token.start - 40), token.start)[-3:]
    near += LATIN_WORD.findall(q.low, token.end, token.end + 20)[:1]
    return any(w in words.EN_DISCOURSE for w in near)


def bare(q: Query, token: Token) -> bool:
    """English "before" with nothing after it in its clause: "what did we use before?"."""
    return token.lang == "en" and not q.clause(token.end).group().strip()


def event_of(token: Token, earlier: list[Token], q: Query) -> tuple[str, Side] | None:
    """The event an unbound "before"/"after"/"since" is relative to, if the sentence asks about one."""
    if token.lang != "en" and not q.mentions(ASKS):
        return None
    if token.role.startswith("post_"):
        text = framed_event(q, token, earlier) or (_name_before(q, token) if token.role == "post_before" else "")
    elif token.role in ("before", "after") and q.low[token.start : token.end] in _VI_NAMED:
        text = _name_after(q, token)  # "dùng gì trước Backblaze B2?": before a name, a thing's move to it
    elif token.role not in ("before", "after", "since") or token.lang in ("", "zh"):
        return None
    else:
        text = (_english_event(q, token) if token.lang == "en" else _words_event(q, token)) or ""
    if not text:
        return None
    return text, "before" if token.role in ("before", "post_before") else "after"


def _english_event(q: Query, token: Token) -> str | None:
    """A noun phrase ("the migration"), or a clause about the past ("we migrated"; "deploying" after "did")."""
    if q.context(token.start) in words.EN_NOT_BEFORE_AFTER:
        return None  # "look after the servers"
    chunks = list(CHUNK.finditer(q.low, token.end, q.clause(token.end).end()))[:6]
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


def _instruction(q: Query) -> bool:
    """Starts with an imperative, or does after a leading clause ("Before the deploy, run the tests")."""
    comma = q.low.find(",")
    firsts = (LATIN_WORD.search(q.low), LATIN_WORD.search(q.low, comma + 1) if comma > 0 else None)
    return any(w is not None and w.group() in words.EN_IMPERATIVES for w in firsts)


def _words_event(q: Query, token: Token) -> str:
    """Vietnamese: up to six words, ending before a conjunction or a question word. Thai: up to the next space,
    with a Latin name a word leads into ("ย้ายไป Postgres"); a bare ก่อน/หลัง only where a phrase starts."""
    if q.low[token.start : token.end] in words.TH_AFTER_SPACE and q.low[token.start - 1 : token.start].strip():
        return ""
    kept: list[re.Match[str]] = []
    for chunk in list(CHUNK.finditer(q.low, token.end, q.clause(token.end).end()))[:6]:
        joins = (
            kept and chunk.group().isascii() and (kept[-1].group().endswith(_THAI_JOINERS) or _name_goes_on(q, chunk))
        )
        if token.lang == "th" and (chunk.start() != token.end if not kept else not joins):
            break
        if kept and fold(chunk.group()) in words.CLAUSE_STOPS:
            break
        kept.append(chunk)
    return q.text[kept[0].start() : kept[-1].end()] if kept else ""


def _name_goes_on(q: Query, chunk: re.Match[str]) -> bool:
    """A Latin name of several words goes on ("GitLab CI", "Amazon S3", "Google Cloud Storage"): the word before is
    Latin and this one is capitalised or holds a digit; a lower-case word ("billing") is what the question is about."""
    before = q.text[: chunk.start()].rstrip()
    word = q.text[chunk.start() : chunk.end()]
    return (
        bool(before)
        and before[-1].isascii()
        and before[-1].isalnum()
        and (word[0].isupper() or any(c.isdigit() for c in word))
    )


def _name_after(q: Query, token: Token) -> str:
    """A name right after Vietnamese "trước"/"sau" in a question about what was used ("dùng gì trước Backblaze B2?")."""
    found = _NAME.match(q.text, token.end) if _VI_USE.search(q.low) else None
    return found.group(1).rstrip(".") if found else ""


def _name_before(q: Query, token: Token) -> str:
    """A move to a name right before 之前 ("换成Backblaze B2之前", "用Redis以前"); a name alone is a subject there
    ("billing之前用的是什么": what billing used before), and so is a word made with 用 ("费用API之前")."""
    found = _TO_NAME.search(q.text, max(0, token.start - _NAME_REACH), token.start)
    return found.group().strip() if found else ""


def framed_event(q: Query, token: Token, earlier: list[Token]) -> str:
    """ "在迁移之前", "自从迁移以来": the event between 在 or 自从 and the postposition, in one clause."""
    for other in reversed(earlier):
        if other.kind == "range" or other.role == "frame" or (other.role == "since" and other.lang == "zh"):
            between = q.low[other.end : token.start]
            framed = other.kind != "range" and 0 < len(between) <= 20 and CLAUSE.fullmatch(between)
            return q.text[other.end : token.start].strip() if framed else ""
    return ""
