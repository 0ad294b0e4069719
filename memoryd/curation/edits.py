"""Forget, update and supersede what the agent's notes hold, and undo any of them: each a visible edit of a note
(or, for a transcript, an entry in the forget record), checked against what the caller saw, recorded with what it
replaced, and made without losing an editor's save that lands at the same moment (notefile.rewrite).

The caller (AgentMemory) holds the agent's write lock around each call and indexes the paths it returns."""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import os
import stat as stat_module
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.curation import notefile
from memoryd.curation.changes import Change, ChangeLog, Region
from memoryd.curation.lines import (
    MARK,
    LinesOutside,
    NoteLines,
    lines_hash,
    relative_link,
    same_text,
    strikable,
    struck,
)
from memoryd.curation.target import CITATION, Target, writable
from memoryd.curation.target import parse_target as parse_target  # re-exported: callers name it here
from memoryd.notes import RequestError
from memoryd.sources.entries import STRUCK
from memoryd.sources.forgotten import ForgetRecord
from memoryd.sources.redact import MASK
from memoryd.sources.transcripts import turns_of


class Stale(Exception):
    """The lines are no longer what the caller saw; nothing was written."""

    def __init__(self, message: str, current: dict[str, Any]) -> None:
        super().__init__(message)
        self.current = current


@dataclass
class Outcome:
    """What an edit did: the answer for the caller, and the files to index again."""

    answer: dict[str, Any]
    reindex: list[Target] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)  # text the forget record now keeps out of transcripts
    replaced: tuple[list[str], list[str]] | None = None  # a note's lines before and after: watched for a stale save


