"""Entries a `write` acknowledged, watched for a few seconds in case a save over their note drops them.

An editor or a script saves by reading the note, changing its copy and writing the copy back (renamed over the
note, or rewritten in place). A `write` that lands between that read and that save is in the old text only, and the
save drops it: the client holds a citation to lines that are gone. So each acknowledged entry is watched until it
has been in the note, as read when the note held still, for WATCH_SECONDS; if the note changes meanwhile and no
longer holds it, it is appended again (a visible edit, logged) and watched anew. An editor saving over and over
keeps the note from holding still, and so keeps its entries watched. Past its window an entry is the user's:
deleting it, correcting it, moving it stands. Within the window, an entry whose lines were replaced by lines like
it was edited, not dropped, and is let go too (a correction must not come back beside its old text). Watching is a
stat of each such note every POLL_SECONDS, on one thread that runs only while something is watched; a change is
read once it has held for a poll, so an editor that truncates before it writes is not read half-way."""

from __future__ import annotations

import difflib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from memoryd.config import AgentConfig
from memoryd.curation import notefile
from memoryd.curation.lines import NoteLines
from memoryd.notes import append_entry

log = structlog.get_logger("memoryd.entry_journal")

WATCH_SECONDS = 5.0
POLL_SECONDS = 0.05
KEEP_SECONDS = 120.0  # an entry put back again and again is let go after this, whatever its note does
EDITED_RATIO = 0.6  # a line that replaced an entry's line and is this much like it is that line, edited
MAX_DIFF_LINES = 20_000  # past this a changed note is not diffed: a missing entry counts as dropped

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
class Entry:
    text: str  # as written
    key: str  # normalized, as looked for
    first: float  # first appended
    seen: float | None = None  # first read in the note since it was last appended: its window starts here


@dataclass
class Edit:
    """Lines an update or a forget replaced: watched, like an entry, for a save from a copy read before it."""

    old: list[str]  # normalized
    new: list[str]
    first: float
    old_count: int  # how often each block is in the note once the edit is made
    new_count: int
    seen: float | None = None
    change: int | None = None  # the change record that made it (an undo stops watching its own edits only)


@dataclass
class Note:
    target: Path
    relative: str  # as a `write` names it, so that an entry appended again gets a write's checks
    entries: list[Entry] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    seen: Signature | None = None  # the note as last read; None: read it at the next poll
    landed: Signature | None = None  # the note as last polled
    lines: list[str] | None = None  # its normalized lines as last read, to tell an edited entry from a dropped one


