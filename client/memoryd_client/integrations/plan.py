"""An install's plan, made by reading and checking every file the install touches before it changes one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoryd_client.integrations.marker import created, strings, written


@dataclass
class Plan:
    """What the install will touch (the marker records it before anything is touched, so that remove cleans up
    after an install that was stopped half-way), and how to do it."""

    apply: Callable[[], list[str]]  # does the install; notes for the user
    files: list[str] = field(default_factory=list)  # written whole
    written: dict[str, list[str]] = field(default_factory=dict)  # file -> digests of what memoryd wrote there
    edited: list[str] = field(default_factory=list)  # memoryd's entries among the user's
    created: dict[str, list[list[str]]] = field(default_factory=dict)  # edited file -> keys memoryd added
    new_files: list[str] = field(default_factory=list)  # edited files that did not exist
    folders: list[str] = field(default_factory=list)  # that did not exist
    transcripts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # the platform's own

    def keep_earlier(self, previous: dict[str, Any]) -> None:
        """Add what an earlier install (finished or not) wrote and created: it is memoryd's to remove as well."""
        for path, digests in written(previous).items():
            self.written[path] = [*digests, *(d for d in self.written.get(path, []) if d not in digests)]
        for path in self.created:
            self.created[path] += [k for k in created(previous, path) if k not in self.created[path]]
        self.new_files = sorted({*self.new_files, *strings(previous, "new_files")})
        self.folders = sorted({*self.folders, *strings(previous, "folders")})

    def record(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "written": self.written,
            "edited": self.edited,
            "created": self.created,
            "new_files": self.new_files,
            "folders": self.folders,
            "transcripts": self.transcripts,
            "notes": self.notes,
            **self.extra,
        }
