"""Redact secrets before text reaches the index or any embedding provider.

Patterns run on RE2, which matches in time linear in the text: a backtracking engine (Python's `re`) took
minutes on a note holding one long unbroken word, holding the GIL and so the whole daemon. A user's own pattern
that RE2 cannot run (lookaround, backreferences: features that can backtrack) is a config error."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import re2

MASK = "[REDACTED]"

_BUILTIN = [
    # Private key blocks, whole.
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    # Provider API keys.
    r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bASIA[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_\-]{35}\b",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
    r"\bglpat-[A-Za-z0-9_\-]{20,}\b",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\bhf_[A-Za-z0-9]{30,}\b",
    r"\bpa-[A-Za-z0-9_\-]{30,}\b",  # Voyage
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWTs
]
# Keep the label, hide the value.
_LABELLED = [
    r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{16,}",
    r"(?i)(\b(?:api[_-]?key|secret|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd|pwd)"
    r"\b[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]{6,}",
    r"([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(@)",  # passwords in URLs (the @ is put back)
]


BLOCK_CHARS = 1 << 14  # text is redacted in blocks of about this size, split at blank lines
_OPTIONS = re2.Options()
_OPTIONS.max_mem = 64 << 20  # a pathological user pattern fails to compile instead of growing without bound
_OPTIONS.log_errors = False  # a bad user pattern is reported by `config check`, not by RE2 on stderr


def _compile(pattern: str) -> Any:
    return re2.compile(pattern, options=_OPTIONS)


def redact_pattern_error(pattern: str) -> str | None:
    """Why memoryd cannot run this redaction pattern, or None."""
    try:
        _compile(pattern)
    except re2.error as exc:
        why = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return f"{why} (memoryd runs patterns on RE2: no lookaround or backreferences)"
    return None


_BUILTIN_ONE = _compile("|".join(f"(?:{p})" for p in _BUILTIN))  # one pass instead of one per pattern


@dataclass(frozen=True)
class Redactor:
    patterns: tuple[Any, ...]
    labelled: tuple[Any, ...]

    @classmethod
    def create(cls, extra: Iterable[str] = ()) -> Redactor:
        return cls((_BUILTIN_ONE, *(_compile(p) for p in extra)), tuple(_compile(p) for p in _LABELLED))

    def __call__(self, text: str) -> str:
        """The text with secrets masked; a masked span keeps its line breaks, so line numbers still hold.
        A long text goes block by block (split at blank lines, which no secret spans), because a regular
        expression holds the GIL for its whole scan and searches would wait for it."""
        if len(text) <= BLOCK_CHARS:
            return self._redact(text)
        return "".join(self._redact(block) for block in _blocks(text))

    def _redact(self, text: str) -> str:
        for pattern in self.patterns:
            text = pattern.sub(_mask, text)
        for pattern in self.labelled:
            text = pattern.sub(_mask_value, text)
        return text


def _blocks(text: str) -> list[str]:
    """Consecutive pieces of about BLOCK_CHARS that end after a blank line (or anywhere, if a piece has none)."""
    blocks = []
    start = 0
    while start < len(text):
        end = text.find("\n\n", start + BLOCK_CHARS)
        end = len(text) if end < 0 else end + 2
        blocks.append(text[start:end])
        start = end
    return blocks


def _mask(match: Any) -> str:
    return MASK + "\n" * match.group().count("\n")


def _mask_value(match: Any) -> str:
    """The label (group 1) kept, the value masked, and a closing delimiter (group 2, where there is one) kept."""
    closing = match.group(2) if match.re.groups >= 2 else ""
    return match.group(1) + MASK + (closing or "")


DEFAULT = Redactor.create()
