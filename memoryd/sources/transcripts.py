"""Conversation transcripts (.jsonl) as memory: OpenClaw, Claude Code and Codex formats, read incrementally."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryd.settings import AgentConfig
from memoryd.sources.discovery import (
    SourceFile,
    display_path,
    is_ignored_dir,
    is_transcript,
    real_workspace,
    walk_files,
)
from memoryd.sources.markdown import Chunk, chunk_plain_lines, sha256

ROLES = {"user": "User", "assistant": "Assistant"}
_SPACE = re.compile(r"\s+")
# what automatic recall put before a prompt, where a platform writes it into the turn: memory, not new words
# what a platform puts in a user turn for the model rather than from the user (Codex's <environment_context>)
_CONTEXT_BLOCK = re.compile(r"<([a-z_]{1,40})>.*</\1>", re.DOTALL)
_RECALLED = re.compile(r"<memoryd-recall>.*?(?:</memoryd-recall>|\Z)", re.DOTALL)
MAX_NAME_CHARS = 64


@dataclass(frozen=True)
class Turn:
    line: int  # 1-based line number in the JSONL file
    role: str
    text: str
    timestamp: float | None
    name: str = ""  # the speaker's name, when the line gives one (multi-party chats)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.role})" if self.name else ROLES[self.role]


def discover_transcripts(dirs: tuple[Path, ...], workspace: Path) -> list[SourceFile]:
    found: dict[str, SourceFile] = {}
    for root in dirs:
        if not root.is_dir() or root.is_symlink():
            continue
        for path in walk_files(root, is_transcript):
            real = path.resolve()
            found.setdefault(str(real), SourceFile(display_path(real, workspace), real, "sessions"))
    return sorted(found.values(), key=lambda f: f.path)


def transcript_for(agent: AgentConfig, path: Path) -> SourceFile | None:
    """The transcript at `path` as discover_transcripts would list it, or None when it is not one (not a
    transcript name, a symlink or under one, under an ignored folder, outside the sessions folders, or gone)."""
    if "sessions" not in agent.sources or not is_transcript(path) or path.is_symlink() or not path.is_file():
        return None
    for root in agent.sessions_dirs:
        if not root.is_dir() or root.is_symlink():
            continue
        try:
            inside = path.absolute().relative_to(root.absolute())
        except ValueError:
            continue
        step = root
        for name in inside.parts[:-1]:
            step = step / name
            if step.is_symlink() or is_ignored_dir(name):
                return None
        real = path.resolve()
        return SourceFile(display_path(real, real_workspace(agent)), real, "sessions")
    return None


def grown_since(real: Path, cursor: tuple[int, int, int] | None, max_bytes: int, max_lines: int) -> bool:
    """Has a transcript grown by `max_bytes`, or by `max_lines` lines, since it was read up to `cursor` (inode,
    offset, lines)? A replaced or truncated file counts from its start."""
    stat = real.stat()
    offset = cursor[1] if cursor and cursor[0] == stat.st_ino and stat.st_size >= cursor[1] else 0
    grown = stat.st_size - offset
    if grown >= max_bytes:
        return True
    with real.open("rb") as fh:
        fh.seek(offset)
        return fh.read(grown).count(b"\n") >= max_lines


MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_TEXT_CHARS = 200_000  # one turn's words; a longer one is cut
EARLIEST, LATEST = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc).timestamp(), 253402300799.0  # 9999-12-31


class BadLine(ValueError):
    """A transcript line that is not what any supported format writes; it is skipped and counted."""


def _timestamp(value: object) -> float | None:
    """Epoch seconds or milliseconds, or an ISO string; None when absent or out of range."""
    stamp: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            stamp = float(value) / (1000.0 if value > 1e11 else 1.0)
        except OverflowError:
            return None
    elif isinstance(value, str) and 0 < len(value) <= 64:
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            stamp = (moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)).timestamp()
        except (ValueError, OverflowError, OSError):
            return None
    if stamp is None or not EARLIEST <= stamp <= LATEST:
        return None
    return stamp


def _text_of(content: object) -> str:
    """Only the words people said: text parts; tool calls, tool results and thinking are dropped."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"):
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return ""


