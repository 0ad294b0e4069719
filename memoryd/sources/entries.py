"""A note's entries: the statements a person or an agent wrote one at a time (a list item with its continuation
lines, a paragraph, a heading, a fenced block, a conversation turn). Dedupe compares entries, a forget by query
removes the entries that matched, and ranking reads which entry of a chunk a query is about."""

from __future__ import annotations

import re
import unicodedata

_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_TAG = re.compile(r"<!--.*?-->", re.S)
_WORD = re.compile(r"\w+")
# the line memoryd writes under a superseded statement: "*(superseded 2026-11-27 by [path#L5-L6](link))*"
MARK = re.compile(r"\*\(superseded (\d{4}-\d{2}-\d{2}) by \[([^\]\n]+)\]\([^)\n]*\)\)\*")
_UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# words that change no fact: a statement saved again with or without them is the same statement
_FILLER_WORDS = (
    "a an the and or of to in on at for with by from as is are was were be been it its this that these "
    "those we i you he she they our my your their has have had do does did will would should can could "
    "just also then so now today note noted remember decided decision"
)
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
        if _HEADING.match(line):
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
        if opener := _FENCE.match(line):
            fence = opener[1]
    if start is not None:
        found.append((start, len(lines) - 1))
    return found


def content_words(text: str) -> frozenset[str]:
    """What a statement says, for telling the same statement saved again: its words, case-folded, without markup,
    tags or filler words (each character of an unspaced script is a word)."""
    text = unicodedata.normalize("NFKC", _TAG.sub(" ", text)).casefold()
    found: set[str] = set()
    for word in _WORD.findall(text):
        if _UNSPACED.search(word):
            found.update(word)
        elif word not in _FILLER:
            found.add(word)
    return frozenset(found)
