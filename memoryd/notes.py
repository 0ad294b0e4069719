"""Reading and writing notes: `get`'s window of lines, what an entry looks like, where a `write` may go, and
appending it durably.

Every target, the default daily note included, is the workspace's MEMORY.md or a `.md` file under `memory/`,
reached through no symlink and under no ignored folder, appended with O_NOFOLLOW and fsynced."""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd.config import AgentConfig
from memoryd.durable import append_durably
from memoryd.search.filters import Filters
from memoryd.sources.discovery import (
    ROOT_FILES,
    PathOutsideSources,
    display_path,
    is_ignored_dir,
    is_markdown,
    real_workspace,
    resolve_source_path,
)
from memoryd.sources.lines import read_window
from memoryd.sources.markdown import split_lines
from memoryd.sources.metadata import tag_comment
from memoryd.store.interface import MemoryStore
from memoryd.store.rows import ChunkRow

MAX_WRITE_CHARS = 1_000_000
MAX_GET_LINES = 5000
MAX_GET_LINE_CHARS = 20_000  # one line of a `get` reply; a longer one is cut
MAX_GET_CHARS = 1_000_000  # a whole `get` reply


class RequestError(ValueError):
    """A client asked for something invalid; nothing was changed."""


def entry_text(text: str, kind: str | None, importance: float | None) -> str:
    """The entry as it is written: the text, and its type and importance as `<!-- type: ..., importance: ... -->`.
    Types and ranges are the schema's to check (memoryd_client.protocol.schema.Write); this adds what it cannot say."""
    if not text.strip():
        raise RequestError("text must be a non-empty string")
    tag = tag_comment(kind, importance)
    if tag:
        text = f"{text.rstrip()}\n{tag}"
    if len(text) > MAX_WRITE_CHARS:
        raise RequestError(f"text is longer than {MAX_WRITE_CHARS} characters")
    return text


def read_lines(
    agent: AgentConfig, redact: Callable[[str], str], path: str, from_line: int = 1, lines: int | None = None
) -> dict[str, Any]:
    """Lines from..from+lines-1 (1-based) of a file inside the agent's sources, secrets masked as in the
    index. Reads only up to those lines (the rest is counted, not decoded); a line longer than
    MAX_GET_LINE_CHARS, or a reply past MAX_GET_CHARS, is cut and says so (`truncated`)."""
    if not isinstance(from_line, int) or isinstance(from_line, bool) or from_line < 1:
        raise RequestError("'from' must be an integer >= 1")
    if lines is not None and (not isinstance(lines, int) or isinstance(lines, bool) or lines < 1):
        raise RequestError("'lines' must be an integer >= 1")
    try:
        real = resolve_source_path(agent, path)
    except PathOutsideSources as exc:
        raise RequestError(str(exc)) from exc
    count = min(lines or MAX_GET_LINES, MAX_GET_LINES)
    try:
        window = read_window(real, from_line, count, MAX_GET_LINE_CHARS)
    except OSError as exc:
        raise RequestError(f"{path!r} cannot be read: {exc.strerror or exc}") from None
    if window.total_lines and from_line > window.total_lines:
        raise RequestError(f"{path!r} has {window.total_lines} lines; line {from_line} is past its end")
    # what the index holds: secrets masked, lines kept (a secret spans no blank line, so the lines since the
    # last one before the window are context enough)
    masked = split_lines(redact("\n".join([*window.context, *window.lines, ""])))
    chosen = masked[len(window.context) :]
    chosen += [""] * (len(window.lines) - len(chosen))  # blank lines at the end that split_lines dropped
    text, truncated = "\n".join(chosen), window.cut
    if len(text) > MAX_GET_CHARS:
        text = text[:MAX_GET_CHARS]
        chosen = split_lines(text)
        truncated = True
    return {
        "path": display_path(real, real_workspace(agent)),
        "from": from_line,
        "lines": len(chosen),
        "total_lines": window.total_lines,
        "text": text,
        "truncated": truncated,
    }


def file_chunks(store: MemoryStore, path: str) -> list[ChunkRow]:
    """The chunks the index holds of one file, in the order it keeps them (a name like "zoo [1].md" is no glob)."""
    rows = store.chunks_by_ids(sorted(store.chunk_ids(Filters.of_file(path))))
    return [row for row in rows.values() if row.path == path]


def indexed_pieces(store: MemoryStore, path: str) -> dict[int, list[str]]:
    """Each line of a note as the index holds it: its pieces, as a line too long for one chunk is split over
    several (the first piece first)."""
    held: dict[int, list[str]] = {}
    for row in file_chunks(store, path):
        for offset, line in enumerate(row.text.split("\n")):
            held.setdefault(row.file_line(offset), []).append(line)
    return held


