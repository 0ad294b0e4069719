"""The edit operations as one agent's memory offers them (forget, update, supersede, undo, changes): each under
the agent's write lock, watched for an editor's stale save, and indexed before it answers, so that what was
forgotten is gone from search, `get` and recall when the call returns."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd.curation.changes import ChangeLog
from memoryd.curation.edits import Curator, Outcome, Stale, Target, parse_target
from memoryd.curation.lines import lines_hash
from memoryd.entry_journal import EntryJournal
from memoryd.notes import RequestError, append_entry, entry_text
from memoryd.search.filters import Filters
from memoryd.search.hybrid import SearchResult
from memoryd.search.keyword import keyword_search
from memoryd.sources.analyzer import query_terms
from memoryd.sources.discovery import display_path, is_transcript, real_workspace
from memoryd.sources.entries import content_words, entries
from memoryd.sources.forgotten import ForgetRecord, record_path
from memoryd.store.interface import MemoryStore

MAX_QUERY_MATCHES = 20
DUPLICATE_CANDIDATES = 5  # keyword hits a new entry is compared with
NO_FILTERS = Filters.parse()
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
        search: Callable[[str, int], list[SearchResult]],
        get: Callable[[str, int, int], dict[str, Any]],
    ) -> None:
        self.agent = agent
        self._store, self._lock, self._journal, self._reindex = store, lock, journal, reindex
        self._search, self._get = search, get
        self.record = ForgetRecord(record_path(agent))
        self.changes = ChangeLog(agent.store.parent / "changes")
        self.curator = Curator(agent, redact, self._indexed, self.changes, self.record)

    def _indexed(self, path: str) -> dict[int, str]:
        """Each line of a note as the index holds it (what a search's citation was made from)."""
        store = self._store()
        rows = store.chunks_by_ids(list(store.chunk_ids(Filters.parse(path=path))))
        held: dict[int, str] = {}
        for row in rows.values():
            if row.path == path:
                for offset, line in enumerate(row.text.split("\n")):
                    held.setdefault(row.file_line(offset), line)
        return held

    def _finish(self, outcome: Outcome) -> dict[str, Any]:
        errors = [e for t in outcome.reindex if (e := self._reindex(t, t.transcript))]
        return {**outcome.answer, "indexed": not errors, "index_error": "; ".join(errors) or None}

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
        if query is not None:
            return self._forget_query(query, confirm, purge)
        if citation is None:
            raise RequestError("name what to forget: a citation (path#L3-L5), a note's path, or a query")
        target = parse_target(self.agent, citation)
        with self._lock:
            try:
                outcome = self.curator.forget(target, expect=expect, purge=purge)
            except Stale as exc:
                return {"forgotten": None, "conflict": str(exc), "current": exc.current}
            if not target.transcript and target.start is not None:
                self._journal().record_edit(target.real, target.path, _old(outcome, self.changes), [])
        return self._finish(outcome)

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
        if old is not None:
            self.curator.check_supersedable(old)  # bad input changes nothing: checked before anything is written
        with self._lock:
            held = None if force else self._held(text)
            if held is not None:
                return {**held, "written": False, "indexed": True, "index_error": None}
            target, start_line, end_line = append_entry(self.agent, entry, path)
            real = target.resolve()
            rel = display_path(real, real_workspace(self.agent))
            self._journal().record(target, rel, entry)
        index_error = self._reindex(Target(rel, real, False), False)
        answer: dict[str, Any] = {
            "path": rel,
            "start_line": start_line,
            "end_line": end_line,
            "citation": f"{rel}#L{start_line}-L{end_line}",
            "written": True,
            "indexed": index_error is None,
            "index_error": index_error,
        }
        if old is not None:
            marked = self.supersede(old.citation, answer["citation"])
            answer["superseded"] = marked.get("citation")
        return answer

    def _held(self, text: str) -> dict[str, Any] | None:
        """The citation of an entry saying what `text` says (the same words, markup and filler aside), among the
        notes a keyword search for it finds."""
        wanted = content_words(text)
        if not wanted:
            return None
        store = self._store()
        if not store.fts_available:
            return None
        for hit in keyword_search(store, text, DUPLICATE_CANDIDATES, NO_FILTERS, query_terms(text)):
            row = store.chunks_by_ids([hit.chunk_id]).get(hit.chunk_id)
            if row is None or row.source != "memory":
                continue
            lines = row.text.split("\n")
            for first, last in entries(lines):
                if content_words("\n".join(lines[first : last + 1])) == wanted:
                    start, end = row.file_line(first), row.file_line(last)
                    return {
                        "duplicate_of": f"{row.path}#L{start}-L{end}",
                        "path": row.path,
                        "start_line": start,
                        "end_line": end,
                        "citation": f"{row.path}#L{start}-L{end}",
                    }
        return None

    def masked(self, found: dict[str, Any]) -> dict[str, Any]:
        """A `get` answer with a transcript's forgotten lines masked, and the `hash` an update names them by."""
        if is_transcript(Path(found["path"])) and not self.record.empty:
            lines = self.record.masked(found["path"], found["from"], found["text"].split("\n"))
            found = {**found, "text": "\n".join(lines)}
        return {**found, "hash": lines_hash(found["text"])}

    def matches(self, query: str, limit: int = MAX_QUERY_MATCHES) -> list[dict[str, Any]]:
        """What a search finds, each with the hash of its cited lines (what a confirmed forget checks)."""
        found = []
        for hit in self._search(query, limit):
            lines = self._get(hit.path, hit.start_line, hit.end_line - hit.start_line + 1)
            found.append(
                {
                    "citation": hit.citation,
                    "path": hit.path,
                    "start_line": hit.start_line,
                    "end_line": hit.end_line,
                    "snippet": hit.snippet,
                    "score": hit.score,
                    "hash": lines_hash(lines["text"]),
                }
            )
        return found

    def _forget_query(self, query: str, confirm: str | None, purge: bool) -> dict[str, Any]:
        matches = self.matches(query)
        token = _token(matches)
        if confirm is None or confirm != token:
            answer: dict[str, Any] = {"forgotten": None, "matches": matches, "confirm": token}
            if confirm is not None:
                answer["conflict"] = "the matches changed since they were shown; confirm these"
            return answer
        done = []
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
            new = text.replace("\r\n", "\n").rstrip("\n").split("\n") if text else []
            self._journal().record_edit(target.real, target.path, _old(outcome, self.changes), new)
        return self._finish(outcome)

    def supersede(self, citation: str, by: str) -> dict[str, Any]:
        target = parse_target(self.agent, citation)
        with self._lock:
            outcome = self.curator.supersede(target, by)
        return self._finish(outcome)

    def undo(self, count: int = 1) -> dict[str, Any]:
        with self._lock:
            self._journal().drop_edits()
            outcomes = self.curator.undo(count)
        answers = [self._finish(o) for o in outcomes]
        return {"undone": [a["undone"] for a in answers], "results": answers}

    def list_changes(self, limit: int = 20) -> list[dict[str, Any]]:
        return [c.summary() for c in self.changes.recent(limit)]


def _old(outcome: Outcome, changes: ChangeLog) -> list[str]:
    found = changes.recent(1)
    change = found[0] if found and found[0].id == outcome.answer.get("change") else None
    return list(change.before.lines) if change and change.before else []


def _token(matches: list[dict[str, Any]]) -> str:
    """Names exactly these matches with exactly this text: a confirmation of other matches is refused."""
    digest = hashlib.sha256()
    for match in matches:
        digest.update(f"{match['citation']}\0{match['hash']}\0".encode())
    return digest.hexdigest()[:16]