class Curator:
    """The edit operations of one agent's memory."""

    def __init__(
        self,
        agent: Any,
        redact: Callable[[str], str],
        indexed: Callable[[str], dict[int, list[str]]],  # a note's lines in the index: their pieces
        changes: ChangeLog,
        record: ForgetRecord,
    ) -> None:
        self.agent, self.redact, self.indexed = agent, redact, indexed
        self.changes, self.record = changes, record
        self._checked: bytes | None = None  # a note's bytes a change's preview checked against what the caller saw

    # -- checks ---------------------------------------------------------------------------------

    def _shown(self, text: str) -> str:
        """Lines as a client saw them: secrets masked as in the index and in `get`."""
        return self.redact(text) if text else text

    def _current(self, target: Target, note: NoteLines, start: int, end: int) -> dict[str, Any]:
        shown = self._shown(note.text(start, end))
        return {"citation": f"{target.path}#L{start}-L{end}", "text": shown, "hash": lines_hash(shown)}

    def _expect(self, target: Target, note: NoteLines, start: int, end: int, expect: str | None) -> None:
        """Raise Stale unless lines start..end are what the caller saw: `expect` (the text, or `sha256:` of it),
        else what the index holds for them (a citation from a search)."""
        if self._checked is not None and note.dump() == self._checked:
            return  # the very bytes the preview checked (before this change's own text joined the forget record)
        shown = self._shown(note.text(start, end))
        if expect is not None:
            views = {shown, self.record.without_passages(shown)}  # as they are, or as `get` shows forgotten copies
            hashed = expect.strip().startswith("sha256:")
            if not any(lines_hash(v) == expect.strip() if hashed else same_text(v, expect) for v in views):
                raise Stale(
                    f"{target.path}#L{start}-L{end} changed since it was read", self._current(target, note, start, end)
                )
            return
        held = self.indexed(target.path)
        for number in range(start, end + 1):
            line, pieces = self._shown(note.lines[number - 1]).strip(), {p.strip() for p in held.get(number, ())}
            split = len(pieces) > 1  # a line too long for one chunk: each piece must still be in it
            if pieces == {""}:
                # the index holds the line blank: a copy of text forgotten elsewhere, forgotten now or when the note
                # was indexed and since undone (the note is indexed again a moment later): nothing to compare
                continue
            if pieces and (any(p not in line for p in pieces) if split else pieces != {line}):
                raise Stale(
                    f"{target.path}#L{start}-L{end} no longer holds what the index shows (the note changed since "
                    "it was searched); search again, or name the text you saw",
                    self._current(target, note, start, end),
                )

    # -- forget ---------------------------------------------------------------------------------

    def forget(self, target: Target, *, expect: str | None = None, purge: bool = False) -> Outcome:
        if target.transcript:
            return self._forget_transcript(target)
        writable(target)
        if target.start is None:
            return self._forget_note(target, purge, expect)
        assert target.end is not None
        start, end = target.start, target.end
        kept: dict[str, Any] = {}

        def change(data: bytes) -> bytes:
            note = self._lines_as_seen(target, NoteLines.parse(data), start, end, expect)
            removed_text = note.text(start, end)
            first, last = note.remove(start, end)
            kept.update(first=first, last=last, removed=removed_text, before=note_lines_of(data, first, last))
            kept["above"], kept["below"] = note.context(first, first - 1)
            return note.dump()

        def fill(record: Change) -> list[str]:
            if purge:
                record.purged = True
            else:
                record.before = Region(kept["first"], kept["before"])
                record.after = Region(kept["first"], [], kept["above"], kept["below"])
            return [kept["removed"]]

        record = self._apply(target, "forget", change, kept, fill)
        answer = {"forgotten": target.citation, "path": target.path, "lines": kept["last"] - kept["first"] + 1}
        if purge:
            answer["scrubbed"] = self._scrub([kept["removed"]], record.id)
        replaced: tuple[list[str], list[str]] = (kept["before"], [])
        return Outcome({**answer, "change": record.id}, [target], [kept["removed"]], replaced)

    def _forget_note(self, target: Target, purge: bool, expect: str | None) -> Outcome:
        data = target.real.read_bytes()
        note = NoteLines.parse(data)
        if expect is not None and note.lines:  # the whole note's text as `get` shows it, or its hash
            self._expect(target, note, 1, len(note.lines), expect)
        record = Change(0, "forget_note", target.path, time.time(), citation=target.path, purged=purge)
        if not purge:
            record.note = data.decode("utf-8", errors="surrogateescape")
            record.mode = stat_module.S_IMODE(os.stat(target.real, follow_symlinks=False).st_mode)
        self.changes.add(record)  # the record first, the note last: a failure between changes nothing
        text = data.decode("utf-8", errors="replace")
        try:
            self.record.add(passages=[text], source=f"change:{record.id}")
            removed = notefile.remove(target.real, data)
        except BaseException:
            self._take_back(record)
            raise
        if not removed:
            self._take_back(record)
            raise RequestError(f"{target.path} changed while it was being forgotten; nothing changed, try again")
        answer: dict[str, Any] = {"forgotten": target.path, "path": target.path, "change": record.id}
        if purge:
            answer["scrubbed"] = self._scrub([text], record.id)
        return Outcome(answer, [target], [text], (NoteLines.parse(data).lines, []))

    def _scrub(self, texts: list[str], by: int) -> list[int]:
        """After a purge: no earlier change record keeps the text either (the purge is made: a record that cannot
        be rewritten now is reported, not undone)."""
        try:
            return self.changes.scrub(texts, by)
        except OSError as exc:
            raise RequestError(
                f"the text was purged from the note (change {by}), but an earlier change record in "
                f"{self.changes.folder} still holds it: {exc}"
            ) from None

    def _forget_transcript(self, target: Target) -> Outcome:
        """A transcript is the platform's: its lines are left out of the index by the record, never deleted."""
        total = _count_lines(target.real)
        start, end = (1, total) if target.start is None else (target.start, target.end or target.start)
        if start < 1 or end < start or end > total:
            raise RequestError(f"{target.citation} is outside the transcript, which has {total} lines")
        lines = list(range(start, end + 1))
        with open(target.real, "rb") as handle:  # its turns' words: kept out of a copy, or of the file renamed
            cited = enumerate(itertools.islice(handle, start - 1, end), start)
            said = [self.redact(turn.text) for turn in turns_of([(n, b.decode("utf-8", "replace")) for n, b in cited])]
        record = self.changes.add(
            Change(0, "forget_transcript", target.path, time.time(), citation=target.citation, transcript_lines=lines)
        )
        try:
            self.record.add(transcript=target.path, lines=lines, turns=said, source=f"change:{record.id}")
        except BaseException:
            self._take_back(record)
            raise
        answer = {"forgotten": target.citation, "path": target.path, "lines": len(lines), "change": record.id}
        return Outcome(answer, [target])

    # -- update and supersede -------------------------------------------------------------------

    def update(self, target: Target, text: str, expect: str | None, kind: str = "update") -> Outcome:
        """Replace exactly the cited lines by `text`; a stale `expect` writes nothing (Stale)."""
        if target.transcript:
            raise RequestError(f"{target.path} is a transcript: it belongs to the agent platform and is never edited")
        if target.start is None or target.end is None:
            raise RequestError("name the lines to replace: a citation such as path#L3-L5")
        if expect is None:
            raise RequestError("name what you saw: `expect` is the lines' text, or their hash (sha256:..., from get)")
        writable(target)
        start, end = target.start, target.end
        new_lines = text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n") if text else []
        kept: dict[str, Any] = {}

        def change(data: bytes) -> bytes:
            note = self._lines_as_seen(target, NoteLines.parse(data), start, end, expect)
            if MASK in text and self._shown(note.text(start, end)) != note.text(start, end):
                raise RequestError(
                    f"{target.citation} holds a secret that memoryd shows only as {MASK}; the new text would write "
                    "the mask over it: leave the masked part out, or edit the note by hand"
                )
            kept["before"] = note.lines[start - 1 : end]
            note.replace(start, end, new_lines)
            kept["above"], kept["below"] = note.context(start, start + len(new_lines) - 1)
            return note.dump()

        return self._edit(target, kind, change, kept, new_lines)

    def _marked_lines(self, target: Target) -> tuple[int, int]:
        """The lines a supersede names, refusing a transcript or a whole note."""
        if target.transcript:
            raise RequestError(f"{target.path} is a transcript: it cannot be marked; forget its lines instead")
        if target.start is None or target.end is None:
            raise RequestError("name the superseded lines: a citation such as path#L3-L5")
        writable(target)
        return target.start, target.end

    def _lines_as_seen(self, target: Target, note: NoteLines, start: int, end: int, expect: str | None) -> NoteLines:
        """`note`, once lines start..end are in it (RequestError) and are what the caller saw (Stale)."""
        try:
            note.check(start, end)
        except LinesOutside as exc:
            raise RequestError(f"{target.path}: {exc}") from None
        self._expect(target, note, start, end, expect)
        return note

    def _supersedable(self, target: Target, note: NoteLines, start: int, end: int) -> list[str]:
        """The lines `supersede` strikes in `note`, once checked: in the note, as the index shows them (Stale
        otherwise), not marked already."""
        self._lines_as_seen(target, note, start, end, None)
        old = note.lines[start - 1 : end]
        _not_superseded(target, old)
        return old

    def check_supersedable(self, target: Target) -> None:
        """Refuse, before anything is written, what `supersede` would refuse (the same checks; the caller holds
        the write lock, as for every edit)."""
        start, end = self._marked_lines(target)
        try:
            self._supersedable(target, NoteLines.parse(target.real.read_bytes()), start, end)
        except Stale as exc:
            raise RequestError(f"{exc}; nothing written (the lines now read: {exc.current['text'][:200]!r})") from None

    def supersede(self, target: Target, by: str, day: dt.date | None = None) -> Outcome:
        """Strike the cited lines through and say, below them, when and by what they were superseded."""
        start, end = self._marked_lines(target)
        when = day or dt.date.today()
        kept: dict[str, Any] = {}

        def change(data: bytes) -> bytes:
            note = NoteLines.parse(data)
            old = self._supersedable(target, note, start, end)
            new = struck(old, when, by, relative_link(target.path, by))
            final = _moved(by, target.path, end, len(new) - (end - start + 1))
            if final != by:  # the new entry lies below in this very note: the mark moved it; link where it is now
                new = struck(old, when, final, relative_link(target.path, final))
            kept["by"] = final
            kept["before"] = old
            note.replace(start, end, new)
            kept["above"], kept["below"] = note.context(start, start + len(new) - 1)
            kept["new"] = new
            return note.dump()

        return self._edit(target, "supersede", change, kept, None, by)

    def _apply(
        self,
        target: Target,
        kind: str,
        change: Callable[[bytes], bytes],
        kept: dict[str, Any],
        fill: Callable[[Change], list[str]],
    ) -> Change:
        """Make a change of a note with its record kept first: previewed on the note as it is (refusing before
        anything is written), its record (what it replaces) and the text it keeps out of transcripts saved durably,
        and only then the note rewritten; a failed rewrite takes both back, so a full disk at any step changes
        nothing. When an editor's save made the change land elsewhere, the record follows it."""
        previewed = target.real.read_bytes()
        change(previewed)
        record = Change(0, kind, target.path, time.time(), citation=target.citation)
        passages = fill(record)
        self.changes.add(record)
        source, seen = f"change:{record.id}", dict(kept)
        try:
            if passages:
                self.record.add(passages=passages, source=source)
            self._checked = previewed
            notefile.rewrite(target.real, change)
        except BaseException:
            self._take_back(record)
            raise
        finally:
            self._checked = None
        if kept != seen:  # the note is right already: keeping its record up to date is all that is left
            with contextlib.suppress(OSError):
                self.record.remove(source=source)
                self.record.add(passages=fill(record), source=source)
                self.changes.save(record)
        return record

    def _take_back(self, record: Change) -> None:
        """Forget the record of a change that was not made after all (and what it added to the forget record)."""
        self.changes.drop(record)
        with contextlib.suppress(OSError):
            self.record.remove(source=f"change:{record.id}")

    def _edit(
        self,
        target: Target,
        kind: str,
        change: Callable[[bytes], bytes],
        kept: dict[str, Any],
        new_lines: list[str] | None,
        by: str | None = None,
    ) -> Outcome:
        assert target.start is not None
        start = target.start

        def fill(record: Change) -> list[str]:
            after = kept.get("new", new_lines) or []
            record.before = Region(start, kept["before"])
            record.after = Region(start, after, kept["above"], kept["below"])
            record.new_citation = f"{target.path}#L{start}-L{start + len(after) - 1}" if after else None
            return []  # a correction of these lines: the same words elsewhere (another note, a transcript) stay

        record = self._apply(target, kind, change, kept, fill)
        after = kept.get("new", new_lines) or []
        answer: dict[str, Any] = {"path": target.path, "change": record.id, "citation": record.new_citation}
        if by is not None:
            answer["superseded"], answer["by"] = target.citation, kept.get("by", by)
        else:
            answer["updated"] = target.citation
        return Outcome(answer, [target], [], (kept["before"], after))


def _not_superseded(target: Target, lines: list[str]) -> None:
    """Refuse lines memoryd marked superseded already (each struck through, or the line saying by what), and lines
    with nothing to strike (blank, a code fence)."""
    shown = [line for line in lines if line.strip()]
    if shown and all(MARK.search(line) or STRUCK.match(line) for line in shown):
        raise RequestError(f"{target.citation} is superseded already; supersede the statement that replaced it")
    if not any(strikable(line) for line in lines):
        raise RequestError(f"{target.citation} holds no statement to strike (only blank lines or a code fence)")


def _moved(citation: str, path: str, below: int, shift: int) -> str:
    """A citation after lines were added (`shift` > 0) or taken out above it: one of `path` starting below line
    `below` moves by `shift`; any other stays."""
    cited = CITATION.match(citation)
    if cited is None or cited["path"] != path or int(cited["start"]) <= below or not shift:
        return citation
    start, end = int(cited["start"]) + shift, int(cited["end"] or cited["start"]) + shift
    return f"{path}#L{start}-L{end}"


def note_lines_of(data: bytes, first: int, last: int) -> list[str]:
    return NoteLines.parse(data).lines[first - 1 : last]


def _count_lines(path: Path) -> int:
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (0 if last == b"\n" else 1)
