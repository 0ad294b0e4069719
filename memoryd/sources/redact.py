"""Redact secrets before text reaches the index or any embedding provider.

Patterns run on RE2, which matches in time linear in the text: a backtracking engine (Python's `re`) took
minutes on a note holding one long unbroken word, holding the GIL and so the whole daemon. A user's own pattern
that RE2 cannot run (lookaround, backreferences: features that can backtrack) is a config error.

The built-in rules (memoryd.sources.secret_rules, which says what they mask and what they leave) run as one RE2
pattern in one pass; each match's value is judged in Python (placeholder, reference, code or credential) and
masked with its label kept. A value judged not a secret is searched again on its own for the other rules, so a
token inside it is still found."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import re2

from memoryd.sources import secret_rules as rules

MASK = "[REDACTED]"


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


_BUILTIN_ONE = _compile(rules.pattern())
_RULES = tuple((kind, lead, _compile(p)) for kind, lead, p in rules.alternatives())
_DEPTH = 3  # how deep a rejected value is searched again (each time a shorter text)
_RESCAN = 6  # a rejected value shorter than this holds no secret of any rule


@dataclass(frozen=True)
class Redactor:
    patterns: tuple[Any, ...]  # a user's own, masked whole

    @classmethod
    def create(cls, extra: Iterable[str] = ()) -> Redactor:
        return cls(tuple(_compile(p) for p in extra))

    def __call__(self, text: str) -> str:
        """The text with secrets masked; a masked span keeps its line breaks, so line numbers still hold.
        A long text goes block by block (split at blank lines, which no secret spans), because a regular
        expression holds the GIL for its whole scan and searches would wait for it."""
        if len(text) <= BLOCK_CHARS:
            return self._redact(text)
        return "".join(self._redact(block) for block in _blocks(text))

    def _redact(self, text: str) -> str:
        text = _builtin(text, 0)
        for pattern in self.patterns:
            text = pattern.sub(_mask, text)
        return text


def _builtin(text: str, depth: int) -> str:
    return _BUILTIN_ONE.sub(lambda match: _judge(match, depth), text)


def _judge(match: Any, depth: int) -> str:
    """The match with its value masked, or, where the value is no secret, with the value searched again alone."""
    text, start, end = match.string, match.start(), match.end()
    kind, parts = _split(text[start:end])
    if parts is None or kind == "whole":
        return _masked(text, start, end, start, end)
    name = "dq" if parts.start("dq") >= 0 else "sq" if parts.start("sq") >= 0 else "value"
    quoted = name != "value"
    begin, finish = start + parts.start(name) + quoted, start + parts.end(name) - quoted
    value = text[begin:finish] if quoted else rules.trim(text[begin:finish])
    finish = begin + len(value)
    if kind == "always":
        secret = True
    elif kind == "unless stand-in":
        secret = bool(value.strip()) and not _stand_in(value.strip())
    elif kind == "credential":
        secret = rules.credential_shaped(value) and not _stand_in(value)
    elif kind == "xml":
        secret = _surely_secret(rules.sensitive_key(parts.group("key")), value) and not _stand_in(value)
    else:
        secret = _labelled_secret(text, start, end, parts, value, quoted)
    if secret:
        return _masked(text, start, end, begin, finish)
    inner = _builtin(value, depth + 1) if depth < _DEPTH and len(value) >= _RESCAN else value
    return text[start:begin] + inner + text[finish:end]


class _Parts:
    """The groups of the one rule that matched, by name (-1 where a group took no part)."""

    def __init__(self, found: Any, names: dict[str, int]) -> None:
        self.found, self.names = found, names

    def start(self, name: str) -> int:
        return self.found.start(self.names[name]) if name in self.names else -1

    def end(self, name: str) -> int:
        return self.found.end(self.names[name])

    def group(self, name: str) -> str:
        return self.found.group(self.names[name])


def _split(matched: str) -> tuple[str, _Parts | None]:
    """Which rule matched (the first, in the order the search tries them) and its groups; were none to match the
    span alone (a rule whose match depends on the text around it), the whole span is masked."""
    head = matched[:10].lower()
    for kind, lead, rule in _RULES:
        found = rule.fullmatch(matched) if head.startswith(lead) else None
        if found is not None:
            return kind, _Parts(found, rule.groupindex)
    return "whole", None


def _stand_in(value: str) -> bool:
    return rules.placeholder(value) or rules.reference(value)


def _labelled_secret(text: str, start: int, end: int, parts: _Parts, value: str, quoted: bool) -> bool:
    """Whether a labelled value is a secret (the rules in memoryd.sources.secret_rules)."""
    key_start = _key_start(text, start)
    key = text[key_start : start + parts.end("key")]
    path = text[key_start - 1 : key_start] == "/"  # memory/auth.md: a file's name, not a key
    strength = rules.NOT_SENSITIVE if path else rules.sensitive_key(key)
    value = value.strip() if quoted else value
    if not strength or not value or _stand_in(value):
        return False
    if quoted:  # "…".join(), "%s" % x: code
        return text[end : end + 1] not in (".", "[", "(", "%") and _surely_secret(strength, value)
    sep = parts.group("sep")
    glued = sep[:1] in "=:" and not sep[1:2].isspace()
    spaced = "=" in sep and sep[:1].isspace()
    quoted_key = key_start > 0 and text[key_start - 1] in "\"'"
    if rules.code(value, key, spaced or quoted_key):
        return False
    if strength == rules.WEAK:
        return rules.long_credential(value)
    if rules.credential_shaped(value):
        return True
    if len(value) < 3 or quoted_key:
        return False
    config_name = len(rules.key_words(key)) > 1 or key.isupper()  # DB_PASSWORD, dbPassword, PASSWORD
    ends = _ends_line(text, end)
    return (ends and (config_name or _starts_line(text, key_start))) or (glued and config_name)


def _surely_secret(strength: int, value: str) -> bool:
    return strength == rules.STRONG or (strength == rules.WEAK and rules.long_credential(value))


def _key_start(text: str, start: int) -> int:
    """Where the key name holding the match's sensitive word begins (DB_ before PASSWORD, Shared before AccessKey;
    not back into an escape: \\nAuthorization)."""
    floor = max(0, start - rules.MAX_KEY)
    while start > floor and text[start - 1] in rules.KEY_CHARS and text[start - 2 : start - 1] != "\\":
        start -= 1
    return start


def _starts_line(text: str, start: int) -> bool:
    """Whether only a list mark, a comment mark or a shell word (export, set, ENV) stands before the key on its line."""
    floor = max(0, start - 24)
    before = text[floor:start]
    line = before.rsplit("\n", 1)[-1] if "\n" in before or floor == 0 else None
    if line is None:
        return False
    words = line.replace("$env:", " ").strip(" \t-*#/>").split()
    return all(word.lower() in ("export", "set", "env", "setx", "declare", "readonly") for word in words)


def _ends_line(text: str, end: int) -> bool:
    """Whether nothing but a delimiter or a comment follows the value on its line."""
    rest = text[end : end + 32].lstrip(" \t")
    return not rest or rest[0] in "\r\n,;&)}]#"


def _masked(text: str, start: int, end: int, begin: int, finish: int) -> str:
    """The match with text[begin:finish] masked, its line breaks kept."""
    return text[start:begin] + MASK + "\n" * text.count("\n", begin, finish) + text[finish:end]


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


DEFAULT = Redactor.create()
