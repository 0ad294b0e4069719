"""One agent's memory: its index, sync, search, reads and writes behind one object. This is the library API:
the daemon serves it over RPC, and a program can embed it directly:

    from memoryd.config import quickstart_agent
    from memoryd.memory import AgentMemory

    with AgentMemory(quickstart_agent(Path("~/notes"), Path("/tmp/memoryd-data"))) as memory:
        memory.sync()
        for hit in memory.search("what did we decide about auth?").results:
            print(hit.citation, hit.snippet)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import structlog

from memoryd.catalog import list_notes
from memoryd.config import AgentConfig
from memoryd.curation.service import Editing
from memoryd.embeddings.base import Embedder, EmbeddingError
from memoryd.embeddings.select import create_embedder
from memoryd.entry_journal import EntryJournal
from memoryd.ingest.batch import Progress, SyncReport
from memoryd.ingest.sync import Syncer
from memoryd.notes import RequestError, indexed_lines, read_lines
from memoryd.search.hybrid import SearchEngine, SearchResponse
from memoryd.sources.discovery import SourceFile, display_path, real_workspace
from memoryd.store.backend import open_backend, unwritten_here
from memoryd.store.errors import CORRUPT, FAILED, FULL, NotGranted, StoreUnavailable
from memoryd.store.gate import SwapGate
from memoryd.store.interface import Backend, MemoryStore
from memoryd.store.lock import OwnerLock, index_lock_path
from memoryd_client.protocol.schema import Search

log = structlog.get_logger("memoryd.memory")


class IndexUnreadable(RuntimeError):
    """The index file is corrupt; the next sync rebuilds it."""


class AgentMemory:
    """Opening one takes the index's lock: a second AgentMemory (in any process) on the same index raises
    `Locked` naming the holder. `owner` is written into the lock for that message (the daemon's socket).

    With `embed_later`, syncs and writes store chunks without computing vectors (keyword-searchable at once) and
    `embed_pending` adds them: the daemon runs it as its `embed` job. Without it, `sync` returns fully embedded."""

    def __init__(
        self,
        agent: AgentConfig,
        embedder: Embedder | None = None,
        *,
        use_sqlite_vec: bool = True,
        owner: dict[str, Any] | None = None,
        embed_later: bool = False,
    ) -> None:
        self.agent = agent
        self.embed_later = embed_later
        self._owner_lock = OwnerLock(index_lock_path(agent.store), f"the index {agent.store}", **(owner or {}))
        try:
            self._open(embedder, use_sqlite_vec)
        except BaseException:
            self._owner_lock.release()
            raise

    def _open(self, embedder: Embedder | None, use_sqlite_vec: bool) -> None:
        agent = self.agent
        if embedder is None:
            embedder, self.embedder_reason = create_embedder(agent)
        else:
            self.embedder_reason = None
        self.embedder = embedder
        self.gate = SwapGate()
        self._sync_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.journal = EntryJournal(agent, self._write_lock, self._restored)
        self.last_sync: SyncReport | None = None
        self._last_active = time.monotonic()  # the last search or sync
        self._caches_released = False
        self.backend: Backend[Any] = open_backend(agent, use_sqlite_vec=use_sqlite_vec)
        self._bind()
        self.edits = Editing(
            agent,
            lambda text: self.syncer.redact(text),
            lambda: self.store,
            self._write_lock,
            lambda: self.journal,  # read at each use: a test may give the memory a journal of its own
            lambda target, force: self._index_written(target.real, target.path, target.transcript, force),
            lambda query, limit: self.search(query, max_results=limit).results,
            self.get,
        )

    def _bind(self) -> None:
        """Sync and search over the backend's current store (a new one after healing or a swap)."""
        self.store = self.backend.store
        self.vectors = self.backend.vectors
        self.syncer = Syncer(self.store, self.agent, self.embedder, embed_inline=not self.embed_later)
        self.engine = SearchEngine(self.store, self.agent.query, self.vectors, self._vector_state)

    @property
    def role(self) -> str:
        """writer; standby (another daemon writes the shared store); reader (this role may only read it)."""
        return self.backend.role

    def lead(self) -> bool:
        """Take over writing a shared store when its writer is gone; True when this daemon (now) writes it."""
        with self._sync_lock:
            return self.backend.lead()

    def heal(self, why: BaseException | str) -> None:
        """Replace an unreadable, deleted or swapped index by a new one; the next sync fills it."""
        with self.gate.exclusive():
            self.backend.heal(why)
            self._bind()

    def close(self) -> None:
        try:
            self.journal.close()
            with self.gate.exclusive():
                if self.embedder is not None:
                    self.embedder.close()
                self.backend.close()
        finally:
            self._owner_lock.release()

    def __enter__(self) -> AgentMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _vector_state(self) -> tuple[Embedder | None, str | None]:
        if self.embedder is None:
            return None, self.embedder_reason or "no embedding provider"
        stale = self.syncer.needs_reindex()
        if stale and not self.syncer.vectors_usable():
            return None, f"reindex needed: {stale}"
        if self.vectors.empty() and self.store.chunk_count() > 0:
            error = self.last_sync.embedding_error if self.last_sync else None
            return None, error or "no chunk has a vector yet"
        return self.embedder, None

    def needs_reindex(self) -> str | None:
        try:
            with self.gate.use():
                return self.syncer.needs_reindex()
        except CORRUPT:
            return None  # the next sync rebuilds the index anyway
        except StoreUnavailable:
            return None  # asked again once the store answers (its sync does)

    def file_count(self) -> int:
        try:
            with self.gate.use():
                return self.store.counts()["files"]
        except CORRUPT:
            return 0

    def cursor(self, path: str) -> tuple[int, int, int] | None:
        """Where incremental reading of a transcript stands (see Store.cursor)."""
        with self.gate.use():
            return self.store.cursor(path)

    def sync(self, *, force: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index in line with the files. An index found corrupt, deleted or replaced is rebuilt."""
        return self._synced(lambda: self.syncer.sync(force=force, progress=progress), progress)

    def sync_paths(self, paths: Iterable[Path], progress: Progress | None = None) -> SyncReport:
        """Sync only these Markdown paths (what a watcher reported), without walking the workspace."""
        return self._synced(lambda: self.syncer.sync_paths(paths, progress), progress)

    def embed_pending(self, keep_going: Callable[[], bool] = lambda: True) -> SyncReport:
        """Embed chunks stored without vectors, a group at a time while `keep_going()`. Syncs and writes run
        beside it; an index swap waits for the group being embedded at most."""
        report, started = SyncReport(), time.perf_counter()
        if self.role != "writer":
            return report  # the namespace's writer embeds what it stored
        while keep_going():
            try:
                with self.gate.use():
                    if not self.syncer.embed_group(report):
                        break
            except CORRUPT:
                break  # the next sync sets the index aside and rebuilds it
        report.seconds = time.perf_counter() - started
        return report

    def _vectors_waiting(self, counts: dict[str, int]) -> int:
        """Chunks stored without a vector that the embedder could give one (the caller holds the gate)."""
        if self.embedder is None or not self.syncer.vectors_usable():
            return 0
        return counts["chunks"] - counts["embedded_chunks"]

    def _synced(self, run: Callable[[], SyncReport], progress: Progress | None) -> SyncReport:
        """Run a sync; when the index turns out corrupt, set it aside and fill a new one from every file. A
        standby (another daemon writes the shared store) syncs nothing."""
        with self._sync_lock:
            if not self.backend.lead():
                self.last_sync = SyncReport()
                return self.last_sync
            if damage := self.backend.damage():
                self.heal(damage)
            try:
                with self.gate.use():
                    self.last_sync = run()
            except CORRUPT as exc:
                self.heal(exc)
                with self.gate.use():
                    self.last_sync = self.syncer.sync(force=True, progress=progress)
            self._active()
            return self.last_sync

    def reindex(self, progress: Progress | None = None) -> SyncReport:
        """Rebuild the whole index beside the live one while it keeps serving, then swap it in."""

        def fill(store: MemoryStore) -> SyncReport:
            return Syncer(store, self.agent, self.embedder).sync(force=True, progress=progress)

        if not self.lead():
            raise StoreUnavailable("another daemon writes this store; reindex there")
        staged, report = self.backend.build(fill)
        try:
            with self._sync_lock, self.gate.exclusive():
                try:
                    self.backend.swap(staged)
                finally:
                    self._bind()
        finally:
            self.backend.discard(staged)
        self.last_sync = report
        return report

    def search(self, query: str, **options: Any) -> SearchResponse:
        """Hybrid search with the protocol's options (memoryd_client.protocol.schema.Search), checked here."""
        return self._answer(lambda: self.engine.search(query, **options), options.get("mode", "hybrid"))

    def run_search(self, request: Search) -> SearchResponse:
        """A search the daemon already checked against the schema."""
        return self._answer(lambda: self.engine.run(request), request.mode)

    def _answer(self, run: Callable[[], SearchResponse], mode: str) -> SearchResponse:
        """While chunks still wait for their vectors, the response says so (`partial`, `embedded` as "n/m")."""
        self._active()
        try:
            with self.gate.use():
                try:
                    response = run()
                except NotGranted:
                    raise
                except StoreUnavailable:  # a connection the server dropped is found dead only on use
                    response = run()
                if mode != "keyword" and self.embedder is not None:
                    counts = self.store.row_counts()
                    if self._vectors_waiting(counts):
                        response.partial = True
                        response.embedded = f"{counts['embedded_chunks']}/{counts['chunks']}"
                return response
        except CORRUPT as exc:
            raise IndexUnreadable(f"the index is corrupt ({exc}); it is being rebuilt from the sources") from exc

    def _active(self) -> None:
        self._last_active = time.monotonic()
        self._caches_released = False

    def release_idle_caches(self, idle_seconds: float) -> bool:
        """Hand back SQLite's page caches once no search or sync has run for `idle_seconds` (once per idle
        spell; the next search reads its pages from the OS's file cache). Returns whether it did."""
        if self._caches_released or time.monotonic() - self._last_active < idle_seconds:
            return False
        self._caches_released = True
        self.store.release_memory()
        return True

    def get(self, path: str, from_line: int = 1, lines: int | None = None) -> dict[str, Any]:
        """Lines from..from+lines-1 (1-based) of a file inside the agent's sources (see notes.read_lines); where
        another daemon writes the shared store, a note this host has no copy of is read from the index."""
        try:
            return self.edits.masked(read_lines(self.agent, self.syncer.redact, path, from_line, lines))
        except RequestError:
            if self.role == "writer" or not (found := indexed_lines(self.store, path, from_line, lines)):
                raise
            return found

    def notes(self, path: str | None = None, day: str | None = None, limit: int = 500) -> dict[str, Any]:
        """What memory holds, file by file (see catalog.list_notes)."""
        with self.gate.use():
            return {"agent": self.agent.id, **list_notes(self.store, path, day, limit)}

    def write(
        self,
        text: str,
        path: str | None = None,
        kind: str | None = None,
        importance: float | None = None,
        *,
        supersedes: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Append text to a Markdown note under memory/, fsync it, index it, and return its citation (or, when
        memory holds it already, that one's as `duplicate_of`). A memory type or importance is kept with the entry
        as `<!-- type: ..., importance: ... -->`; `supersedes` marks an older statement as replaced by it."""
        return self.edits.write(text, path, kind, importance, supersedes, force)

    def _restored(self, target: Path) -> None:
        self._index_written(target.resolve(), display_path(target.resolve(), real_workspace(self.agent)))

    def _index_written(self, real: Path, rel: str, transcript: bool = False, force: bool = False) -> str | None:
        """Index the note a `write` touched, alone, so that the answer waits for nothing else. A full sync that
        runs meanwhile skips the file if it read it before this write (see Syncer._write). The note is saved
        whatever happens here, so a failure is returned (the answer says: saved, not yet searchable), never
        raised: a client that retried a failed-looking write would append it twice."""
        try:
            with self._write_lock, self.gate.use():
                source = SourceFile(rel, real, "sessions" if transcript else "memory")
                report = self.syncer.sync_file(source, force=force)
        except CORRUPT:
            return "the index is corrupt; it is rebuilt from the notes, this one included"
        except FULL:
            return "the disk holding the index is full; the note is saved and is indexed once there is room"
        except StoreUnavailable as exc:
            why = unwritten_here(self.role, self.backend.healthy)
            return why or f"saved; indexed when the store can be written again ({exc})"
        except (*FAILED, OSError, EmbeddingError) as exc:  # type: ignore[misc]  # mypy misreads *FAILED (mypy#21092)
            log.exception("written note not indexed", path=rel)
            return f"not indexed yet ({type(exc).__name__}: {exc}); the next sync retries"
        if report.skipped:
            log.warning("written note not indexed", path=rel, reason=report.skipped[rel])
            return f"not indexed yet: {report.skipped[rel]}"
        return None

    def status(self) -> dict[str, Any]:
        """Counts, provider, store and health of this agent's memory."""
        try:
            with self.gate.use():
                return self._status()
        except StoreUnavailable as exc:
            return {**self._identity(), "index_error": f"store_unavailable: {exc}", **self._memory_use()}
        except CORRUPT as exc:
            why = f"{type(exc).__name__}: {exc}; the next sync rebuilds it"
            return {**self._identity(), "index_error": why, "index_healed": self.backend.healed, **self._memory_use()}

    def _identity(self) -> dict[str, Any]:
        return {"agent": self.agent.id, "workspace": str(self.agent.workspace), **self.backend.status()}

    def _memory_use(self) -> dict[str, Any]:
        return {
            "vector_matrix_mb": round(self.vectors.nbytes / 2**20, 3),
            "sqlite_cache_mb": round(self.store.cache_bytes() / 2**20, 1),
            "model_loaded": self.embedder is not None and self.embedder.loaded,
            "time": time.time(),
        }

    def _model_terms(self) -> dict[str, Any]:
        """The active model's prompts (and where they come from) and licence."""
        if self.embedder is None:
            return {"prompts": None, "licence": None}
        active = self.embedder.current
        query, document = active.prompts
        return {
            "prompts": {"query": query, "document": document, "from": active.prompts_from or "none"},
            "licence": active.licence or None,
        }

    def _status(self) -> dict[str, Any]:
        counts = self.store.counts()
        embedder, reason = self._vector_state()
        last = self.store.get_meta("last_sync")
        fallbacks = (self.embedder.fallback_reason if self.embedder else None, reason, self.embedder_reason)
        return {
            **self._identity(),
            **counts,
            "embedding": {"waiting": self._vectors_waiting(counts)},
            "provider": self.embedder.provider if self.embedder else None,
            "model": self.embedder.model if self.embedder else None,
            **self._model_terms(),
            "dims": self.store.dims or (self.embedder.dims if self.embedder else 0),
            "vector_available": embedder is not None,
            "vector_backend": self.store.vector_backend or None,
            "fts_available": self.store.fts_available,
            "languages": self.vectors.languages(),
            "keyword_ranking_reason": self.store.ranking_error,
            "fallback_reason": "; ".join(dict.fromkeys(r for r in fallbacks if r)) or None,
            "needs_reindex": self.syncer.needs_reindex(),
            "batch_api_error": self.embedder.current.last_batch_error if self.embedder else None,
            "last_sync": float(last) if last else None,
            "last_sync_report": self.last_sync.as_dict() if self.last_sync else None,
            "skipped_files": dict(self.last_sync.skipped) if self.last_sync else {},
            "index_healed": self.backend.healed,
            **self._memory_use(),
            "skipped_lines": {path: str(errors) for path, errors in self.syncer.skipped_lines.items()},
        }
