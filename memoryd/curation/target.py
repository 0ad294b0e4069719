"""What an edit names: a citation (`path#L3-L5`) or a note's path, resolved inside the agent's sources and
reached through no symlink, and the checks a file must pass before memoryd rewrites it."""

from __future__ import annotations

import os
import re
import stat as stat_module
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.notes import RequestError
from memoryd.sources.discovery import (
    PathOutsideSources,
    SourceFileMissing,
    display_path,
    is_transcript,
    real_workspace,
    resolve_source_path,
    unescape_path,
)

CITATION = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


@dataclass(frozen=True)
class Target:
    path: str  # as citations name it
    real: Path
    transcript: bool
    start: int | None = None  # None: the whole note
    end: int | None = None

    @property
    def citation(self) -> str:
        return self.path if self.start is None else f"{self.path}#L{self.start}-L{self.end}"


def parse_target(agent: Any, citation: str) -> Target:
    """A citation (`path#L3-L5`, `path#L3`) or a note's path, resolved inside the agent's sources."""
    if not isinstance(citation, str) or not citation.strip():
        raise RequestError("name what to change: a citation (path#L3-L5) or a note's path")
    match = CITATION.match(citation.strip())
    path, start, end = (
        (match["path"], int(match["start"]), int(match["end"] or match["start"]))
        if match
        else (
            citation.strip(),
            None,
            None,
        )
    )
    try:
        real = resolve_source_path(agent, path)
    except SourceFileMissing as exc:
        raise RequestError(str(exc)) from None
    except PathOutsideSources as exc:
        raise RequestError(str(exc)) from None
    _no_symlink(agent, path, real)
    shown = display_path(real, real_workspace(agent))
    return Target(shown, real, is_transcript(real), start, end)


def _no_symlink(agent: Any, path: str, real: Path) -> None:
    """Refuse a path that reaches its file through a symlink (the note itself, or a folder on the way): memoryd
    indexes no symlink, so it edits, deletes or marks a file only by the path it is indexed under."""
    for spelling in dict.fromkeys((path, unescape_path(path))):
        raw = Path(os.path.expanduser(spelling))
        if Path(os.path.normpath(raw if raw.is_absolute() else real_workspace(agent) / raw)) == real:
            return
    raise RequestError(f"{path!r} goes through a symlink; name the file itself, as a citation does")


def writable(target: Target) -> None:
    """A note memoryd may rewrite: a regular file, not a symlink, that its owner may write."""
    try:
        found = os.stat(target.real, follow_symlinks=False)
    except OSError as exc:
        raise RequestError(f"{target.path} cannot be read: {exc.strerror or exc}") from None
    if not stat_module.S_ISREG(found.st_mode):
        raise RequestError(f"{target.path} is not a regular file; memoryd edits only regular files")
    if not found.st_mode & stat_module.S_IWUSR or not os.access(target.real, os.W_OK):
        raise RequestError(f"{target.path} is read-only; nothing changed")
