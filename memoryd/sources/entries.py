"""A note's entries: the statements a person or an agent wrote one at a time (a list item with its continuation
lines, a paragraph, a heading, a fenced block, a conversation turn). Dedupe compares entries, a forget by query
removes the entries that matched, and ranking reads which entry of a chunk a query is about."""

from __future__ import annotations

import re
import unicodedata

_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+")
FENCE = re.compile(r"^\s*(```|~~~)")  # a code block opens or closes (group 1: its fence)
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_TAG = re.compile(r"<!--.*?-->", re.S)
_WORD = re.compile(r"\w+")
# what memoryd writes after a superseded statement: "*(superseded 2026-11-27 by [path#L5-L6](link))*" (notes marked
# earlier have it on a line of its own under the statement: both are read)
MARK = re.compile(r"\*\(superseded (\d{4}-\d{2}-\d{2}) by \[([^\]\n]+)\]\([^)\n]*\)\)\*")
# "- ~~text~~" as memoryd strikes a superseded line, its mark after it on the last line (group 1: the list marker or
# a heading's hashes, group 2: the text struck through)
STRUCK = re.compile(  # possessive: a line of spaces costs no backtracking
    r"^(\s*+(?:[-*+]|\d+[.)]|#{1,6}(?=\s))?\s*+(?:\[[ xX]\]\s+)?)~~(.*?)~~(?:\s*+" + MARK.pattern + r")?\s*+$"
)
# scripts written without spaces (CJK, Thai): each character counts as a word
UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# words that change no fact: a statement saved again with or without them is the same statement. Only articles,
# pronouns and the words of taking a note: never a modal, a tense, a negation or a preposition ("will" is not
# "did", "from Redis to Memcached" is not "to Redis from Memcached")
_FILLER_WORDS = "a an the its it we i you our my your their us me just also note noted remember decided decision"
_FILLER = frozenset(_FILLER_WORDS.split(" "))


def entries(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line indexes (0-based, inclusive) of each entry; blank lines belong to none. A list item
    holds the lines indented under it (nested items too); a heading is an entry of its own."""
    found: list[tuple[int, int]] = []
    start: int | None = None
    item_indent: int | None = None  # the current entry's list marker indent; None: a paragraph
    fence: str | None = None
    for i, line in enumerate(lines):
        if fence is not None:
            if line.lstrip().startswith(fence):
                fence = None
            continue
        if not line.strip():
            if start is not None:
                found.append((start, i - 1))
            start = None
            continue
        indent = len(line) - len(line.lstrip())
        item = _ITEM.match(line)
        if HEADING.match(line):
            if start is not None:
                found.append((start, i - 1))
            found.append((i, i))
            start = None
            continue
        new = (start is None or item is not None) if item_indent is None else indent <= item_indent
        if new:
            if start is not None:
                found.append((start, i - 1))
            start, item_indent = i, (indent if item else None)
        if opener := FENCE.match(line):
            fence = opener[1]
    if start is not None:
        found.append((start, len(lines) - 1))
    return found


def words(text: str) -> list[str]:
    """Case-folded words of `text`, each character of an unspaced script a word of its own."""
    out: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if UNSPACED.search(word):
            out.extend(ch for ch in word if not ch.isspace())
        else:
            out.append(word)
    return out


def content_words(text: str) -> tuple[str, ...]:
    """What a statement says, for telling the same statement saved again: its words in order, case-folded,
    without markup, tags or filler words. In order: the same words in another order ("from Redis to Memcached",
    "from Memcached to Redis") are another statement."""
    return tuple(word for word in words(_TAG.sub(" ", text)) if word not in _FILLER)
