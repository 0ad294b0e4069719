"""The edit operations as one agent's memory offers them (forget, update, supersede, undo, changes): each under
the agent's write lock, watched for an editor's stale save, and indexed before it answers, so that what was
forgotten is gone from search, `get` and recall when the call returns."""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from memoryd.curation.changes import ChangeLog
from memoryd.curation.edits import Curator, Outcome, Stale, Target, parse_target
from memoryd.curation.lines import lines_hash, same_text
from memoryd.curation.matches import matching_entries
from memoryd.curation.notefile import NoteChanged
from memoryd.curation.undo import undo_change, undoable
from memoryd.entry_journal import EntryJournal
from memoryd.ingest.shared import SharedRecord
from memoryd.ingest.windows import window_inputs
from memoryd.notes import RequestError, append_entry, entry_text, file_chunks, indexed_pieces
from memoryd.search.filters import Filters
from memoryd.search.keyword import keyword_search
from memoryd.sources.analyzer import query_terms
from memoryd.sources.discovery import display_path, is_transcript, real_workspace
from memoryd.sources.entries import content_words, entries, words
from memoryd.sources.forgotten import MIN_PASSAGE_WORDS, ForgetRecord, record_path
from memoryd.sources.markdown import sha256
from memoryd.store.errors import CORRUPT, FAILED
from memoryd.store.interface import MemoryStore, StoreUnavailable

MAX_QUERY_MATCHES = 20
DUPLICATE_CANDIDATES = 5  # keyword hits a new entry is compared with
NO_FILTERS = Filters.parse()
SESSIONS = Filters.parse(sources=["sessions"])
MAX_REPEAT_SEARCHES = 200  # forgotten lines looked for in transcripts (a whole note's first lines)
REPEAT_CANDIDATES = 50  # transcript chunks a forgotten line's search reads
log = structlog.get_logger("memoryd.curation")
Reindex = Callable[[Target, bool], str | None]  # index a changed file now (force: read it whole); an error or None


