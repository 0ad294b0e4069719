"""Find an agent's Markdown memory files and decide which paths belong to its sources."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryd.config import AgentConfig

IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".idea",
        ".vscode",
        ".cache",
        "dist",
        "build",
        ".next",
        ".obsidian",
        ".trash",
    }
)
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
ROOT_FILES = ("MEMORY.md", "memory.md")
_ESCAPE = re.compile(r"\\\\|\\x[0-9a-fA-F]{2}")


@dataclass(frozen=True)
class SourceFile:
    path: str  # display path: relative to the workspace when inside it, else absolute
    abs_path: Path
    source: str


def is_markdown(path: Path) -> bool:
    return path.suffix.lower() in MARKDOWN_SUFFIXES


def is_ignored_dir(name: str) -> bool:
    return name in IGNORED_DIRS


def escape_path(text: str) -> str:
    """A path the OS gave with undecodable bytes (surrogate escapes) as storable text: each such byte becomes
    `\\xNN` and a backslash `\\\\`. Valid UTF-8 paths are returned unchanged."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        raw = os.fsencode(text)
        return raw.replace(b"\\", b"\\\\").decode("utf-8", errors="backslashreplace")


def unescape_path(text: str) -> str:
    """The inverse of `escape_path`, for a path that a client read from a citation."""
    if "\\" not in text:
        return text
    out = bytearray()
    last = 0
    for match in _ESCAPE.finditer(text):
        out += text[last : match.start()].encode("utf-8")
        token = match.group()
        out += b"\\" if token == "\\\\" else bytes([int(token[2:], 16)])
        last = match.end()
    out += text[last:].encode("utf-8")
    return os.fsdecode(bytes(out))


def real_workspace(agent: AgentConfig) -> Path:
    """The workspace with symlinks resolved (as it stands when it does not exist), the base of display paths."""
    return agent.workspace.resolve() if agent.workspace.exists() else agent.workspace


def display_path(path: Path, workspace: Path) -> str:
    try:
        shown = path.relative_to(workspace).as_posix()
    except ValueError:
        shown = path.as_posix()
    return escape_path(shown)


def is_transcript(path: Path) -> bool:
    """`x.jsonl`, and rotated or renamed ones such as `x.jsonl.reset.2`, `x.jsonl.deleted.1699999999`."""
    return path.suffix == ".jsonl" or ".jsonl." in path.name


def walk_files(root: Path, wanted: Callable[[Path], bool]) -> Iterator[Path]:
    """Files under root that `wanted` accepts, skipping ignored folders and every symlink. Iterative, so a tree
    thousands of folders deep is walked like any other; a folder that cannot be listed is skipped."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not is_ignored_dir(entry.name):
                        subfolders.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) and wanted(Path(entry.path)):
                    yield Path(entry.path)
            except OSError:
                continue
        stack.extend(reversed(subfolders))


def memory_roots(agent: AgentConfig) -> list[Path]:
    """Files and folders whose Markdown makes up the agent's memory (not yet resolved)."""
    ws = agent.workspace
    return [ws / name for name in ROOT_FILES] + [ws / "memory", *agent.extra_paths]


def discover(agent: AgentConfig) -> list[SourceFile]:
    """Every Markdown memory file of the agent, deduplicated by real path, in a stable order."""
    if "memory" not in agent.sources:
        return []
    found: dict[str, SourceFile] = {}
    workspace = real_workspace(agent)
    for root in memory_roots(agent):
        if root.is_symlink() or not root.exists():
            continue
        candidates = [root] if root.is_file() else list(walk_files(root, is_markdown))
        for candidate in candidates:
            if not is_markdown(candidate):
                continue
            real = candidate.resolve()
            key = os.path.normcase(str(real))
            if key in found:
                continue
            found[key] = SourceFile(path=display_path(real, workspace), abs_path=real, source="memory")
    return sorted(found.values(), key=lambda f: f.path)


def source_for(agent: AgentConfig, path: Path) -> SourceFile | None:
    """The memory file at `path` as discovery would list it, or None when it is not one (not Markdown, a
    symlink, under an ignored folder, outside the memory roots, or gone)."""
    if "memory" not in agent.sources or not is_markdown(path) or path.is_symlink() or not path.is_file():
        return None
    workspace = real_workspace(agent)
    real = path.resolve()
    for root in memory_roots(agent):
        if root.is_symlink() or not root.exists():
            continue
        top = root.resolve()
        if root.is_file():
            if real == top:
                return SourceFile(display_path(real, workspace), real, "memory")
            continue
        if top in real.parents and not any(is_ignored_dir(p) for p in real.relative_to(top).parts[:-1]):
            return SourceFile(display_path(real, workspace), real, "memory")
    return None


def allowed_roots(agent: AgentConfig) -> list[Path]:
    """Resolved roots a path must lie in to be readable through `get`."""
    roots = []
    for root in memory_roots(agent) + list(agent.sessions_dirs):
        if root.exists() and not root.is_symlink():
            roots.append(root.resolve())
    return roots


class PathOutsideSources(ValueError):
    """A requested path is not part of the agent's memory."""


class SourceFileMissing(PathOutsideSources):
    """A requested path would be part of the agent's memory, but no such file exists."""


def resolve_source_path(agent: AgentConfig, path: str) -> Path:
    """Resolve a user-given path to a real file inside the agent's sources, or refuse it."""
    if not path or "\x00" in path:
        raise PathOutsideSources("path is empty or contains a NUL byte")
    missing = False
    for spelling in dict.fromkeys((path, unescape_path(path))):
        try:
            found = _resolve_inside(agent, spelling)
        except OSError as exc:
            raise PathOutsideSources(f"{path!r} cannot be read: {exc.strerror or exc}") from None
        if isinstance(found, Path):
            return found
        missing = missing or found
    if missing:
        raise SourceFileMissing(f"{path!r} does not exist (it lies inside the agent's memory sources)")
    raise PathOutsideSources(f"{path!r} is not a file inside the agent's memory sources")


def _resolve_inside(agent: AgentConfig, path: str) -> Path | bool:
    """The real file; else whether it would lie inside a source if it existed."""
    raw = Path(os.path.expanduser(path))
    workspace = real_workspace(agent)
    real = (raw if raw.is_absolute() else workspace / raw).resolve()
    would_be = False
    for root in allowed_roots(agent):
        inside = real == root or root in real.parents
        readable = root.is_file() or is_markdown(real) or is_transcript(real)
        if inside and readable and real.is_file():
            return real
        would_be = would_be or (inside and readable and not real.exists())
    return would_be
