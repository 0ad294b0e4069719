"""Find an agent's Markdown memory files and decide which paths belong to its sources."""

from __future__ import annotations

import os
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


@dataclass(frozen=True)
class SourceFile:
    path: str  # display path: relative to the workspace when inside it, else absolute
    abs_path: Path
    source: str


def is_markdown(path: Path) -> bool:
    return path.suffix.lower() in MARKDOWN_SUFFIXES


def is_ignored_dir(name: str) -> bool:
    return name in IGNORED_DIRS


def display_path(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return path.as_posix()


def is_transcript(path: Path) -> bool:
    """`x.jsonl`, and rotated or renamed ones such as `x.jsonl.reset.2`, `x.jsonl.deleted.1699999999`."""
    return path.suffix == ".jsonl" or ".jsonl." in path.name


def walk_files(root: Path, wanted: Callable[[Path], bool]) -> Iterator[Path]:
    """Files under root that `wanted` accepts, skipping ignored folders and every symlink."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not is_ignored_dir(d) and not (base / d).is_symlink())
        for name in sorted(filenames):
            candidate = base / name
            if wanted(candidate) and not candidate.is_symlink() and candidate.is_file():
                yield candidate


def memory_roots(agent: AgentConfig) -> list[Path]:
    """Files and folders whose Markdown makes up the agent's memory (not yet resolved)."""
    ws = agent.workspace
    return [ws / name for name in ROOT_FILES] + [ws / "memory", *agent.extra_paths]


def discover(agent: AgentConfig) -> list[SourceFile]:
    """Every Markdown memory file of the agent, deduplicated by real path, in a stable order."""
    if "memory" not in agent.sources:
        return []
    found: dict[str, SourceFile] = {}
    workspace = agent.workspace.resolve() if agent.workspace.exists() else agent.workspace
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


def allowed_roots(agent: AgentConfig) -> list[Path]:
    """Resolved roots a path must lie in to be readable through `get`."""
    roots = []
    for root in memory_roots(agent) + list(agent.sessions_dirs):
        if root.exists() and not root.is_symlink():
            roots.append(root.resolve())
    return roots


class PathOutsideSources(ValueError):
    """A requested path is not part of the agent's memory."""


def resolve_source_path(agent: AgentConfig, path: str) -> Path:
    """Resolve a user-given path to a real file inside the agent's sources, or refuse it."""
    if not path or "\x00" in path:
        raise PathOutsideSources("path is empty or contains a NUL byte")
    raw = Path(os.path.expanduser(path))
    workspace = agent.workspace.resolve() if agent.workspace.exists() else agent.workspace
    candidate = raw if raw.is_absolute() else workspace / raw
    real = candidate.resolve()
    for root in allowed_roots(agent):
        inside = real == root or root in real.parents
        readable = root.is_file() or is_markdown(real) or is_transcript(real)
        if inside and readable and real.is_file():
            return real
    raise PathOutsideSources(f"{path!r} is not a file inside the agent's memory sources")