class Editing:
    def __init__(
        self,
        agent: Any,
        redact: Callable[[str], str],
        store: Callable[[], MemoryStore],
        lock: threading.Lock,
        journal: Callable[[], EntryJournal],
        reindex: Reindex,
        search: Callable[[str, int], list[Any]],  # search hits (memoryd.search.results.SearchResult)
        get: Callable[[str, int, int], dict[str, Any]],
    ) -> None:
        self.agent = agent
        self._store, self._lock, self._journal, self._reindex = store, lock, journal, reindex
        self._search, self._get = search, get
        self.record = ForgetRecord(record_path(agent), shared=SharedRecord(store))
        self.changes = ChangeLog(agent.store.parent / "changes")
        self.curator = Curator(agent, redact, self._indexed, self.changes, self.record)
        self._unindexed: dict[tuple[str, ...], dict[str, Any]] = {}  # entries written, their index not updated yet

    def _indexed(self, path: str) -> dict[int, list[str]]:
        """Each line of a note as the index holds it (what a search's citation was made from): its pieces, as a
        line too long for one chunk is split over several."""
        return indexed_pieces(self._store(), path)

    def _finish(self, outcome: Outcome, held: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
        """Index what a change touched (and the transcripts that repeat what it forgot); `held`, for a purge: the
        chunks the edited note had before it, whose vectors go once the index no longer holds them."""
        targets = list(outcome.reindex)
        repeats = self._repeating(outcome.passages)
        if repeats and (change := self.changes.get(outcome.answer["change"])) is not None:
            change.repeats = [t.path for t in repeats]  # an undo reads them again, with the text back
            with contextlib.suppress(OSError):  # the edit is made: indexing it must not wait on this
                self.changes.save(change)
        paths = {t.path for t in targets + repeats}
        if held is not None:
            held = {**held, **self._chunks_of({t.path for t in repeats})}
        errors = [e for t in targets + repeats if (e := self._reindex(t, t.transcript))]
        if held and not errors:
            self._drop_vectors(held, paths)
        return {**outcome.answer, "indexed": not errors, "index_error": "; ".join(errors) or None}

    def _chunks_of(self, paths: set[str]) -> dict[str, tuple[str, str]]:
        """The (heading, text) of each chunk these files have in the index, by its hash; none when the store cannot
        be read (the purge goes on: the note is what must change)."""
        found: dict[str, tuple[str, str]] = {}
        try:
            store = self._store()
            for path in paths:
                found.update((row.hash, (row.heading, row.text)) for row in file_chunks(store, path))
        except (StoreUnavailable, *FAILED):  # type: ignore[misc]  # mypy misreads *FAILED (mypy#21092)
            log.warning("purge_chunks_unread", paths=sorted(paths), exc_info=True)
        return found

    def _drop_vectors(self, held: dict[str, tuple[str, str]], paths: set[str]) -> None:
        """After a purge's reindex, the embedding cache keeps no vector of a chunk it took out, nor of that chunk's
        windows: a vector says something of its text. The note is purged already: a store that fails here is
        logged, not raised."""
        kept = self._chunks_of(paths)
        gone = {digest: chunk for digest, chunk in held.items() if digest not in kept}
        windows = [sha256(window) for heading, text in gone.values() for window in window_inputs(heading, text)]
        try:
            self._store().cache_drop([*gone, *windows])
        except (StoreUnavailable, *FAILED):  # type: ignore[misc]  # mypy misreads *FAILED (mypy#21092)
            log.warning("purge_vectors_kept", paths=sorted(paths), exc_info=True)

    def _repeating(self, passages: list[str]) -> list[Target]:
        """Indexed transcripts with a line that repeats text just forgotten: read again whole, they leave it out.
        Found by a keyword search for each forgotten line, in the transcripts only."""
        store = self._store()
        if not passages or "sessions" not in self.agent.sources or not store.fts_available:
            return []
        lines = [line for text in passages for line in text.split("\n") if len(words(line)) >= MIN_PASSAGE_WORDS]
        found: dict[str, Target] = {}
        for line in lines[:MAX_REPEAT_SEARCHES]:
            for hit in keyword_search(store, line, REPEAT_CANDIDATES, SESSIONS, query_terms(line)):
                row = store.chunks_by_ids([hit.chunk_id]).get(hit.chunk_id)
                if row is None or row.path in found or row.source != "sessions":
                    continue
                if any(self.record.holds_forgotten(held) for held in row.text.split("\n")):
                    with contextlib.suppress(RequestError):
                        found[row.path] = parse_target(self.agent, row.path)
        return list(found.values())

    def forget(
        self,
        citation: str | None = None,
        *,
        query: str | None = None,
        confirm: str | None = None,
        expect: str | None = None,
        purge: bool = False,
    ) -> dict[str, Any]:
        """Forget a citation's lines, a whole note, or (with `query`) what a search finds: first the matches and a
        `confirm` token, then, called again with that token, the forgetting."""
        if query is not None and citation is not None:
            raise RequestError("name one thing to forget: a citation (or a note's path), or a query, not both")
        if query is not None:
            if expect is not None:
                raise RequestError(
                    "`expect` names the text of a citation's lines; a forget by query is checked by its `confirm` "
                    "token (the matches as shown): leave `expect` out"
                )
            return self._forget_query(query, confirm, purge)
        if citation is None:
            raise RequestError("name what to forget: a citation (path#L3-L5), a note's path, or a query")
        target = parse_target(self.agent, citation)
        if target.transcript and target.start is None and expect is not None:
            raise RequestError(
                f"`expect` cannot be checked for a whole transcript ({target.path}); cite its lines "
                "(path#L3-L5) with the text or hash `get` shows for them, or leave `expect` out"
            )
        held = self._chunks_of({target.path}) if purge else None  # read before the edit: a sync may index it next
        with self._lock:
            if target.transcript and target.start is not None and expect is not None:
                seen = self._get(target.path, target.start, (target.end or target.start) - target.start + 1)
                if not same_text(seen["text"], expect) and lines_hash(seen["text"]) != expect.strip():
                    current = {"citation": target.citation, "text": seen["text"], "hash": lines_hash(seen["text"])}
                    return {
                        "forgotten": None,
                        "conflict": f"{target.citation} changed since it was read",
                        "current": current,
                    }
            try:
                outcome = self.curator.forget(target, expect=expect, purge=purge)
            except Stale as exc:
                return {"forgotten": None, "conflict": str(exc), "current": exc.current}
            self._watch(target, outcome)
        with self._scrubbing(purge):
            return self._finish(outcome, held)

    def _scrubbing(self, purge: bool) -> contextlib.AbstractContextManager[None]:
        """With purge, the index leaves no copy of the text it takes out in its files (MemoryStore.scrubbed)."""
        return self._store().scrubbed() if purge else contextlib.nullcontext()

    def write(
        self,
        text: str,
        path: str | None = None,
        kind: str | None = None,
        importance: float | None = None,
        supersedes: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Append an entry (see notes.append_entry), unless memory holds it already (`duplicate_of`, unless
        `force`); with `supersedes`, then mark the older statement superseded by it."""
        entry = entry_text(text, kind, importance)
        if "memory" not in self.agent.sources:
            raise RequestError("this agent has no Markdown memory source")
        old = parse_target(self.agent, supersedes) if supersedes else None
        said = content_words(text)
        with self._lock:
            if old is not None:  # bad input changes nothing: checked before anything is written
                self.curator.check_supersedable(old)
            # a copy written a moment ago may not be indexed yet: the entries still being indexed are looked at too
            held = None if force else self._unindexed.get(said) or self._held(text)
            if held is None:
                target, start_line, end_line = append_entry(self.agent, entry, path)
                # written again on purpose: it must be found, not kept out as forgotten (only once it is written: a
                # refused write un-forgets nothing)
                self.record.release(text)
                real = target.resolve()
                rel = display_path(real, real_workspace(self.agent))
                self._journal().record(target, rel, entry)
                citation = f"{rel}#L{start_line}-L{end_line}"
                where = {"path": rel, "start_line": start_line, "end_line": end_line, "citation": citation}
                if said:
                    self._unindexed[said] = {"duplicate_of": citation, **where}
        if held is not None:
            answer: dict[str, Any] = {**held, "written": False, "indexed": True, "index_error": None}
        else:
            try:
                index_error = self._reindex(Target(rel, real, False), False)
            finally:
                with self._lock:
                    self._unindexed.pop(said, None)
            answer = {**where, "written": True, "indexed": index_error is None, "index_error": index_error}
        if old is not None:  # a duplicate too: the statement it repeats now replaces the old one
            marked = self._mark(old, answer)
            answer["superseded"] = marked.get("citation")
            if marked.get("by", answer["citation"]) != answer["citation"]:  # the mark above it moved it down
                moved = parse_target(self.agent, marked["by"])
                answer.update(citation=marked["by"], start_line=moved.start, end_line=moved.end)
                if "duplicate_of" in answer:
                    answer["duplicate_of"] = marked["by"]
        return answer

    def _mark(self, old: Target, new: dict[str, Any]) -> dict[str, Any]:
        """Mark `old` superseded by the entry just written (or held already): the supersede's answer (the old
        lines' new `citation`, and `by`: where the new entry is once marked)."""
        assert old.start is not None and old.end is not None
        if new["path"] == old.path and new["start_line"] <= old.end and old.start <= new["end_line"]:
            return {}  # the statement held is the old one itself: nothing replaces it
        try:
            return self.supersede(old.citation, new["citation"])
        except (RequestError, Stale, NoteChanged, OSError) as exc:
            done = "was written" if new["written"] else "is held already"
            raise RequestError(
                f"{new['citation']} {done}, but {old.citation} was not marked superseded: {exc}"
            ) from None

    def _held(self, text: str) -> dict[str, Any] | None:
        """The citation of an entry saying what `text` says (the same words, markup and filler aside), among the
        notes a keyword search for it finds. A store that cannot be read now (its server down, the file corrupt)
        finds none: the entry is written, as a write always is, and indexed once the store is back."""
        wanted = content_words(text)
        if not wanted:
            return None
        try:
            return self._held_in(self._store(), text, wanted)
        except (StoreUnavailable, *CORRUPT):  # type: ignore[misc]  # mypy misreads *CORRUPT (mypy#21092)
            return None

    def _held_in(self, store: MemoryStore, text: str, wanted: tuple[str, ...]) -> dict[str, Any] | None:
        if not store.fts_available:
            return None
        hits = keyword_search(store, text, DUPLICATE_CANDIDATES, NO_FILTERS, query_terms(text))
        rows = store.chunks_by_ids([hit.chunk_id for hit in hits])
        for hit in hits:
            row = rows.get(hit.chunk_id)
            if row is None or row.source != "memory":
                continue
            lines = row.text.split("\n")
            for first, last in entries(lines):
                if content_words("\n".join(lines[first : last + 1])) == wanted:
                    start, end = row.file_line(first), row.file_line(last)
                    if not self._still_holds(row.path, start, end, wanted):
                        continue  # the note changed or went since it was indexed: that copy is no more
                    return {
                        "duplicate_of": f"{row.path}#L{start}-L{end}",
                        "path": row.path,
                        "start_line": start,
                        "end_line": end,
                        "citation": f"{row.path}#L{start}-L{end}",
                    }
        return None

    def _still_holds(self, path: str, start: int, end: int, wanted: tuple[str, ...]) -> bool:
        try:
            return content_words(self._get(path, start, end - start + 1)["text"]) == wanted
        except RequestError:
            return False

    def masked(self, found: dict[str, Any]) -> dict[str, Any]:
        """A `get` answer with a transcript's forgotten lines masked, and the `hash` an update names them by."""
        if is_transcript(Path(found["path"])) and not self.record.empty:
            lines = self.record.masked(found["path"], found["from"], found["text"].split("\n"))
            found = {**found, "text": "\n".join(lines)}
        elif (shown := self.record.without_passages(found["text"])) != found["text"]:
            found = {**found, "text": shown}  # a copy of forgotten text (another note, a team member's old copy)
        return {**found, "hash": lines_hash(found["text"])}

    def matches(self, query: str, limit: int = MAX_QUERY_MATCHES) -> list[dict[str, Any]]:
        """The entries a search's hits hold that are about the query, each with the hash of its lines (what a
        confirmed forget checks); see curation.matches."""
        return matching_entries(query, self._search(query, limit), self._get)

    def _forget_query(self, query: str, confirm: str | None, purge: bool) -> dict[str, Any]:
        matches = self.matches(query)
        token = _token(matches)
        if confirm is None or confirm != token:
            answer: dict[str, Any] = {"forgotten": None, "matches": matches, "confirm": token}
            if confirm is not None:
                answer["conflict"] = "the matches changed since they were shown; confirm these"
            return answer
        done = []
        with self._scrubbing(purge):  # one scope: the index is merged and rebuilt once, not once a match
            # the last lines of a note first, so that the citations above them still hold
            for match in sorted(matches, key=lambda m: (m["path"], -m["start_line"])):
                done.append(self.forget(match["citation"], expect=match["hash"], purge=purge))
        return {"forgotten": [d.get("forgotten") for d in done], "results": done}

    def update(self, citation: str, text: str, expect: str | None) -> dict[str, Any]:
        target = parse_target(self.agent, citation)
        with self._lock:
            try:
                outcome = self.curator.update(target, text, expect)
            except Stale as exc:
                return {"updated": None, "conflict": str(exc), "current": exc.current}
            self._watch(target, outcome)
        return self._finish(outcome)

    def supersede(self, citation: str, by: str) -> dict[str, Any]:
        target = parse_target(self.agent, citation)
        with self._lock:
            outcome = self.curator.supersede(target, by)
            self._watch(target, outcome)
        return self._finish(outcome)

    def _watch(self, target: Target, outcome: Outcome) -> None:
        """Have the journal watch an edit of a note just made, so that an editor's save of a copy read before it
        (which brings the old lines back) gets the edit made again."""
        if outcome.replaced is not None and not target.transcript:
            self._journal().record_edit(target.real, target.path, *outcome.replaced, outcome.answer.get("change"))

    def undo(self, count: int = 1, only: int | None = None) -> dict[str, Any]:
        """Undo the newest `count` changes (or change number `only` alone), or none of them when one cannot be
        (RequestError says which)."""
        outcomes: list[Outcome] = []
        failed: Exception | None = None
        with self._lock:
            changes = undoable(self.agent, self.changes, count, only)
            try:
                for change in changes:
                    outcomes.append(undo_change(self.agent, self.changes, self.record, change, strict=only is not None))
                    # taken back on purpose: its edit is no longer watched (the journal waits on this lock); a
                    # change an undo did not reach stays watched
                    self._journal().drop_edits({change.id})
            except (RequestError, OSError, NoteChanged) as exc:  # an editor saved meanwhile: the ones done stand
                failed = exc
        answers = [self._finish(o) for o in outcomes]
        if failed is not None and not answers:
            raise failed
        if failed is not None:
            done = ", ".join(str(a["undone"]) for a in answers)
            raise RequestError(f"{failed} (changes {done} were undone before it)") from None
        return {"undone": [a["undone"] for a in answers], "results": answers}

    def list_changes(self, limit: int = 20) -> list[dict[str, Any]]:
        return [c.summary() for c in self.changes.recent(limit)]


def _token(matches: list[dict[str, Any]]) -> str:
    """Names exactly these matches with exactly this text: a confirmation of other matches is refused."""
    digest = hashlib.sha256()
    for match in matches:
        digest.update(f"{match['citation']}\0{match['hash']}\0".encode())
    return digest.hexdigest()[:16]
