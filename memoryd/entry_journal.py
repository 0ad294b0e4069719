"""Entries a `write` acknowledged, watched until their note settles.

An editor saves by reading the note, changing its copy and renaming a new file over the note (vim, VS Code and
most others do). A `write` that lands between the editor's read and its rename is in the old file only, and the
rename drops it: the client holds a citation to lines that are gone. So each acknowledged entry is kept here, with
its note, until the note has gone SETTLE_SECONDS without a change; whenever the note changes meanwhile, an entry the
new text no longer holds is appended again (a visible edit, logged). An entry the user deletes after that is
theirs to delete. Watching is a stat of each such note every POLL_SECONDS, on one thread that runs only while
something is kept."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from memoryd.config import AgentConfig
from memoryd.notes import append_entry

log = structlog.get_logger("memoryd.entry_journal")

SETTLE_SECONDS = 10.0
POLL_SECONDS = 0.05
KEEP_SECONDS = 600.0  # an entry is never watched longer than this, however often its note changes

Signature = tuple[int, int, int, int]


def signature(path: Path) -> Signature | None:
    try:
        found = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def normalized(text: str) -> str:
    """Text as compared: line endings and trailing spaces are an editor's to change, not a sign of a lost entry."""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip("\n")


@dataclass
class Note:
    target: Path
    relative: str  # as a `write` names it, so that an entry appended again gets a write's checks
    entries: list[tuple[str, float]] = field(default_factory=list)  # (the entry as written, when)
    seen: Signature | None = None  # the note as last checked to hold every entry; None: check at the next poll
    landed: Signature | None = None  # the note as last polled: a change is read once it has held for a poll
    changed_at: float = 0.0


class EntryJournal:
    """`record` an entry once it is appended (under the agent's write `lock`, which putting one back takes too);
    `restored(target)` follows each note put right (to index it)."""

    def __init__(
        self,
        agent: AgentConfig,
        lock: threading.Lock,
        restored: Callable[[Path], object] = lambda _target: None,
        *,
        settle: float | None = None,
    ) -> None:
        self._agent, self._lock, self._restored = agent, lock, restored
        self._settle = SETTLE_SECONDS if settle is None else settle
        self._notes: dict[Path, Note] = {}
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    def record(self, target: Path, relative: str, entry: str) -> None:
        now = time.monotonic()
        with self._guard:
            if self._closed:
                return
            note = self._notes.setdefault(target, Note(target, relative))
            note.entries.append((entry, now))
            note.seen, note.changed_at = None, now
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch, name="entry-journal", daemon=True)
                self._thread.start()

    def pending(self) -> int:
        with self._guard:
            return sum(len(note.entries) for note in self._notes.values())

    def settle_now(self) -> None:
        """Check every watched note now, until each holds still (at close, or a test that cannot wait for polls)."""
        for note in self._snapshot():
            for _ in range(100):
                if not self._check(note, time.monotonic()):
                    break
                time.sleep(POLL_SECONDS)

    def close(self) -> None:
        """Check once more, then stop watching: a change from here on is no longer followed."""
        self.settle_now()
        with self._guard:
            self._closed = True
            self._notes.clear()
        self._wake.set()

    def _snapshot(self) -> list[Note]:
        with self._guard:
            return list(self._notes.values())

    def _watch(self) -> None:
        while not self._wake.wait(POLL_SECONDS):
            now = time.monotonic()
            for note in self._snapshot():
                try:
                    self._check(note, now)
                except Exception:  # never let one note's trouble end the watch of the others
                    log.exception("checking a written note failed", path=note.relative)
            with self._guard:
                if not self._notes:
                    self._thread = None
                    return

    def _check(self, note: Note, now: float) -> bool:
        """Put back what a change of the note dropped; whether to look again soon (the note is still changing)."""
        lost: list[str] = []
        with self._lock:
            with self._guard:
                note.entries = [(entry, at) for entry, at in note.entries if now - at < KEEP_SECONDS]
                kept = bool(note.entries)
            current = signature(note.target)
            if not kept or (current is not None and current == note.seen and now - note.changed_at >= self._settle):
                self._forget(note)
                return False
            if current is None:  # deleted, or mid-save by an editor that unlinks first: wait for it to come back
                if now - note.changed_at >= self._settle:
                    self._forget(note)
                return False
            if current == note.seen:
                return False
            if current != note.landed:  # a save may be half done (truncated, not yet written): read it once it holds
                note.landed, note.changed_at = current, now
                return True
            lost = self._lost(note)
            for entry in lost:
                try:
                    append_entry(self._agent, entry, note.relative)
                except (OSError, ValueError) as exc:  # the note became a symlink, its folder went: say what is lost
                    log.error("a dropped entry cannot be put back", path=note.relative, error=str(exc), text=entry[:99])
                    self._forget(note)
                    return False
                log.warning("a save over the note dropped a written entry; appended it again", path=note.relative)
            note.seen = None if lost else current  # read after `current` was taken: a change since is seen next time
        if lost:
            self._restored(note.target)
        return bool(lost)

    def _lost(self, note: Note) -> list[str]:
        try:
            text = normalized(note.target.read_bytes().decode("utf-8", errors="replace"))
        except OSError:
            return []
        lost: list[str] = []
        needed: dict[str, int] = {}
        with self._guard:
            entries = list(note.entries)
        for entry, _ in entries:
            key = normalized(entry)
            needed[key] = needed.get(key, 0) + 1
            if text.count(key) < needed[key]:
                lost.append(entry)
        return lost

    def _forget(self, note: Note) -> None:
        with self._guard:
            if self._notes.get(note.target) is note:
                del self._notes[note.target]