def _string(record: dict, key: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise BadLine(f"'{key}' is a {type(value).__name__}, not a string")
    return value


def parse_line(raw: str, line: int) -> Turn | None:
    """One JSONL line -> a user or assistant turn, or None for lines that hold no turn (tool noise, metadata,
    blank). Raises BadLine for a line no supported format writes (broken JSON, wrong types, too big or deep)."""
    if not raw.strip():
        return None
    if len(raw) > MAX_LINE_BYTES:
        raise BadLine(f"longer than {MAX_LINE_BYTES} bytes")
    try:
        record = json.loads(raw)
    except RecursionError:
        raise BadLine("JSON nested too deep") from None
    except ValueError as exc:  # JSONDecodeError, and numbers too long to convert
        raise BadLine(f"not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise BadLine(f"a JSON {type(record).__name__}, not an object")
    kind = _string(record, "type")
    message = record.get("message")
    payload = record.get("payload")
    if kind == "message" and isinstance(message, dict):  # OpenClaw
        role = _string(message, "role")
    elif kind == "response_item" and isinstance(payload, dict) and payload.get("type") == "message":  # Codex
        message, role = payload, _string(payload, "role")
    elif kind in ROLES and isinstance(message, dict):  # Claude Code
        role = _string(message, "role") or kind
    elif _string(record, "role") in ROLES:  # plain {"role", "content"} lines
        message, role = record, record.get("role")
    else:
        return None
    if role not in ROLES or record.get("isMeta"):
        return None
    text = _SPACE.sub(" ", _RECALLED.sub(" ", _text_of(message.get("content"))[:MAX_TEXT_CHARS])).strip()
    if not text or _CONTEXT_BLOCK.fullmatch(text):
        return None
    stamp = _timestamp(record.get("timestamp") or message.get("timestamp"))
    name = message.get("name")
    name = _SPACE.sub(" ", name[: MAX_NAME_CHARS * 4]).strip()[:MAX_NAME_CHARS] if isinstance(name, str) else ""
    return Turn(line, role, text, stamp, name)


def read_complete_lines(path: Path, offset: int, first_line: int) -> tuple[list[tuple[int, str]], int]:
    """Lines after `offset` that end in a newline (a writer may be mid-append); returns them and the new offset."""
    with path.open("rb") as fh:
        fh.seek(offset)
        data = fh.read()
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset
    lines = data[: end + 1].split(b"\n")[:-1]
    out = [(first_line + i, raw.decode("utf-8", errors="replace")) for i, raw in enumerate(lines)]
    return out, offset + end + 1


@dataclass
class LineErrors:
    """Lines of one transcript that were skipped, and why the first one was."""

    count: int = 0
    first: str = ""

    def add(self, line: int, reason: str) -> None:
        self.count += 1
        if not self.first:
            self.first = f"line {line}: {reason}"

    def __str__(self) -> str:
        return f"{self.count} malformed line{'s' if self.count != 1 else ''} skipped ({self.first})"


def turns_of(lines: list[tuple[int, str]], errors: LineErrors | None = None) -> Iterator[Turn]:
    for number, raw in lines:
        try:
            turn = parse_line(raw, number)
        except BadLine as exc:
            if errors is not None:
                errors.add(number, str(exc))
            continue
        if turn is not None:
            yield turn


def chunk_turns(turns: list[Turn], max_tokens: int, overlap_tokens: int) -> list[tuple[Chunk, float | None]]:
    """Turns as `User: ...` / `Assistant: ...` lines, chunked; each chunk maps back to its JSONL lines."""
    lines = [f"{t.label}: {t.text}" for t in turns]
    out = []
    for first, last, text in chunk_plain_lines(lines, max_tokens, overlap_tokens):
        stamps = [t.timestamp for t in turns[first : last + 1] if t.timestamp is not None]
        numbers = tuple(t.line for t in turns[first : last + 1])
        consecutive = numbers == tuple(range(numbers[0], numbers[0] + len(numbers)))
        chunk = Chunk(numbers[0], numbers[-1], text, "", "", sha256(text), source_lines=() if consecutive else numbers)
        out.append((chunk, max(stamps) if stamps else None))
    return out
