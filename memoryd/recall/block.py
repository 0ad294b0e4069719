"""The block of memories put before a prompt: the best hits, each with its citation, within a token budget."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPACE = re.compile(r"\s+")
HEADER = "Memories that may bear on this (from memoryd; cite as path#Lx-Ly, memory_get reads more):"
OPEN, CLOSE = "<memoryd-recall>", "</memoryd-recall>"
MIN_SNIPPET_TOKENS = 24  # a memory cut shorter than this is left out rather than shown as a stub


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate that errs high: four ASCII characters a token, and a token for every other one
    (a CJK or Thai character is about one; accented Latin letters are fewer)."""
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    return -(-ascii_chars // 4) + (len(text) - ascii_chars)


def cut_to_tokens(text: str, tokens: int) -> str:
    """The longest start of `text` estimated at `tokens` or fewer, ending on a word where there is one."""
    if estimate_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) + 1 <= tokens:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    space = cut.rfind(" ")
    if space > low * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "…"


@dataclass(frozen=True)
class Memory:
    citation: str
    snippet: str
    score: float
    when: str = ""  # the note's date, when it has one
    key: str = ""  # the chunk it comes from, as a session's shown memories name it

    def line(self, snippet: str) -> str:
        dated = f" ({self.when})" if self.when else ""
        return f"- {self.citation}{dated}: {snippet}"


def build_block(memories: list[Memory], budget: int) -> tuple[str, list[Memory], int]:
    """The block and the memories it holds (best first), and its estimated tokens; ("", [], 0) when none fits."""
    frame = estimate_tokens(f"{OPEN}\n{HEADER}\n{CLOSE}") + 2
    left = budget - frame
    lines: list[str] = []
    kept: list[Memory] = []
    for memory in memories:
        snippet = _SPACE.sub(" ", memory.snippet).strip()
        fixed = estimate_tokens(memory.line("")) + 1
        room = left - fixed
        if room < MIN_SNIPPET_TOKENS:
            if room < 0 or kept:
                break
            continue
        line = memory.line(cut_to_tokens(snippet, room))
        left -= estimate_tokens(line) + 1
        lines.append(line)
        kept.append(memory)
    if not kept:
        return "", [], 0
    block = "\n".join([OPEN, HEADER, *lines, CLOSE])
    return block, kept, estimate_tokens(block) + 1
