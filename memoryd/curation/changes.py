"""The record of every change memoryd made to the agent's notes (forget, update, supersede), with what each
replaced, so that `undo` can put it back.

One JSON file per change in `<agent dir>/changes/` (0700, files 0600): the note, the lines before and after, the
line above and below the change (to find it again after other edits), and for a deleted note its whole text. A
change made with `purge` keeps no text of what it removed, and cannot be undone; it also takes the purged text out
of every earlier record holding a line of it (an update that wrote it, a supersede that struck it), which then
cannot be undone either (`purged_by` says why). The newest MAX_KEPT changes are kept."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memoryd.durable import private_folder, replace_privately
from memoryd.sources.entries import words

MAX_KEPT = 500
MIN_CONTAINED_WORDS = 4  # a purged line this long is found inside a longer line too; a shorter one only whole


@dataclass
class Region:
    """Lines of a note: the first's number and their text (no lines: an empty region before `start`)."""

    start: int
    lines: list[str]
    above: str | None = None  # the line before the region (None: the note's start)
    below: str | None = None  # the line after it (None: the note's end)


@dataclass
class Change:
    id: int
    kind: str  # forget, update, supersede, forget_note, forget_transcript
    path: str  # as citations name it
    time: float
    before: Region | None = None  # None: a whole note (created or deleted), or nothing (a transcript)
    after: Region | None = None
    note: str | None = None  # a deleted note's whole text
    mode: int | None = None  # and its permissions
    transcript_lines: list[int] = field(default_factory=list)  # a forgotten transcript's excluded lines
    repeats: list[str] = field(default_factory=list)  # transcripts read again without the forgotten text
    citation: str | None = None  # what the caller named
    new_citation: str | None = None  # where the text is now (update, supersede)
    purged: bool = False  # nothing of the old text kept: cannot be undone
    purged_by: int | None = None  # its text was taken out by this later change made with purge
    undone: float | None = None

    def summary(self) -> dict[str, Any]:
        """What `changes` shows: no note text, only where and what kind."""
        return {
            "id": self.id,
            "kind": self.kind,
            "path": self.path,
            "time": self.time,
            "citation": self.citation,
            "new_citation": self.new_citation,
            "lines": len(self.before.lines) if self.before else None,
            "purged": self.purged,
            "purged_by": self.purged_by,
            "undone": self.undone,
        }


def _region(raw: dict[str, Any] | None) -> Region | None:
    return Region(**raw) if raw else None


class ChangeLog:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if p.suffix == ".json" and p.stem.isdigit())

    def _load(self, path: Path) -> Change:
        raw = json.loads(path.read_text("utf-8"))
        raw["before"], raw["after"] = _region(raw.get("before")), _region(raw.get("after"))
        return Change(**raw)

    def recent(self, limit: int = 20, *, include_undone: bool = True) -> list[Change]:
        """The newest changes first."""
        found = []
        for path in reversed(self._files()):
            try:
                change = self._load(path)
            except (OSError, ValueError, TypeError):
                continue
            if include_undone or change.undone is None:
                found.append(change)
            if len(found) >= limit:
                break
        return found

    def add(self, change: Change) -> Change:
        """Give the change the next number and keep it durably (before the note is touched: a crash between the
        two leaves a record of a change not made, never a change without its record)."""
        private_folder(self.folder)
        files = self._files()
        change.id = int(files[-1].stem) + 1 if files else 1
        self.save(change)
        for old in files[: max(0, len(files) + 1 - MAX_KEPT)]:
            old.unlink(missing_ok=True)
        return change

    def save(self, change: Change) -> None:
        text = json.dumps(asdict(change), ensure_ascii=False, indent=1)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a note's bytes that are not UTF-8 (kept as surrogates): JSON's \u escapes
            data = json.dumps(asdict(change), indent=1).encode("ascii")
        replace_privately(self.folder / f"{change.id:08d}.json", data)

    def drop(self, change: Change) -> None:
        """Forget the record of a change that was not made after all (its edit failed)."""
        (self.folder / f"{change.id:08d}.json").unlink(missing_ok=True)

    def get(self, number: int) -> Change | None:
        try:
            return self._load(self.folder / f"{number:08d}.json")
        except (OSError, ValueError, TypeError):
            return None

    def mark_undone(self, change: Change) -> None:
        change.undone = time.time()
        self.save(change)

    def scrub(self, texts: list[str], by: int) -> list[int]:
        """Take the text a purge (change `by`) removed out of every earlier record holding a line of it (the same
        words, markup aside): its old and new lines, their neighbours and a deleted note's text all go, and it can
        no longer be undone. Returns the records scrubbed."""
        keys = {" ".join(found) for text in texts for line in text.split("\n") if (found := words(line))}
        if not keys:
            return []
        long_keys = [f" {k} " for k in keys if k.count(" ") + 1 >= MIN_CONTAINED_WORDS]
        scrubbed = []
        for path in self._files():
            try:
                change = self._load(path)
            except (OSError, ValueError, TypeError):
                continue
            if change.id >= by or not any(_holds(line, keys, long_keys) for line in _text_of(change)):
                continue
            change.before = change.after = None
            change.note, change.purged, change.purged_by = None, True, by
            self.save(change)
            scrubbed.append(change.id)
        return scrubbed


def _text_of(change: Change) -> list[str]:
    """Every line of note text a record holds."""
    held: list[str | None] = [*(change.note or "").split("\n")]
    for region in (change.before, change.after):
        if region is not None:
            held += [*region.lines, region.above, region.below]
    return [line for line in held if line]


def _holds(line: str, keys: set[str], long_keys: list[str]) -> bool:
    said = " ".join(words(line))
    return said in keys or any(k in f" {said} " for k in long_keys)
