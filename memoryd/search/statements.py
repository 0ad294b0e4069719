"""A chunk's statements as search.currency reads them: its entries (a list item, a short paragraph, a line of a
turn or of a long paragraph), each with its words as the analyzer makes them and as written, whether it says it
changes something (CHANGE) and whether a note marks it superseded; kept per chunk, as searches keep finding the same
chunks."""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from memoryd.search.function_words import content_tokens, is_function_word
from memoryd.sources.analyzer import analyze, fold_text
from memoryd.sources.entries import MARK, entries
from memoryd.sources.text import (
    DENSE_CHAR,
    EDGE_AFTER,
    EDGE_BEFORE,
    HAN,
    SCRIPT_EDGE,
    SPACED_WORD_CHAR,
    WORD_CHAR_CLASS,
)
from memoryd.store.rows import ChunkRow

ENTRY_CACHE = 2048  # chunks whose statements are kept, folded (about their text's size each)
# words that say a statement replaces an earlier one ("switched to", "no longer", "from today", "từ nay", "改用",
# "เปลี่ยน"; "now" closing a clause: "billing's cache is Valkey now"):
# a later statement of the same thing without one may be the same thing said again (a conversation comes back to
# a topic), not a change
CHANGE = re.compile(
    rf"(?i){EDGE_BEFORE}(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:e|es|ed|ing|ion)|replac(?:ed|ing)|chang(?:ed|ing)|swapp(?:ed|ing)"
    r"|cut ?over|roll(?:ed)? ?out|upgrad(?:ed|ing)|downgrad(?:ed|ing)|no longer|instead|now uses?|as of"
    r"|(?<=\w )(?<!from )(?<!until )(?<!till )(?<!by )(?<!right )(?<!for )(?<!just )(?<!to )"
    r"now(?=[ \t]*(?:[.!;,)\n]|$|[ \t](?:because|since|after|that|per|following|due|to)\b))"
    r"|from today|from now on|from this \w+ on|starting (?:today|now|this \w+)|going forward|retired|deprecated"
    r"|chuyển|đổi|thay|từ nay|từ hôm nay|kể từ|không còn|không (?:dùng|sử dụng)[^\n]{0,40}nữa"
    rf"|bây giờ|giờ đây|(?:giờ|hiện tại|hiện nay) (?:dùng|sử dụng|là)){EDGE_AFTER}"
    r"|换成|換成|改用|改成|改为|改為|迁移|遷移|迁到|遷到|切换|切換|切到|替换|替換|不再|从今天起|從今天起|今天起|上线|上線"
    r"|(?:现在|現在|目前)(?:用|使用|采用|採用)|(?:现在|現在)[^。！？?，,\n]{0,40}了|(?:本周|本週|这周|這週|本月|今天|今日)(?:起|开始|開始)"
    r"|เปลี่ยน|ย้าย|สลับ|แทน|เลิกใช้|ตั้งแต่|(?:ตอนนี้|ปัจจุบัน)[^\n]{0,40}ใช้|ตอนนี้[^\n]{0,60}แล้ว|เริ่ม(?:วันนี้|สัปดาห์นี้|เดือนนี้)"
)
# a word that says a thing is used ("before we used Redis", "trước khi dùng", "用Redis之前", "ก่อนใช้ Redis"): an
# event named with one is told by what is used
USE = re.compile(r"(?i)us(?:e|es|ed|ing)|dùng|sử|dụng|xài|使用|采用|採用|用|ใช้|ใช้งาน")
_WRITTEN = re.compile(f"{WORD_CHAR_CLASS}+")
_TOWARD = frozenset(("sang", "qua", "bằng", "to", "into", "onto"))  # "chuyển sang Redis": after a change word
LONG_ENTRY = 3  # lines: a longer paragraph (a conversation written as a note) is read line by line


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
    text: str  # as the note has it
    tokens: frozenset[str]  # its words as the analyzer makes them (folded, stemmed, segmented), as a query's are
    marked: bool  # struck through as superseded
    changed: tuple[str, ...] = ()  # the words that say it replaces something (CHANGE: "switched", "no longer")

    @property
    def change(self) -> bool:
        return bool(self.changed)

    @functools.cached_property
    def folded(self) -> str:
        """Its text folded: where a word of an unspaced script is looked for (search.function_words)."""
        return fold_text(self.text)

    @functools.cached_property
    def proper(self) -> tuple[tuple[str, ...], ...]:
        """Its names (search.kinds): words written as a name is, with a capital or a digit ("Redis", "MinIO", "B2"),
        somewhere other than at the start of a sentence ("Switched", "Done"); the words of a name written apart
        together ("Cloudflare R2", "Amazon S3")."""
        return names_written(self.text)

    @functools.cached_property
    def written(self) -> frozenset[str]:
        """Its words as written (_written), but those saying it is a change: the names it holds."""
        changing = tokens_of(" ".join(self.changed))
        return frozenset(word for word in _written(self.text) if not tokens_of(word) <= changing)


