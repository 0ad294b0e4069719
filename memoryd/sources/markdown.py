"""Line-based Markdown chunking: heading-aware, fence-aware, with token budget and overlap."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from memoryd.sources.entries import MARK
from memoryd.sources.text import char_tokens, estimate_tokens, text_tokens

HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    heading: str  # heading path, "Project > Auth"
    context: str  # the part of the heading path the text does not already start with
    hash: str  # SHA-256 of embed_input
    ts: float | None = None  # when it happened: the note's date, a turn's timestamp, else the file's mtime
    kind: str = ""  # memory type: episodic, semantic, procedural, lore
    importance: float | None = None  # 0..1
    dated: bool = False  # ts is when it happened (a dated note, a turn's timestamp), not just the file's mtime
    source_lines: tuple[int, ...] = ()  # the file line of each text line, where they are not consecutive

    @property
    def embed_input(self) -> str:
        return embed_input(self.context, self.text)


def embed_input(context: str, text: str) -> str:
    """What the embedder sees: the heading context, then the text."""
    return f"{context}\n{text}" if context else text


@dataclass
class _Unit:
    """A run of lines that is never split unless it alone exceeds the budget."""

    start: int  # 0-based index into lines
    end: int  # exclusive
    tokens: int
    is_code: bool = False


@dataclass
class _Section:
    heading_path: tuple[str, ...]
    starts_with_heading: bool
    units: list[_Unit]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def split_lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _parse_sections(lines: list[str]) -> list[_Section]:
    sections: list[_Section] = [_Section((), False, [])]
    stack: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            marker = fence.group(1)
            closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
            j = i + 1
            while j < len(lines) and not closing.match(lines[j]):
                j += 1
            end = min(j + 1, len(lines))
            tokens = sum(estimate_tokens(ln) + 1 for ln in lines[i:end])
            sections[-1].units.append(_Unit(i, end, tokens, is_code=True))
            i = end
            continue
        heading = HEADING.match(line)
        if heading:
            level, title = len(heading.group(1)), _title(heading.group(2))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title or "#" * level))
            sections.append(_Section(tuple(t for _, t in stack), True, []))
        sections[-1].units.append(_Unit(i, i + 1, estimate_tokens(line) + 1))
        i += 1
    return [s for s in sections if s.units]


def _title(raw: str) -> str:
    """A heading as its chunks' heading path: a superseded one ("~~Billing~~ *(superseded … by …)*") by its words
    alone, so that the mark is not searched, embedded or shown with every chunk under it."""
    return MARK.sub("", raw).replace("~~", "").strip()


_SENTENCE_END = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])")


@dataclass
class _Piece:
    """A contiguous span of the document: whole lines, or part of one over-long line."""

    first: int  # 0-based line index
    last: int  # inclusive
    start_char: int  # offset into line `first`
    end_char: int  # offset into line `last`, exclusive
    tokens: float
    atomic: bool = False


def _hard_split(line: str, lo: int, hi: int, max_tokens: int) -> list[tuple[int, int]]:
    """Cut line[lo:hi] into spans within the budget, at spaces when there are any."""
    spans: list[tuple[int, int]] = []
    while lo < hi:
        end, budget = lo, float(max_tokens)
        while end < hi and budget > 0:
            budget -= char_tokens(line[end])
            end += 1
        if end < hi:
            space = line.rfind(" ", lo + (end - lo) // 2, end)
            if space > lo:
                end = space + 1
        spans.append((lo, end))
        lo = end
    return spans


def _line_pieces(index: int, line: str, max_tokens: int) -> list[_Piece]:
    """An over-long line becomes sentence pieces (hard-cut when a sentence alone is too long)."""
    spans: list[tuple[int, int]] = []
    lo = 0
    for match in _SENTENCE_END.finditer(line):
        if match.end() > lo:
            spans.append((lo, match.end()))
            lo = match.end()
    if lo < len(line):
        spans.append((lo, len(line)))
    pieces: list[_Piece] = []
    for a, b in spans:
        for c, d in _hard_split(line, a, b, max_tokens) if text_tokens(line[a:b]) > max_tokens else [(a, b)]:
            pieces.append(_Piece(index, index, c, d, text_tokens(line[c:d])))
    return pieces


def _pieces(unit: _Unit, lines: list[str], max_tokens: int) -> list[_Piece]:
    if unit.tokens <= max_tokens:
        return [_Piece(unit.start, unit.end - 1, 0, len(lines[unit.end - 1]), unit.tokens, unit.is_code)]
    out: list[_Piece] = []
    for k in range(unit.start, unit.end):
        tokens = estimate_tokens(lines[k]) + 1
        if tokens <= max_tokens:
            out.append(_Piece(k, k, 0, len(lines[k]), tokens))
        else:
            out.extend(_line_pieces(k, lines[k], max_tokens))
    return out


def _pack(pieces: list[_Piece], max_tokens: int, overlap_tokens: int, lead: int = 0) -> list[list[_Piece]]:
    """Group pieces into windows within the budget, each overlapping the last by whole pieces. The first `lead`
    pieces (a heading and the blank lines under it) never make a window alone: they go with the next piece even
    past the budget, as a chunk of nothing but a title would match every question about its section alike."""
    windows: list[list[_Piece]] = []
    current: list[_Piece] = []
    size = 0.0
    for index, piece in enumerate(pieces):
        if current and size + piece.tokens > max_tokens and index > lead:
            windows.append(current)
            carry: list[_Piece] = []
            carried = 0.0
            for prev in reversed(current):
                if carried + prev.tokens > overlap_tokens or prev.atomic:
                    break
                carry.insert(0, prev)
                carried += prev.tokens
            if carried + piece.tokens > max_tokens:
                carry, carried = [], 0.0
            current, size = carry, carried
        current.append(piece)
        size += piece.tokens
    if current:
        windows.append(current)
    return windows


def _window_text(window: list[_Piece], lines: list[str]) -> tuple[int, int, str]:
    """(first line, last line, text) of a window, with blank edge lines trimmed."""
    head, tail = window[0], window[-1]
    if head.first == tail.last:
        return head.first, head.first, lines[head.first][head.start_char : tail.end_char].strip()
    parts = [
        lines[head.first][head.start_char :],
        *lines[head.first + 1 : tail.last],
        lines[tail.last][: tail.end_char],
    ]
    first, last = head.first, tail.last
    while parts and not parts[0].strip():
        parts.pop(0)
        first += 1
    while parts and not parts[-1].strip():
        parts.pop()
        last -= 1
    return first, last, "\n".join(parts)


def _without_front_matter(lines: list[str]) -> list[str]:
    """Blank out a leading `---` front matter block: it is metadata, not memory (line numbers stay)."""
    if lines and lines[0].strip() == "---":
        for end in range(1, min(len(lines), 100)):
            if lines[end].strip() in ("---", "..."):
                return [""] * (end + 1) + lines[end + 1 :]
    return lines


def chunk_markdown(text: str, max_tokens: int = 400, overlap_tokens: int = 80) -> list[Chunk]:
    """Split Markdown into chunks that each know their 1-based line range and heading path."""
    lines = _without_front_matter(split_lines(text))
    chunks: list[Chunk] = []
    for section in _parse_sections(lines):
        pieces = [p for unit in section.units for p in _pieces(unit, lines, max_tokens)]
        heading = " > ".join(section.heading_path)
        for window in _pack(pieces, max_tokens, overlap_tokens, _lead(section, pieces, lines)):
            first, last, body = _window_text(window, lines)
            if not body.strip():
                continue
            at_heading = (
                section.starts_with_heading and window[0].first == section.units[0].start and window[0].start_char == 0
            )
            context = section.heading_path[:-1] if at_heading else section.heading_path
            chunks.append(_make_chunk(first + 1, last + 1, body, heading, context))
    return chunks


def _lead(section: _Section, pieces: list[_Piece], lines: list[str]) -> int:
    """How many of a section's first pieces are its heading line and the blank lines after it."""
    if not section.starts_with_heading:
        return 0
    count = 1
    while count < len(pieces) and pieces[count].first == pieces[count].last and not lines[pieces[count].first].strip():
        count += 1
    return count if count < len(pieces) else 0


def _make_chunk(start: int, end: int, text: str, heading: str, context: tuple[str, ...]) -> Chunk:
    prefix = " > ".join(context)
    return Chunk(start, end, text, heading, prefix, sha256(embed_input(prefix, text)))


def chunk_plain_lines(lines: list[str], max_tokens: int = 400, overlap_tokens: int = 80) -> list[tuple[int, int, str]]:
    """Chunk lines with no Markdown structure (transcript turns): (first index, last index, text), 0-based."""
    units = [_Unit(i, i + 1, estimate_tokens(line) + 1) for i, line in enumerate(lines)]
    pieces = [p for unit in units for p in _pieces(unit, lines, max_tokens)]
    out = []
    for window in _pack(pieces, max_tokens, overlap_tokens):
        first, last, body = _window_text(window, lines)
        if body.strip():
            out.append((first, last, body))
    return out