def indexed_lines(store: MemoryStore, path: str, from_line: int = 1, lines: int | None = None) -> dict[str, Any] | None:
    """`read_lines`' answer made from the chunks a shared store holds of a note (None when it holds none): what a
    host that searches a namespace without a copy of its folder can read. Lines no chunk covers (blank lines
    between sections, front matter) come back empty; `from_index` says so."""
    text_at = {number: pieces[0] for number, pieces in indexed_pieces(store, path).items()}
    if not text_at:
        return None
    total = max(text_at)
    if from_line > total:
        raise RequestError(f"{path!r} has {total} lines in the index; line {from_line} is past its end")
    last = min(total, from_line + min(lines or MAX_GET_LINES, MAX_GET_LINES) - 1)
    whole = [text_at.get(n, "") for n in range(from_line, last + 1)]
    chosen = [line[:MAX_GET_LINE_CHARS] for line in whole]
    text = "\n".join(chosen)
    truncated = chosen != whole or len(text) > MAX_GET_CHARS
    if len(text) > MAX_GET_CHARS:
        text = text[:MAX_GET_CHARS]
        chosen = split_lines(text)
    return {
        "path": path,
        "from": from_line,
        "lines": len(chosen),
        "total_lines": total,
        "text": text,
        "truncated": truncated,
        "from_index": True,
    }


def append_entry(agent: AgentConfig, text: str, path: str | None) -> tuple[Path, int, int]:
    """Append an entry (a blank line before it when the note has others); returns the note and the entry's first
    and last lines. The caller holds the agent's write lock."""
    if not agent.workspace.is_dir():  # never recreate it empty: the next sync would drop every note
        raise RequestError(f"the workspace {agent.workspace} is missing (moved, unmounted?); nothing written")
    target = write_target(agent, path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_target(agent, path)  # again, now that the folders exist: nothing was swapped in meanwhile
        existing = target.read_bytes() if target.exists() else b""
        # made read-only by its owner: kept so, as forget and update keep it (root may write it anyway)
        read_only = target.exists() and not target.stat().st_mode & stat.S_IWUSR
    except OSError as exc:
        raise RequestError(f"could not write {target.name}: {exc.strerror or exc}") from exc
    if read_only:
        raise RequestError(f"{target.name} is read-only; nothing written")
    prefix = "" if not existing or existing.endswith(b"\n") else "\n"
    if existing.strip():
        prefix += "\n"  # a blank line between entries
    start_line = len(split_lines(existing.decode("utf-8", errors="replace"))) + 1
    start_line += 1 if existing.strip() else 0
    body = text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n") + "\n"
    added = prefix + body
    crlf = existing.count(b"\r\n")
    if crlf > existing.count(b"\n") - crlf:  # the note's own line ends, as most of its lines end
        added = added.replace("\n", "\r\n")
    try:
        append_durably(target, added.encode("utf-8"))
    except OSError as exc:
        raise RequestError(f"could not write {target.name}: {exc.strerror or exc}") from exc
    return target, start_line, start_line + len(split_lines(body)) - 1


def write_target(agent: AgentConfig, path: str | None) -> Path:
    """Where a `write` goes: the workspace's MEMORY.md, or a Markdown file under memory/ that is not a symlink,
    not under an ignored folder and not reached through a symlinked folder. Default and explicit targets get the
    same checks."""
    workspace = real_workspace(agent)
    memory_dir = workspace / "memory"
    if path is None:
        relative = Path(f"{dt.date.today().isoformat()}.md")
    else:
        if not isinstance(path, str) or not path or "\x00" in path:
            raise RequestError("path must be a non-empty string")
        if "\\" in path:
            raise RequestError("path must separate folders with '/', not '\\'")
        raw = Path(path)
        if raw.is_absolute() or ".." in raw.parts:
            raise RequestError("path must be relative to the workspace, under memory/, without '..'")
        if len(raw.parts) == 1 and raw.name in ROOT_FILES:  # the workspace's own MEMORY.md
            return _root_target(workspace / raw.name)
        parts = raw.parts[1:] if raw.parts and raw.parts[0] == "memory" else raw.parts
        if not parts:
            raise RequestError("path must name a file under memory/")
        relative = Path(*parts)
    if not is_markdown(relative):
        raise RequestError("path must end in .md")
    for name in relative.parts[:-1]:
        if is_ignored_dir(name):
            raise RequestError(f"{name}/ is an ignored folder: a note there would never be indexed")
    if any(len(os.fsencode(name)) > 255 for name in relative.parts):
        raise RequestError("a path component is longer than 255 bytes")
    step = memory_dir
    for name in ("", *relative.parts):
        step = step / name if name else step
        if step.is_symlink():
            raise RequestError(f"{display_path(step, workspace)} is a symlink; memoryd writes only regular files")
        if step != memory_dir / relative and step.exists() and not step.is_dir():
            raise RequestError(f"{display_path(step, workspace)} is not a folder")
    target = memory_dir / relative
    if target.exists() and not target.is_file():
        raise RequestError(f"{display_path(target, workspace)} is not a regular file")
    return target


def _root_target(target: Path) -> Path:
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise RequestError(f"{target.name} is not a regular file; memoryd writes only regular files")
    return target