_CHANGE_LOWER = re.compile(CHANGE.pattern.removeprefix("(?i)"))  # on lower-cased text: twice as fast
# a part of each way CHANGE has of saying a change, in lower case: a text that holds none says none, and most texts
# are told so three times faster than by CHANGE (the tests hold the hints to CHANGE)
CHANGE_HINTS = (
    *("switch", "mov", "migrat", "replac", "chang", "swapp", "cut", "roll", "upgrad", "downgrad", "no longer"),
    *("instead", "now", "as of", "from", "starting", "going forward", "retired", "deprecated"),
    *("chuyển", "đổi", "thay", "từ", "không", "giờ", "hiện"),
    *("换", "換", "改", "迁", "遷", "切", "替", "不再", "今天", "今日", "上线", "上線", "现在", "現在", "目前"),
    *("本周", "本週", "这周", "這週", "本月"),
    *("เปลี่ยน", "ย้าย", "สลับ", "แทน", "เลิกใช้", "ตั้งแต่", "ตอนนี้", "ปัจจุบัน", "เริ่ม"),
)


@functools.lru_cache(maxsize=ENTRY_CACHE * 4)
def says_change(text: str) -> bool:
    """Some statement of the text says it replaces something (CHANGE): few chunks do, and those are all currency
    reads first."""
    lowered = text.lower()
    return any(hint in lowered for hint in CHANGE_HINTS) and _CHANGE_LOWER.search(lowered) is not None


def _statements(text: str, transcript: bool) -> tuple[Statement, ...]:
    """A chunk's statements: its entries, a line of a turn or of a long paragraph each. What only some searches
    read (the folded text, the names) is worked out when one does."""
    changes = says_change(text)  # most chunks say no change: one look at the whole, not one a line
    found = []
    for entry in _entries(text, transcript):
        changed = tuple(CHANGE.findall(entry)) if changes else ()
        found.append(Statement(entry, tokens_of(entry), MARK.search(entry) is not None, changed))
    return tuple(found)


@functools.lru_cache(maxsize=65536)
def tokens_of(text: str) -> frozenset[str]:
    """A statement's words as the analyzer makes them; entries recur (overlapping chunks, a note saved again)."""
    return frozenset(analyze(text).body.split())


def _written(entry: str) -> frozenset[str]:
    """Its words as written: a name stays whole ("GitLab" and "GitHub" share no word, though the analyzer makes
    git lab and git hub of them); a word of an unspaced script is the analyzer's."""
    return frozenset(_written_in_order(entry))


def _written_in_order(text: str) -> list[str]:
    found: list[str] = []
    for run in _WRITTEN.findall(text):
        for piece in SCRIPT_EDGE.split(run):
            if DENSE_CHAR.search(piece):
                found += analyze(piece).body.split()
            elif piece:
                found.append(piece)
    return found


# what may come before a sentence's first word: a list's or a quote's mark, a heading's, a task's box, a time
_SENTENCE_START = re.compile(
    r"(?:^|[.!?:;]\s+|\n)\s*(?:(?:[-*+>#]+|\d+[.)])\s+)*(?:\[[ xX]\]\s+)?(?:\d{1,2}:\d{2}\s+)?[\"'(\[*_“‘]*$"
)
_SENTENCE_LEAD = 40  # characters before a word that _SENTENCE_START reads: a name is found in linear time
_CAPITALIZED = re.compile(f"{WORD_CHAR_CLASS}+")


def names_written(text: str) -> tuple[tuple[str, ...], ...]:
    """The names a text writes (Statement.proper)."""
    return tuple(_proper(text))


