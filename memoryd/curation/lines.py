"""A note as lines that keep their own endings, and the line edits memoryd makes: remove, replace, and mark as
superseded. Line numbers are those of citations (`\\r\\n`, `\\r` and `\\n` each end a line, as the chunker counts)."""

from __future__ import annotations

import datetime as dt
import hashlib
import posixpath
import re
from dataclasses import dataclass

from memoryd.sources.entries import FENCE, MARK, STRUCK

_BREAK = re.compile(r"(\r\n|\r|\n)")
# a list item's marker (and checkbox), kept outside the strike-through
_LIST = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?)(.*)$")
_HEADING = re.compile(r"^(\s{0,3}#{1,6}\s+)(.*)$")  # struck after its hashes: "# ~~S~~" stays a heading


class LinesOutside(ValueError):
    """The lines asked for are not in the note."""


@dataclass
class NoteLines:
    lines: list[str]  # without their endings
    endings: list[str]  # each line's own ending ("" for a last line without one)

    @classmethod
    def parse(cls, data: bytes) -> NoteLines:
        text = data.decode("utf-8", errors="surrogateescape")
        parts = _BREAK.split(text)
        lines, endings = parts[0::2], [*parts[1::2], ""]
        if lines and lines[-1] == "" and endings[-1] == "":
            lines.pop()
            endings.pop()
        return cls(lines, endings)

    def dump(self) -> bytes:
        return "".join(a + b for a, b in zip(self.lines, self.endings, strict=True)).encode(
            "utf-8", errors="surrogateescape"
        )

    @property
    def newline(self) -> str:
        return next((e for e in self.endings if e), "\n")

    def check(self, start: int, end: int) -> None:
        if start < 1 or end < start:
            raise LinesOutside(f"L{start}-L{end} is not a range of lines")
        if end > len(self.lines):
            raise LinesOutside(f"L{start}-L{end} is outside the note, which has {len(self.lines)} lines")

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])

    def context(self, start: int, end: int) -> tuple[str | None, str | None]:
        """The line above line `start` and below line `end` (None at the note's edges)."""
        above = self.lines[start - 2] if start >= 2 else None
        below = self.lines[end] if end < len(self.lines) else None
        return above, below

    def replace(self, start: int, end: int, new: list[str]) -> None:
        """Lines start..end (end = start - 1: none) become `new`; the note keeps its line endings, and ends as it
        did (with a line break or without)."""
        final = self.endings[-1] if self.endings else self.newline
        style = self.newline
        self.lines[start - 1 : end] = new
        self.endings[start - 1 : end] = [style] * len(new)
        for i in range(len(self.endings) - 1):
            self.endings[i] = self.endings[i] or style
        if self.endings:
            self.endings[-1] = final

    def remove(self, start: int, end: int) -> tuple[int, int]:
        """Remove lines start..end and a blank line the removal would leave doubled (or at an edge); returns the
        lines actually removed."""
        first, last = start, end
        above_blank = first == 1 or not self.lines[first - 2].strip()
        below_blank = last == len(self.lines) or not self.lines[last].strip()
        if above_blank and below_blank:
            if last < len(self.lines):
                last += 1
            elif first > 1:
                first -= 1
        self.replace(first, last, [])
        return first, last

    def find(self, block: list[str], near: int, above: str | None = None, below: str | None = None) -> int | None:
        """Where `block` is now (the start nearest `near`); an empty block is the gap between `above` and `below`
        (None: the note's start, or its end)."""
        if block:
            size = len(block)
            found = [i + 1 for i in range(len(self.lines) - size + 1) if self.lines[i : i + size] == block]
        else:
            found = [
                i + 1
                for i in range(len(self.lines) + 1)
                if (i == 0 if above is None else i > 0 and self.lines[i - 1] == above)
                and (i == len(self.lines) if below is None else i < len(self.lines) and self.lines[i] == below)
            ]
        return min(found, key=lambda s: abs(s - near)) if found else None


def lines_hash(text: str) -> str:
    """The hash a client names lines by: of the text as `get` shows it, trailing spaces and line ends aside."""
    normal = "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "sha256:" + hashlib.sha256(normal.strip("\n").encode("utf-8", errors="surrogateescape")).hexdigest()


def same_text(a: str, b: str) -> bool:
    return lines_hash(a) == lines_hash(b)


def strikable(line: str) -> bool:
    """A line a supersede strikes: one that says something, not struck or marked already, not a code fence (struck,
    it would no longer close its block)."""
    return bool(line.strip()) and not (STRUCK.match(line) or MARK.search(line) or FENCE.match(line))


def struck(lines: list[str], day: dt.date, by: str, link: str) -> list[str]:
    """Superseded lines as memoryd marks them: struck through, the last one struck followed by when and by what
    (`lines` holds one at least: see `strikable`). As many lines as before: a citation of a line below, given
    before the mark, still names that line."""
    out, last = [], -1
    for i, line in enumerate(lines):
        if not strikable(line):
            out.append(line)
            continue
        match = _LIST.match(line) or _HEADING.match(line)
        lead, body = (match[1], match[2].rstrip()) if match else _indented(line.rstrip())
        # "~~~" opening a line is a code fence: a text that starts with "~" is escaped
        out.append(f"{lead}~~{chr(92) if body.startswith('~') else ''}{body}~~")
        last = i
    out[last] = f"{out[last]} *(superseded {day.isoformat()} by [{by}]({link}))*"
    return out


def _indented(line: str) -> tuple[str, str]:
    body = line.lstrip()
    return line[: len(line) - len(body)], body


def relative_link(from_path: str, to_citation: str) -> str:
    """A Markdown link from one note to a citation's note, relative so that it works where the notes are read."""
    to_path, _, fragment = to_citation.partition("#")
    link = posixpath.relpath(to_path, posixpath.dirname(from_path) or ".")
    return f"{link}#{fragment}" if fragment else link
