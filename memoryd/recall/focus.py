"""What recall reads of a long prompt: its opening and its last question, within a few dozen tokens. A pasted file
or log says little that a memory could answer, and embedding it took seconds on a busy machine (a hook waits 2 s):
what is embedded and searched is bounded, whatever the prompt's length."""

from __future__ import annotations

import re

from memoryd.recall.block import estimate_tokens

FOCUS_TOKENS = 96  # measured with bench.recall's long prompts (python -m bench.recall --parts long)
WINDOW_CHARS = 4000  # of a longer prompt, the start and the end are read
QUESTION_MARKS = ("?", "？", "؟")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|(?<=[。！？؟])\s*")
_INDENTED = re.compile(r"^(?: {4}|\t)")  # a line of code, pasted without a fence
_FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.M | re.S)  # Markdown's code blocks
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*$", re.M)
_SPACE = re.compile(r"\s+")
_PUNCTUATION = "\"'’“”‘.,;:!?()[]«»¿¡…—–-。、，！？：；（）「」『』"


def _plain(word: str) -> bool:
    """A word of prose: letters, perhaps with an apostrophe or hyphen, and punctuation around it only."""
    core = word.strip(_PUNCTUATION)
    return bool(core) and all(ch.isalpha() or ch in "'’-" for ch in core)


def _wordy(sentence: str) -> bool:
    """Prose rather than code, a path or a log line: most of its words are plain words (`estimate_tokens` and
    `memoryd.recall` are not). A sentence of a script written without spaces is one word."""
    words = sentence.split()
    plain = [w for w in words if _plain(w)]
    if len(words) == 1:
        return bool(plain) and not words[0].isascii()
    return len(plain) >= 2 and len(plain) >= 0.6 * len(words)


def _head(text: str, tokens: int) -> str:
    """The longest start of `text` within `tokens`, ending on a word where there is one."""
    text = text[: 4 * tokens]  # an estimated token is at most four characters
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) <= tokens:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    space = cut.rfind(" ")
    if low < len(text) and space > low * 0.7:
        cut = cut[:space]
    return cut.strip()


def _tail(text: str, tokens: int) -> str:
    """The longest end of `text` within `tokens`, starting on a word where there is one: a long question asks at
    its end."""
    return _head(text[-4 * tokens :][::-1], tokens)[::-1]


def _sentences(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if not _INDENTED.match(line)]
    parts = (part for line in lines for part in _SENTENCES.split(line))
    return [s for s in (_SPACE.sub(" ", part).strip() for part in parts) if s]


def _prose(text: str) -> list[str]:
    """The sentences of prose in a piece of a prompt, outside its code blocks."""
    return [s for s in _sentences(_FENCED.sub("\n", text)) if _wordy(s)]


def _after_open_fence(end: str) -> str:
    """The end of a prompt without the rest of a code block opened before it."""
    fences = list(_FENCE_LINE.finditer(end))
    return end[fences[0].end() :] if len(fences) % 2 else end


def focus(prompt: str, tokens: int = FOCUS_TOKENS) -> str:
    """The prompt whole when it is short; else its first sentence of prose (at most a third of `tokens`) and its
    last question (or last sentence of prose), within `tokens` as block.estimate_tokens counts them. Only its first
    and last WINDOW_CHARS are read: the middle of a long paste asks nothing, and reading it costs time."""
    text = prompt.strip()
    if len(text) <= 4 * tokens and estimate_tokens(text) <= tokens:
        return text
    if len(text) > 2 * WINDOW_CHARS:
        prose = _prose(text[:WINDOW_CHARS]) + _prose(_after_open_fence(text[-WINDOW_CHARS:]))
    else:
        prose = _prose(text)
    if not prose:
        return _head(_SPACE.sub(" ", text[: 4 * tokens]), tokens)
    opening = prose[0]
    asked = [s for s in prose[1:] if any(mark in s for mark in QUESTION_MARKS)]
    if asked:
        question = asked[-1]
    elif len(prose) > 1 and not any(mark in opening for mark in QUESTION_MARKS):
        question = prose[-1]  # "... why does this break" without its question mark
    else:
        return _head(opening, tokens)
    opening = _head(opening, tokens // 3)  # the question weighs more
    return f"{opening}\n{_tail(question, tokens - estimate_tokens(opening) - 1)}".strip()