def _proper(text: str) -> Iterator[tuple[str, ...]]:
    name: list[str] = []
    end = -1
    for match in _CAPITALIZED.finditer(text):
        at = match.start()
        for piece in SCRIPT_EDGE.split(match.group()):
            digits = any(char.isdigit() for char in piece)
            if _written_as_name(piece) and (
                digits or not _SENTENCE_START.search(text, max(at - _SENTENCE_LEAD, 0), at)
            ):
                if name and text[end:at] != " ":
                    yield tuple(name)
                    name = []
                name.append(piece)
                end = at + len(piece)
            at += len(piece)
    if name:
        yield tuple(name)


def _each(first: int, last: int) -> list[tuple[int, int]]:
    return [(i, i) for i in range(first, last + 1)]


statements_of = _EntryCache()


def _entries(text: str, transcript: bool) -> list[str]:
    lines = text.split("\n")
    spans = [(i, i) for i in range(len(lines))] if transcript else entries(lines)
    return [
        "\n".join(lines[first : last + 1])
        for start, end in spans
        for first, last in ([(start, end)] if end - start < LONG_ENTRY else _each(start, end))
    ]


def entries_naming(row: ChunkRow, name: tuple[str, ...]) -> list[str]:
    """The texts of a chunk's statements that name a name (its words casefolded, as written and in a row, and not
    the start of a longer name: "Google Cloud" is not named by "Google Cloud Storage"), apart from statements_of's
    cache: a name's profile (search.kinds) reads chunks no search may ask for again."""
    return [
        entry
        for entry in _entries(row.text, row.source == "sessions")
        if name[0] in entry.casefold() and _names_in(entry, name)
    ]


def _names_in(entry: str, name: tuple[str, ...]) -> bool:
    """The name's words are in the entry a space apart, each a whole word (a dense script's letter is a word's edge),
    and no word written as a name follows a space after them (_proper groups such words)."""
    lowered = entry.casefold()
    cased = entry if len(lowered) == len(entry) else lowered  # a letter folded to two ("ß"): its case is unknown
    phrase = " ".join(name)
    at = lowered.find(phrase)
    while at >= 0:
        end = at + len(phrase)
        whole = not (at and SPACED_WORD_CHAR.match(lowered, at - 1)) and not SPACED_WORD_CHAR.match(lowered, end)
        if whole:
            after = _NEXT_WORD.match(cased, end)
            if after is None or not _written_as_name(SCRIPT_EDGE.split(after.group(1))[0]):
                return True
        at = lowered.find(phrase, at + 1)
    return False


_NEXT_WORD = re.compile(f" ({WORD_CHAR_CLASS}+)")


def _written_as_name(piece: str) -> bool:
    """A word of one script written as a name is: with a capital or a digit, not a number nor a function word
    ("Redis", "B2", not "42" nor "I": "Got it, I will remember" names nothing)."""
    return (
        (piece != piece.lower() or any(char.isdigit() for char in piece))
        and not piece.isdigit()
        and not is_function_word(piece)
    )


def words_of(row: ChunkRow) -> frozenset[str]:
    """Every word of a chunk's statements, as the analyzer makes them."""
    return frozenset().union(*(statement.tokens for statement in statements_of(row)))


def event_words(event: str) -> frozenset[str]:
    """The words that tell an event a question is relative to ("before the switch to Redis": "redis"): neither a
    question's words nor the words as written that say a change or a use ("no longer", "chuyển sang", "换成", "ใช้"),
    none of them inside a word ("用户" stays); none when it names nothing ("before the switch")."""
    words, kept, at, dropped = _written_in_order(event), [], 0, False
    while at < len(words):
        span = next((n for n in (3, 2, 1) if _says_change_or_use(words[at : at + n])), 0)
        if not span and dropped and words[at].casefold() in _TOWARD:
            span = 1
        if not span:
            kept.append(words[at])
        dropped = bool(span)
        at += span or 1
    return frozenset(content_tokens(" ".join(kept)))


def _says_change_or_use(words: list[str]) -> bool:
    """The words, written together (an unspaced script's) or apart, are one saying a change or a use."""
    said = ("" if all(DENSE_CHAR.match(word) for word in words) else " ").join(words)
    return bool(CHANGE.fullmatch(said) or USE.fullmatch(said))


def may_hold(folded: str, word: str) -> bool:
    """Whether a statement whose folded text is this may hold a word (`holds`), without analysing it: a stem is its
    word but for the end ("happi" of "happy"); a Chinese word is held where its characters are."""
    if word.isascii():
        return word[: max(len(word) - 1, 1)] in folded
    return all(char in folded for char in word)


def holds(statement: Statement, word: str) -> bool:
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
