"""Redact secrets before text reaches the index or any embedding provider.

Patterns run on RE2, which matches in time linear in the text: a backtracking engine (Python's `re`) took
minutes on a note holding one long unbroken word, holding the GIL and so the whole daemon. A user's own pattern
that RE2 cannot run (lookaround, backreferences: features that can backtrack) is a config error.

The built-in rules (memoryd.sources.secret_rules, which says what they mask and what they leave) run as one RE2
pattern in one pass, whose groups say which rule matched; each match's value is judged in Python (placeholder,
reference, code or credential) and masked with its label kept. A value judged not a secret is searched again on
its own for the other rules, so a token inside it is still found. A Markdown table whose header names a secret
is then read column by column, the one thing a single match cannot see."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import re2

from memoryd.sources import secret_patterns as patterns
from memoryd.sources import secret_rules as rules
from memoryd.sources.text import decodable

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


_BUILTIN = _compile(patterns.pattern())
_DEPTH = 3  # how deep a rejected value is searched again (each time a shorter text)
_RESCAN = 6  # a rejected value shorter than this holds no secret of any rule
_TABLE_RULE = _compile(patterns.TABLE_RULE)


def _rules(index: dict[str, int]) -> tuple[tuple[str, int, dict[str, int]], ...]:
    """Each rule as (kind, its group in the one pattern, its parts' groups by name); labelled first, the most
    common match."""
    found = []
    for i, (kind, _) in enumerate(patterns.alternatives()):
        parts = {name: index[f"{name}_{i}"] for name in patterns.GROUPS if f"{name}_{i}" in index}
        found.append((kind, index[f"rule_{i}"], parts))
    return tuple(sorted(found, key=lambda rule: rule[0] != "labelled"))


_RULES = _rules(_BUILTIN.groupindex)


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
        try:
            return self._redact_blocks(text)
        except UnicodeEncodeError:  # RE2 reads UTF-8: a note's bytes that are not are read as `get` shows them
            return self._redact_blocks(decodable(text))

    def _redact_blocks(self, text: str) -> str:
        if len(text) <= BLOCK_CHARS:
            return self._redact(text)
        return "".join(self._redact(block) for block in _blocks(text))

    def _redact(self, text: str) -> str:
        text = _tables(_builtin(text, 0))
        for pattern in self.patterns:
            text = pattern.sub(_mask, text)
        return text


def _builtin(text: str, depth: int) -> str:
    """The text with each match of the built-in rules judged. An ASCII text is searched as its bytes, whose offsets
    are its characters': the binding then hands back RE2's offsets as they are instead of converting each."""
    pieces, done = [], 0
    for match in _BUILTIN.finditer(text.encode() if text.isascii() else text):
        pieces += [text[done : match.start()], _judge(text, match, depth)]
        done = match.end()
    return "".join(pieces) + text[done:] if pieces else text


def _judge(text: str, match: Any, depth: int) -> str:
    """The match with its value masked, or, where the value is no secret, with the value searched again alone."""
    start, end = match.start(), match.end()
    kind, parts = _rule(text, match)
    if kind == "whole":
        return _masked(text, start, end, start, end)
    if kind == "cookie":
        return text[start : parts.start("value")] + _cookies(parts.group("value"), depth)
    begin, finish = parts.span("value")
    quoted = begin < 0
    if quoted:
        begin, finish = parts.span("dq") if parts.start("dq") >= 0 else parts.span("sq")
        begin, finish = begin + 1, finish - 1
    value = text[begin:finish] if quoted else rules.trim(text[begin:finish])
    if parts.start("mark") >= 0:
        begin, value = _unmarked(text, begin, finish, value, parts.group("mark"))
    finish = begin + len(value)
    if kind == "always":
        secret = True
    elif kind == "unless stand-in":
        secret = bool(value.strip()) and not _stand_in(value.strip())
    elif kind == "command":  # mysql -proot, -p'…': plainly the password; -p word: only one that looks like it
        glued = not text[begin - 1 : begin].isspace()
        secret = bool(value) and not _stand_in(value) and (glued or rules.credential_shaped(value))
    elif kind == "credential":
        secret = rules.credential_shaped(value) and not _stand_in(value)
    elif kind == "xml":
        secret = _surely_secret(rules.sensitive_key(parts.group("key")), value) and not _stand_in(value)
    elif kind == "heading":
        secret = _heading_secret(parts.group("key"), value)
    else:
        secret = _labelled_secret(text, start, end, parts, value, quoted)
    head = text[start:begin]
    if kind == "command":  # the options before the password: searched again, past the command's own name
        word = len(head.split(None, 1)[0])
        head = head[:word] + _rescanned(head[word:], depth)
    if secret:
        return head + MASK + "\n" * text.count("\n", begin, finish) + text[finish:end]
    return head + _rescanned(value, depth) + text[finish:end]


def _unmarked(text: str, begin: int, finish: int, value: str, mark: str) -> tuple[int, str]:
    """The value without the Markdown around it (**x**, `x`); a mark that does not close after the value is part of
    it (_x9)."""
    if mark == "`" and text[finish : finish + 1] == "`":
        return begin, value
    if mark != "`" and value.endswith(mark) and value != mark:
        return begin, value[: -len(mark)]
    return begin - len(mark), mark + value


def _rescanned(text: str, depth: int) -> str:
    return _builtin(text, depth + 1) if depth < _DEPTH and len(text) >= _RESCAN else text


class _Parts:
    """The groups of the one rule that matched, by name (-1 where a group took no part)."""

    def __init__(self, text: str, found: Any, names: dict[str, int]) -> None:
        self.text, self.found, self.names = text, found, names

    def start(self, name: str) -> int:
        return self.found.start(self.names[name]) if name in self.names else -1

    def end(self, name: str) -> int:
        return self.found.end(self.names[name])

    def span(self, name: str) -> tuple[int, int]:
        return self.found.span(self.names[name]) if name in self.names else (-1, -1)

    def group(self, name: str) -> str:
        start, end = self.found.span(self.names[name])
        return self.text[start:end]


def _rule(text: str, match: Any) -> tuple[str, _Parts]:
    """Which rule matched (the one whose group took part) and its groups."""
    for kind, group, names in _RULES:
        if match.start(group) >= 0:
            return kind, _Parts(text, match, names)
    raise AssertionError("a match of the built-in pattern is a match of one of its rules")


def _stand_in(value: str) -> bool:
    return rules.placeholder(value) or rules.reference(value)


def _labelled_secret(text: str, start: int, end: int, parts: _Parts, value: str, quoted: bool) -> bool:
    """Whether a labelled value is a secret (the rules in memoryd.sources.secret_rules)."""
    key_start = _key_start(text, start)
    path = text[key_start - 1 : key_start] == "/"  # memory/auth.md: a file's name, not a key
    key_start = _label_start(text, key_start)
    key = text[key_start : parts.end("key")]
    strength = rules.NOT_SENSITIVE if path else rules.sensitive_key(key)
    value = value.strip() if quoted else value
    if not strength or not value or _stand_in(value):
        return False
    if quoted:  # "…".join(), "%s" % x: code
        return text[end : end + 1] not in (".", "[", "(", "%") and _surely_secret(strength, value)
    sep = parts.group("sep")
    config_name = len(rules.key_words(key)) > 1 or key.isupper()  # DB_PASSWORD, dbPassword, PASSWORD
    prose_shaped = "=" not in sep and "|" not in sep and not config_name and not rules.password_key(key)
    if prose_shaped and rules.unspaced_prose(value):
        return False  # a label, then a sentence: auth: migrateระบบแคชจากMemcachedไปRedisเสร็จแล้ว
    if "|" in sep:  # | password | value |: a table's row, both whole cells
        cells = _in_cell(text, key_start, end)
        return cells and not rules.code(value, key, False) and _surely_credential(strength, value)
    glued = sep[:1] in "=:：" and not sep[1:2].isspace()
    spaced = "=" in sep and sep[:1].isspace()
    quoted_key = key_start > 0 and text[key_start - 1] in "\"'"
    if rules.code(value, key, spaced or quoted_key) or (spaced and rules.operator_follows(text[end : end + 8])):
        return False
    if strength == rules.WEAK:
        return rules.long_credential(value)
    if rules.credential_shaped(value):
        return True
    if len(value) < 3 or quoted_key or rules.prose_label(key):
        return False
    ends = _ends_line(text, end)
    return (ends and (config_name or _starts_line(text, key_start))) or (glued and config_name)


def _heading_secret(key: str, value: str) -> bool:
    """Whether the line under a heading that names a secret (## API key) is one: a credential by its look."""
    strength = rules.sensitive_key(key)
    if not strength or _stand_in(value) or rules.code(value, key, False):
        return False
    return _surely_credential(strength, value)


def _surely_secret(strength: int, value: str) -> bool:
    return strength == rules.STRONG or (strength == rules.WEAK and rules.long_credential(value))


def _surely_credential(strength: int, value: str) -> bool:
    if strength == rules.WEAK:
        return rules.long_credential(value)
    return rules.credential_shaped(value)


def _key_start(text: str, start: int) -> int:
    """Where the key name holding the match's sensitive word begins (DB_ before PASSWORD, Shared before AccessKey;
    not back into an escape: \\nAuthorization)."""
    floor = max(0, start - rules.MAX_KEY)
    while start > floor and text[start - 1] in rules.KEY_CHARS and text[start - 2 : start - 1] != "\\":
        start -= 1
    return start


def _label_start(text: str, start: int) -> int:
    """Where a label of two words begins when the key is the second and the first says which (API key, Secret
    key, Access token); else the key's own start."""
    if text[start - 1 : start] != " ":
        return start
    word = start - 1
    while word > 0 and text[word - 1].isalpha() and start - word <= 16:
        word -= 1
    return word if text[word : start - 1].lower() in rules.KEY_HEADS else start


def _in_cell(text: str, key_start: int, end: int) -> bool:
    """Whether the key and the value each fill a table cell: a pipe before the key, one or the line's end after
    the value."""
    line_start = text.rfind("\n", 0, key_start) + 1
    before = text[line_start:key_start].rstrip(" \t*_`")
    after = text[end : end + 16].lstrip(" \t*_`")
    return before.endswith("|") and after[:1] in ("|", "\r", "\n", "")


def _starts_line(text: str, start: int) -> bool:
    """Whether only a list mark, a comment mark or a shell word (export, set, ENV) stands before the key on its line."""
    floor = max(0, start - 24)
    before = text[floor:start]
    line = before.rsplit("\n", 1)[-1] if "\n" in before or floor == 0 else None
    if line is None:
        return False
    words = line.replace("$env:", " ").strip(" \t-*#/>`").split()
    return all(word.lower() in ("export", "set", "env", "setx", "declare", "readonly") for word in words)


def _ends_line(text: str, end: int) -> bool:
    """Whether nothing but a delimiter or a comment follows the value on its line."""
    rest = text[end : end + 32].lstrip(" \t")
    return not rest or rest[0] in "\r\n,;&)}]#"


def _cookies(header: str, depth: int) -> str:
    """A Cookie or Set-Cookie header's value with each cookie's value masked where it looks like a credential
    (session=…, sid=…), its attributes (Path, Expires, …) and other pairs searched again."""
    pieces = []
    for piece in header.split(";"):
        name, equals, raw = piece.partition("=")
        value = raw.strip().strip("\"'")
        if equals and value and rules.cookie_secret(name.strip(), value) and not _stand_in(value):
            at = raw.index(value)
            pieces.append(f"{name}={raw[:at]}{MASK}{raw[at + len(value) :]}")
        else:
            pieces.append(_rescanned(piece, depth))
    return ";".join(pieces)


def _tables(text: str) -> str:
    """Cells under a table column whose header names a secret (| host | password |), masked where they look
    like a credential; each row is one line, so line numbers hold."""
    if "|" not in text or "-" not in text:
        return text
    pieces, done = [], 0
    for rule in _TABLE_RULE.finditer(text):
        if rule.start() <= done:  # no header row above it, or within a table already done
            continue
        header = text[text.rfind("\n", 0, rule.start() - 1) + 1 : rule.start() - 1]
        columns = _secret_columns(header) if "|" in header else {}
        row = rule.end() + 1
        while columns and row < len(text):
            row_end = text.find("\n", row)
            row_end = len(text) if row_end < 0 else row_end
            line = text[row:row_end]
            if "|" not in line:
                break
            pieces += [text[done:row], _masked_row(line, columns)]
            done, row = row_end, row_end + 1
    return "".join(pieces) + text[done:] if pieces else text


def _cells(line: str) -> list[tuple[int, int]]:
    """Where each cell of a table row lies, without the pipes at its ends."""
    spans, at = [], 0
    for cell in line.split("|"):
        spans.append((at, at + len(cell)))
        at += len(cell) + 1
    if len(spans) > 1 and not line[: spans[0][1]].strip():
        spans = spans[1:]
    if len(spans) > 1 and not line[spans[-1][0] :].strip():
        spans = spans[:-1]
    return spans


def _secret_columns(header: str) -> dict[int, tuple[str, int]]:
    """The columns whose header names a secret (Password, API key, DB_PASSWORD), with the name and how surely."""
    columns = {}
    for i, (a, b) in enumerate(_cells(header)):
        name = header[a:b].strip(" \t*_`")
        strength = rules.sensitive_key(name) if name else rules.NOT_SENSITIVE
        if strength:
            columns[i] = (name, strength)
    return columns


def _masked_row(line: str, columns: dict[int, tuple[str, int]]) -> str:
    """The row with its cells under those columns masked where they hold one credential-shaped word."""
    out, done = [], 0
    for i, (a, b) in enumerate(_cells(line)):
        if i not in columns:
            continue
        cell = line[a:b]
        value = cell.strip(" \t*_`")
        name, strength = columns[i]
        if not value or len(value.split()) > 1 or _stand_in(value) or rules.code(value, name, False):
            continue
        if _surely_credential(strength, value):
            at = a + cell.index(value)
            out += [line[done:at], MASK]
            done = at + len(value)
    return "".join(out) + line[done:]


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
