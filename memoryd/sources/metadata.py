"""What ranking needs to know about a chunk: when it happened, what kind of memory it is, how important."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from pathlib import Path
from typing import TypedDict

import re2

from memoryd.sources.markdown import Chunk
from memoryd_client.protocol.schema import MEMORY_TYPES

_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)
# RE2 (linear time): in Python's `re` a long run after an opening `<!-- type:` backtracked quadratically
_INLINE = re2.compile(r"(?i)<!--\s*((?:type|importance)\s*[:=][^>]*?)\s*-->")
_PAIR = re2.compile(r"(?i)(type|importance)\s*[:=]\s*([\w.]+)")


def note_date(path: str) -> float | None:
    """The date of a dated note (`memory/2026-01-05.md`, `notes/2026-01-05-standup.md`), as a UTC timestamp."""
    match = _DATE.search(Path(path).name)
    if match is None:
        return None
    try:
        day = dt.datetime(int(match[1]), int(match[2]), int(match[3]), 12, tzinfo=dt.timezone.utc)
    except ValueError:
        return None
    return day.timestamp()


class Tags(TypedDict, total=False):
    kind: str  # one of MEMORY_TYPES
    importance: float  # 0..1


def _tags(text: str) -> Tags:
    found: Tags = {}
    for key, value in _PAIR.findall(text):
        key = key.lower()
        if key == "type" and value.lower() in MEMORY_TYPES:
            found["kind"] = value.lower()
        elif key == "importance":
            try:
                found["importance"] = min(1.0, max(0.0, float(value)))
            except ValueError:
                continue
    return found


def front_matter(text: str) -> Tags:
    match = _FRONT.match(text)
    return _tags(match.group(1)) if match else {}


def inline_tags(text: str) -> Tags:
    """`<!-- type: semantic, importance: 0.8 -->` anywhere in a chunk."""
    found: Tags = {}
    for body in _INLINE.findall(text):
        found.update(_tags(body))
    return found


def tag_comment(kind: str | None, importance: float | None) -> str:
    parts = ([f"type: {kind}"] if kind else []) + ([f"importance: {importance:g}"] if importance is not None else [])
    return f"<!-- {', '.join(parts)} -->" if parts else ""


def annotate(chunks: list[Chunk], text: str, path: str, mtime: float) -> list[Chunk]:
    """Give every chunk of a Markdown note its time, type and importance (chunk tags beat file front matter)."""
    dated = note_date(path)
    file_tags = front_matter(text)
    out = []
    for chunk in chunks:
        tags: Tags = {**file_tags, **inline_tags(chunk.text)}
        kind, importance = str(tags.get("kind", "")), tags.get("importance")
        out.append(replace(chunk, ts=dated or mtime, dated=dated is not None, kind=kind, importance=importance))
    return out


def date_words(ts: float) -> str:
    """A day spelled the ways people ask for it: "2023-10-13 Friday 13 October 2023" (for keyword search)."""
    day = dt.datetime.fromtimestamp(ts, dt.timezone.utc)
    return f"{day:%Y-%m-%d} {day:%A} {day.day} {day:%B} {day.year}"
