"""Read a window of lines from a file of any size, in bounded memory and time linear in the bytes before it.

`get` used to read, decode and redact a whole note to return five of its lines: 40 s and hundreds of MB for a
50 MB note. This reads the file in blocks, keeps only the lines asked for (each cut at a character cap) and
the few lines before them that redaction needs, and counts the rest without decoding it. Lines end at \\n,
\\r\\n or \\r, as `markdown.split_lines` splits them."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

BLOCK_BYTES = 1 << 20
CONTEXT_LINES = 64  # lines before the window kept for redaction, back to the last blank line (no secret spans one)
CONTEXT_BYTES = 64 << 10
_EOL = re.compile(rb"\r\n|\r|\n")


@dataclass
class Window:
    lines: list[str]  # the lines asked for, each cut to `line_cap` characters
    context: list[str]  # the lines just before them, back to the last blank line (at most CONTEXT_LINES)
    total_lines: int
    cut: bool = False  # a line in the window was longer than the cap


def read_window(path: Path, first: int, count: int, line_cap: int) -> Window:
    """Lines first..first+count-1 (1-based) of `path`, and how many lines it has."""
    last = first + count - 1
    context: deque[bytes] = deque(maxlen=CONTEXT_LINES)
    window: list[bytes] = []
    cut = False
    breaks = 0  # line breaks seen: lines completed
    carry = b""  # the open line's bytes, up to the cap (kept only while the window is not yet full)
    carry_cut = False
    cr_at_end = False  # the last block ended in \r, whose \n may open the next block
    last_byte = b""
    cap_bytes = 4 * line_cap  # a UTF-8 character is at most four bytes

    def finish(raw: bytes) -> None:
        nonlocal breaks, cut
        breaks += 1
        if breaks < first:
            if not raw.strip() or len(raw) > CONTEXT_BYTES:
                context.clear()  # no secret spans a blank line, and a line this long is no secret's neighbour
            else:
                context.append(raw)
        elif breaks <= last:
            window.append(raw)
            cut = cut or carry_cut

    with path.open("rb") as fh:
        while block := fh.read(BLOCK_BYTES):
            if cr_at_end and block.startswith(b"\n"):
                block = block[1:]  # the \r before it was already counted as the break
            if not block:
                continue
            cr_at_end, last_byte = block.endswith(b"\r"), block[-1:]
            if breaks >= last:
                breaks += _breaks(block)
                continue
            ahead = _breaks(block)
            if breaks + ahead + CONTEXT_LINES + 1 < first:  # every line it ends is too far before the window
                breaks += ahead
                end = max(block.rfind(b"\n"), block.rfind(b"\r"))
                carry = block[end + 1 :] if end >= 0 else carry + block
                if end >= 0:
                    carry_cut = False
                    context.clear()
                if len(carry) > cap_bytes:
                    carry, carry_cut = carry[:cap_bytes], True
                continue
            pieces = _EOL.split(block)
            for done, piece in enumerate(pieces[:-1], 1):
                line, carry = (carry + piece if done == 1 else piece), b""
                finish(line[:cap_bytes] if len(line) > cap_bytes else line)
                carry_cut = False
                if breaks >= last:
                    breaks += len(pieces) - 1 - done
                    break
            else:
                carry += pieces[-1]
                if len(carry) > cap_bytes:  # one long line: keep what the window could show, skip the rest
                    carry, carry_cut = carry[:cap_bytes], True
    if last_byte and last_byte not in b"\r\n":  # a last line without a line break
        if breaks < last:
            finish(carry)
        else:
            breaks += 1
    return _window(window, context, breaks, cut, line_cap)


def _breaks(block: bytes) -> int:
    """Line breaks in a block (\r\n counts once), counted in C without splitting it."""
    return block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")


def _window(window: list[bytes], context: deque[bytes], total: int, cut: bool, line_cap: int) -> Window:
    lines = []
    for raw in window:
        text = raw.decode("utf-8", errors="replace")
        if len(text) > line_cap:
            text, cut = text[:line_cap], True
        lines.append(text)
    return Window(lines, [c.decode("utf-8", errors="replace") for c in context], total, cut)