class EntryJournal:
    """`record` an entry once it is appended (under the agent's write `lock`, which putting one back takes too);
    `restored(target)` follows each note put right (to index it)."""

    def __init__(
        self,
        agent: AgentConfig,
        lock: threading.Lock,
        restored: Callable[[Path], object] = lambda _target: None,
        *,
        window: float | None = None,
    ) -> None:
        self._agent, self._lock, self._restored = agent, lock, restored
        self._window = WATCH_SECONDS if window is None else window
        self._notes: dict[Path, Note] = {}
        self._guard = threading.Lock()
        self._checking = threading.Lock()  # one check at a time: the watch thread's, or settle_now's
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    def record(self, target: Path, relative: str, entry: str) -> None:
        now = time.monotonic()
        with self._guard:
            if self._closed:
                return
            note = self._notes.setdefault(target, Note(target, relative))
            note.entries.append(Entry(entry, normalized(entry), now))
            note.seen = None
            self._start()

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._watch, name="entry-journal", daemon=True)
            self._thread.start()

    def record_edit(
        self, target: Path, relative: str, old: list[str], new: list[str], change: int | None = None
    ) -> None:
        """Watch an edit just made (the caller holds the write lock): a save from an older copy that brings the
        old lines back gets the edit made again. An entry written lately that the edit took out or changed was not
        dropped by a save: it is no longer watched (else it would be appended again)."""
        old_key, new_key = [normalized(x) for x in old], [normalized(x) for x in new]
        taken = {line for line in old_key if line.strip()}
        with self._guard:
            if (watched := self._notes.get(target)) is not None:
                watched.entries = [e for e in watched.entries if not taken.intersection(e.key.split("\n"))]
        if not any(old_key):
            return
        try:
            lines = normalized(target.read_bytes().decode("utf-8", errors="replace")).split("\n")
        except FileNotFoundError:
            lines = []  # a note forgotten whole: a save that brings it back is watched for too
        except OSError:
            return
        edit = Edit(
            old_key, new_key, time.monotonic(), count_block(lines, old_key), count_block(lines, new_key), change=change
        )
        with self._guard:
            if self._closed:
                return
            note = self._notes.setdefault(target, Note(target, relative))
            note.edits.append(edit)
            note.seen = None
            self._start()

    def drop_edits(self, changes: set[int]) -> None:
        """Stop watching the edits these changes made (an undo takes them back on purpose); every other edit, of
        the same note or the same lines, stays watched."""
        with self._guard:
            for note in self._notes.values():
                note.edits = [edit for edit in note.edits if edit.change not in changes]

    def pending(self) -> int:
        with self._guard:
            return sum(len(note.entries) + len(note.edits) for note in self._notes.values())

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
        """Put back what a change of the note dropped; whether to look again soon (the note is still changing). The
        note is read without the agent's write lock (a large one takes a while); the lock is taken to put entries
        back, and only if the note is still what was read."""
        with self._checking:
            return self._check_once(note, now)

    def _check_once(self, note: Note, now: float) -> bool:
        with self._guard:
            note.entries = [e for e in note.entries if self._watched(e, now)]
            note.edits = [e for e in note.edits if self._watched(e, now)]
            if not note.entries and not note.edits:
                self._notes.pop(note.target, None)
                return False
        current = signature(note.target)
        if current is None or current == note.seen:  # unchanged, or gone (deleted, or mid-save)
            return False
        if current != note.landed:
            note.landed = current
            return True
        lost = self._lost(note, now)
        undone = self._undone(note, now)
        if not lost and not undone:
            note.seen = current
            return False
        with self._lock:
            if signature(note.target) != current:  # changed since it was read (a write, a save): read it again
                return True
            for edit in undone:
                self._redo(note, edit)
            for entry in lost:
                try:
                    append_entry(self._agent, entry.text, note.relative)
                except (OSError, ValueError) as exc:  # the note became a symlink, its folder went: say what is lost
                    log.error("a dropped entry cannot be put back", path=note.relative, error=str(exc))
                    with self._guard:
                        self._notes.pop(note.target, None)
                    return False
                entry.seen = None
                log.warning("a save over the note dropped a written entry; appended it again", path=note.relative)
            note.seen = None
        self._restored(note.target)
        return True

    def _undone(self, note: Note, now: float) -> list[Edit]:
        """Edits a save took back: the old lines are in the note more often than once the edit was made, and the
        new ones less often."""
        if not note.edits or note.lines is None:
            return []
        undone = []
        with self._guard:
            edits = list(note.edits)
        for edit in edits:
            back = count_block(note.lines, edit.old) > edit.old_count
            missing = not edit.new or count_block(note.lines, edit.new) < edit.new_count
            if back and missing:
                undone.append(edit)
            elif not back:
                edit.seen = edit.seen or now
        return undone

    def _redo(self, note: Note, edit: Edit) -> None:
        def change(data: bytes) -> bytes:
            note = NoteLines.parse(data)
            keys = [line.rstrip() for line in note.lines]
            size = len(edit.old)
            for i in range(len(keys) - size + 1):
                if keys[i : i + size] == edit.old:
                    note.replace(i + 1, i + size, edit.new)
                    return note.dump()
            return data

        try:
            notefile.rewrite(note.target, change)
        except (OSError, ValueError, notefile.NoteChanged) as exc:
            log.error("an edit a save took back cannot be made again", path=note.relative, error=str(exc))
            return
        edit.seen = None
        log.warning("a save over the note took back an edit; made it again", path=note.relative)

    def _watched(self, entry: Entry | Edit, now: float) -> bool:
        shown = entry.seen is None or now - entry.seen < self._window
        return shown and now - entry.first < KEEP_SECONDS

    def _lost(self, note: Note, now: float) -> list[Entry]:
        """Entries the note no longer holds and did not have edited; the edited ones are let go."""
        try:
            text = normalized(note.target.read_bytes().decode("utf-8", errors="replace"))
        except OSError:
            return []
        before, lines = note.lines, text.split("\n")
        note.lines = lines
        lost: list[Entry] = []
        needed: dict[str, int] = {}
        with self._guard:
            entries = list(note.entries)
        for entry in entries:
            needed[entry.key] = needed.get(entry.key, 0) + 1
            if text.count(entry.key) >= needed[entry.key]:
                entry.seen = entry.seen or now
                continue
            if before is not None and edited(entry.key.split("\n"), before, lines):
                with self._guard:
                    note.entries.remove(entry)
            elif self._watched(entry, now):
                lost.append(entry)
        return lost


def count_block(lines: list[str], block: list[str]) -> int:
    size = len(block)
    if not size:
        return 0
    return sum(1 for i in range(len(lines) - size + 1) if lines[i : i + size] == block)


def edited(entry: list[str], before: list[str], after: list[str]) -> bool:
    """Whether the entry's lines in `before` were replaced in `after` by lines like them (an edit), rather than
    deleted or replaced by something else (a save from a copy read before the entry was written)."""
    if len(before) + len(after) > MAX_DIFF_LINES:
        return False
    size = len(entry)
    starts = [i for i in range(len(before) - size + 1) if before[i : i + size] == entry]
    if not starts:
        return False
    start = starts[-1]
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 <= start or i1 >= start + size:
            continue
        for old in entry:
            for new in after[j1:j2]:
                if old.strip() and difflib.SequenceMatcher(None, old, new, autojunk=False).ratio() >= EDITED_RATIO:
                    return True
    return False
