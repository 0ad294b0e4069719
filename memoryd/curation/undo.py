"""Undo: put back what a forget, update or supersede replaced, newest first (or one change by its id).

A batch (`memctl undo -n 3`) is first tried on copies of the notes it touches, in memory and in order: when any of
its changes cannot be undone (made with purge, its lines edited since, the note gone or back again, read-only),
none is, and the error says which and why."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from memoryd.curation import notefile
from memoryd.curation.changes import MAX_KEPT, Change, ChangeLog
from memoryd.curation.edits import Outcome
from memoryd.curation.lines import NoteLines
from memoryd.curation.target import Target, parse_target, writable
from memoryd.notes import RequestError
from memoryd.sources.discovery import memory_roots, real_workspace, unescape_path
from memoryd.sources.forgotten import ForgetRecord


def where(agent: Any, change: Change) -> Path:
    """The file a change was made to (a path shown relative to the workspace, or absolute outside it). A note's
    must still lie inside the agent's memory, reached through no symlink (for a forgotten note: the folder it goes
    back into): the change log is a file on disk, and undo writes where it says."""
    real = real_workspace(agent) / unescape_path(change.path)
    if change.kind == "forget_transcript":
        return real  # only the record changes
    lexical = Path(os.path.normpath(real))
    # each root by its own name in its real folder: a root that is a symlink is not followed (and so refused)
    roots = [Path(os.path.realpath(root.absolute().parent)) / root.name for root in memory_roots(agent)]
    probe = lexical if os.path.lexists(lexical) else lexical.parent
    inside = any(lexical == r or r in lexical.parents for r in roots)
    if not inside or probe.resolve() != probe:
        raise RequestError(
            f"{change.path} is no longer inside the agent's memory, or is reached through a symlink; change "
            f"{change.id} cannot be undone"
        )
    return lexical


def undoable(agent: Any, changes: ChangeLog, count: int, only: int | None = None) -> list[Change]:
    """The newest `count` changes not undone yet (or change `only`), once undoing each in turn has been tried on
    copies of the notes; RequestError (nothing undone) when one of them cannot be."""
    found = changes.recent(count, include_undone=False) if only is None else [_kept(changes, only)]
    notes: dict[Path, bytes | None] = {}
    older = "" if only is not None else "; an older change can be undone alone by its id (`undo --change ID`)"
    for change in found:
        if change.purged_by is not None:
            raise RequestError(
                f"change {change.purged_by} purged the text of change {change.id}: it cannot be undone{older}"
            )
        if change.purged:
            raise RequestError(f"change {change.id} was made with purge: nothing of it was kept to put back{older}")
        if change.kind == "forget_transcript":
            continue
        real = where(agent, change)
        if real not in notes:
            notes[real] = _current(change, real)
        if change.kind == "forget_note":
            if notes[real] is not None:
                raise RequestError(f"{change.path} exists again; change {change.id} cannot put the old note back")
            notes[real] = (change.note or "").encode("utf-8", errors="surrogateescape")
            continue
        current = notes[real]
        if current is None:
            raise RequestError(f"{change.path} is gone; change {change.id} cannot be undone")
        notes[real] = undone(change, current, changes.folder, strict=only is not None)
    return found


def _kept(changes: ChangeLog, number: int) -> Change:
    change = changes.get(number)
    if change is None:
        raise RequestError(f"there is no change {number} (`changes` lists the ones kept)")
    if change.undone:
        raise RequestError(f"change {number} is undone already")
    return change


def _current(change: Change, real: Path) -> bytes | None:
    """The note's bytes now (None: there is none), refusing what memoryd may not rewrite."""
    if not os.path.lexists(real):
        return None
    writable(Target(change.path, real, False))
    return real.read_bytes()


def undo_change(
    agent: Any, changes: ChangeLog, record: ForgetRecord, change: Change, *, strict: bool = False
) -> Outcome:
    """Undo one change (the caller holds the write lock, and checked the batch with `undoable`); `strict`: out of
    turn (see `undone`)."""
    real = where(agent, change)
    target = Target(change.path, real, change.kind == "forget_transcript")
    if change.kind == "forget_transcript":
        # a line another forget still holds stays out
        held = {
            line
            for other in changes.recent(MAX_KEPT, include_undone=False)
            if other.id != change.id and other.kind == "forget_transcript" and other.path == change.path
            for line in other.transcript_lines
        }
        record.remove(transcript=change.path, lines=[n for n in change.transcript_lines if n not in held])
    elif change.kind == "forget_note":
        if os.path.lexists(real):
            raise RequestError(f"{change.path} exists again; change {change.id} cannot put the old note back")
        data = (change.note or "").encode("utf-8", errors="surrogateescape")
        notefile.create(real, data, 0o600 if change.mode is None else change.mode)
    else:
        writable(target)
        notefile.rewrite(real, lambda data: undone(change, data, changes.folder, strict=strict))
    record.remove(source=f"change:{change.id}")
    changes.mark_undone(change)
    repeats = []  # transcripts read again without the forgotten text: read again with it
    for path in change.repeats:
        with contextlib.suppress(RequestError):
            repeats.append(parse_target(agent, path))
    return Outcome({"undone": change.id, "kind": change.kind, "path": change.path}, [target, *repeats])


def undone(change: Change, data: bytes, folder: Path, *, strict: bool = False) -> bytes:
    """A note's bytes with a change's lines put back where they are now (found by their text and neighbours).
    `strict` (a change undone out of turn, newer ones standing): only where a line beside them is still one they
    were made beside; a newer change of those very lines leaves the same text elsewhere, which is not theirs to
    replace."""
    before, after = change.before, change.after
    if before is None or after is None:
        raise RequestError(f"change {change.id} kept nothing to put back")
    note = NoteLines.parse(data)
    at = note.find(after.lines, after.start, after.above, after.below)
    if at is not None and strict:
        above, below = note.context(at, at + len(after.lines) - 1)
        at = at if above == after.above or below == after.below else None
    if at is None:
        raise RequestError(
            f"{change.path} changed since change {change.id} where it was made; undo it by hand (the old lines are "
            f"in {folder}/{change.id:08d}.json)"
        )
    note.replace(at, at + len(after.lines) - 1, before.lines)
    return note.dump()
