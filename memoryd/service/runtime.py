"""One agent inside the daemon: coalesced background syncs, debounced file events, atomic reindex jobs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import structlog

from memoryd.config import AgentConfig, Config
from memoryd.index.batch import DiskFull, SyncReport
from memoryd.index.interface import StoreUnavailable
from memoryd.memory import AgentMemory
from memoryd.service.budgets import lower_this_thread
from memoryd.service.feed import Batch, ChangeFeed, Kind
from memoryd.service.jobs import STOPPED, Cancelled, JobProgress, Stopping
from memoryd.service.lane import EmbeddingLane
from memoryd.service.shared import watch_shared_store
from memoryd.sources.discovery import display_path, real_workspace
from memoryd.sources.transcripts import grown_since

log = structlog.get_logger("memoryd.runtime")


MAX_TARGETED_PATHS = 256  # more changed files than this at once: one walk is cheaper


class AgentRuntime:
    """Runs at most one sync at a time for its agent; requests made during a sync cause exactly one more."""

    def __init__(self, agent: AgentConfig, config: Config) -> None:
        self.agent = agent
        self.config = config
        self.memory = AgentMemory(agent, owner={"socket": str(config.socket)}, embed_later=True)
        self.dirty = False
        self.watcher_source: Callable[[], str] | None = None  # asked at each `status`, so it is never stale
        self.sync_progress: JobProgress | None = None
        self.reindex_progress: JobProgress | None = None
        self.sync_error: str | None = None
        self.sync_runs = 0
        self._cond = threading.Condition()
        self._requested = 0
        self._completed = 0
        self._force_pending = False
        self._full_pending = True  # the first sync walks everything
        self._changed: set[Path] = set()  # Markdown paths the watchers reported since the last sync
        self._running = False
        self._reindexing = False  # a reindex runs or is about to: syncs wait for it
        self._stopping = False
        self.feed = ChangeFeed(self._changes_settled, self._debounce_of, self._urgent, name=f"changes-{agent.id}")
        self._reindex_thread: threading.Thread | None = None
        self.lane = EmbeddingLane(
            self.memory,
            self._cond,
            paused=lambda: self._reindexing,
            stopping=lambda: self._stopping,
            after=self._reindex_if_stale,  # a provider that fell back mid-life changed the vector space
            nice=config.index_nice,
            name=f"embed-{agent.id}",
        )
        self._worker = threading.Thread(target=self._loop, name=f"sync-{agent.id}", daemon=True)
        self._worker.start()
        self.unindexed = False  # a write that the store could not take: a sync follows once it can
        if agent.postgres is not None:
            threading.Thread(target=watch_shared_store, args=(self,), name=f"store-{agent.id}", daemon=True).start()

    def _reindex_if_stale(self) -> None:
        """Reindex on its own when the vector space changed, but never while the workspace is missing: the new
        index would hold none of its notes (the user may still ask for a reindex)."""
        try:
            stale = self.memory.needs_reindex()
        except (apsw.Error, StoreUnavailable):
            return
        if not stale or self._stopping:
            return
        if not self.agent.workspace.is_dir():
            log.warning("reindex needed, held until the workspace is back", agent=self.agent.id, reason=stale)
            return
        log.info("vector space changed, reindexing", agent=self.agent.id, reason=stale)
        self.start_reindex()

    # -- sync scheduling -----------------------------------------------------------------------------

    def request_sync(self, force: bool = False, *, full: bool = True) -> int:
        """Ask for a sync; returns a ticket that `wait_for` accepts. `full=False` asks only for the paths the
        watchers reported since the last sync (a full walk still runs when anything else was asked for)."""
        with self._cond:
            self._requested += 1
            self._force_pending = self._force_pending or force
            self._full_pending = self._full_pending or full
            self._cond.notify_all()
            return self._requested

    def wait_for(self, ticket: int, timeout: float | None = None) -> bool:
        """Wait until sync `ticket` is done (True), the timeout passes (False) or the daemon stops (Stopping)."""
        return self._wait_until(lambda: self._completed >= ticket, timeout, "the sync")

    def _wait_until(self, done: Callable[[], bool], timeout: float | None, what: str) -> bool:
        """Wait on the runtime's condition until `done()` (True) or the timeout (False); Stopping on shutdown."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not done():
                if self._stopping:
                    raise Stopping(f"memoryd is stopping; {what} was not finished")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def sync_now(
        self, force: bool = False, timeout: float | None = None, *, vectors: bool = True
    ) -> tuple[SyncReport | None, bool]:
        """Request a sync and wait for it (and, with `vectors`, for the embedding lane to add the vectors it left);
        returns the last report and whether all of that finished within the timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ticket = self.request_sync(force)
        finished = self.wait_for(ticket, timeout)
        if finished and vectors:
            finished = self.wait_embedded(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self.memory.last_sync, finished

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """Wait until the embedding lane has nothing left it can do (every vector added, or an embedding error);
        False when the timeout passed first. Raises Stopping on shutdown."""

        def idle() -> bool:
            return not (self.lane.wanted or self.lane.running or self._reindexing)

        return self._wait_until(idle, timeout, "the embedding")

    def _loop(self) -> None:
        """Syncs one after another. While a reindex runs none starts: the reindex reads every file anyway, and a
        sync follows it. A sync that gave way to a reindex leaves its requests open for that following sync."""
        lower_this_thread(self.config.index_nice)
        while True:
            with self._cond:
                while (self._requested <= self._completed or self._reindexing) and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                target, force = self._requested, self._force_pending
                targets, self._changed = self._changed, set()
                full = force or self._full_pending or not targets or len(targets) > MAX_TARGETED_PATHS
                self._force_pending = self._full_pending = False
                self._running = True
                self.dirty = False
            finished = self._run_sync(force, None if full else targets)
            with self._cond:
                self.sync_runs += 1
                self._running = False
                self.lane.request()
                if finished:
                    self._completed = target
                else:
                    self._force_pending = self._force_pending or force
                    self._full_pending = True
                self._cond.notify_all()

    def _run_sync(self, force: bool, targets: set[Path] | None = None) -> bool:
        """One sync (of `targets` alone when given); False when it gave way to a reindex before it finished."""
        progress = JobProgress("forced sync" if force else "sync" if targets is None else "sync of changed files")
        self.sync_progress = progress
        tracker = self._tracker(progress, yields_to_reindex=True)
        try:
            if targets is not None:
                report = self.memory.sync_paths(targets, progress=tracker)
            else:
                if self.memory.file_count() == 0:
                    progress.kind = "first index"
                report = self.memory.sync(force=force, progress=tracker)
            progress.state = "done"
            self.sync_error = None
            if report.files_indexed or report.files_deleted:
                log.info(
                    "synced",
                    agent=self.agent.id,
                    indexed=report.files_indexed,
                    deleted=report.files_deleted,
                    embedded=report.embedded,
                    windows_embedded=report.windows_embedded,
                    seconds=round(report.seconds, 3),
                )
            if report.embedding_error:
                log.warning("embedding failed, keyword-only", agent=self.agent.id, error=report.embedding_error)
            self._reindex_if_stale()
        except STOPPED:
            progress.state = "cancelled"
            if self._reindexing and not self._stopping:
                progress.state = "deferred to the reindex"
                return False
        except (DiskFull, apsw.FullError) as exc:
            progress.state, progress.error = "failed", str(exc)
            self.sync_error = f"disk full, indexing paused: {exc}"
            log.warning("disk full, indexing paused; searches go on", agent=self.agent.id, store=str(self.agent.store))
        except Exception as exc:  # a sync failure must not kill the worker; status reports it
            progress.state, progress.error = "failed", str(exc)
            self.sync_error = str(exc)
            log.exception("sync failed", agent=self.agent.id)
        finally:
            progress.finished_at = time.time()
        return True

    def _tracker(self, progress: JobProgress, yields_to_reindex: bool = False) -> Callable[[int, int], None]:
        """Progress into `status`, a log line every few seconds for long jobs, and cancellation on stop (and, for
        a sync, when a reindex starts: what it embedded so far is in the cache the reindex starts from)."""
        last = [time.monotonic()]

        def update(done: int, total: int) -> None:
            if self._stopping or (yields_to_reindex and self._reindexing):
                raise Cancelled
            progress.update(done, total)
            now = time.monotonic()
            if now - last[0] >= 3.0 and done < total:
                last[0] = now
                eta = progress.as_dict()["eta_s"]
                log.info(progress.kind, agent=self.agent.id, done=done, total=total, eta_s=eta)

        return update

    # -- file events ---------------------------------------------------------------------------------

    def file_changed(self, path: str, kind: Kind) -> None:
        """A watcher saw a change: it joins the change feed's next batch."""
        self.dirty = True
        self.feed.add(path, kind)

    def _debounce_of(self, kind: Kind) -> float:
        return self.config.session_debounce_seconds if kind == "transcript" else self.config.debounce_seconds

    def _urgent(self, path: str, kind: Kind) -> bool:
        """A transcript syncs at once when enough has been appended (bytes or messages) since it was read."""
        return kind == "transcript" and self._transcript_due(Path(path))

    def _changes_settled(self, batch: Batch) -> None:
        """A batch from the feed: its notes and transcripts are synced alone, a folder by a walk."""
        with self._cond:
            for path, kind in batch.items():
                if kind == "folder":
                    self._full_pending = True
                else:
                    self._changed.add(Path(path))
            self.dirty = True
        self.request_sync(full=False)

    def _transcript_due(self, path: Path) -> bool:
        """Has a transcript grown by session_sync_bytes or session_sync_messages since it was last read?"""
        try:
            real = path.resolve()
            cursor = self.memory.cursor(display_path(real, real_workspace(self.agent)))
            return grown_since(real, cursor, self.config.session_sync_bytes, self.config.session_sync_messages)
        except (OSError, apsw.Error, StoreUnavailable):
            return False

    def sync_if_dirty(self, timeout: float = 5.0) -> None:
        """Before a search: when files changed and nothing is syncing, bring the index up to date first; wait
        for the daemon's first sync too, or a search right after start finds none of the notes it is reading."""
        if self.config.sync_on_search and self._completed == 0 and self._requested > 0 and not self._reindexing:
            self.wait_for(1, timeout)
            return
        dirty = self.dirty or self.feed.pending
        if dirty and not self._running and not self._reindexing and self.config.sync_on_search:
            self.feed.flush()
            self.wait_for(self.request_sync(full=False), timeout)

    # -- reindex -------------------------------------------------------------------------------------

    def start_reindex(self) -> bool:
        """Start an atomic full reindex in the background; False when one is already running. A running sync
        stops at its next file, so that the two never embed the same text side by side."""
        with self._cond:
            if self._reindex_thread is not None and self._reindex_thread.is_alive():
                return False
            self._reindexing = True
            self._cond.notify_all()
            self.reindex_progress = JobProgress("reindex")
            self._reindex_thread = threading.Thread(target=self._reindex, name=f"reindex-{self.agent.id}", daemon=True)
            self._reindex_thread.start()
            return True

    def wait_reindex(self, timeout: float | None = None) -> bool:
        """Wait for the running reindex; False when the timeout passed first. Raises Stopping on shutdown."""
        thread = self._reindex_thread
        deadline = None if timeout is None else time.monotonic() + timeout
        while thread is not None and thread.is_alive():
            if self._stopping:
                raise Stopping("memoryd is stopping; the reindex was abandoned and the live index kept")
            remaining = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if remaining <= 0:
                return False
            thread.join(remaining)
        if self._stopping and self.reindex_progress is not None and self.reindex_progress.state == "cancelled":
            raise Stopping("memoryd is stopping; the reindex was abandoned and the live index kept")
        return True

    def _reindex(self) -> None:
        progress = self.reindex_progress
        assert progress is not None
        lower_this_thread(self.config.index_nice)
        log.info("reindex started", agent=self.agent.id)
        try:
            with self._cond:
                while self._running and not self._stopping:  # the sync gives way at its next file
                    self._cond.wait(0.5)
            report = self.memory.reindex(progress=self._tracker(progress))
            progress.state = "done"
            log.info(
                "reindex done",
                agent=self.agent.id,
                files=report.files_seen,
                embedded=report.embedded,
                windows_embedded=report.windows_embedded,
                cached=report.cache_hits,
                seconds=round(report.seconds, 2),
            )
        except STOPPED:
            progress.state = "cancelled"
            log.info("reindex cancelled; live index kept", agent=self.agent.id)
            return
        except Exception as exc:  # the live index is untouched; report and go on serving
            progress.state, progress.error = "failed", str(exc)
            log.exception("reindex failed; live index kept", agent=self.agent.id)
        finally:
            progress.finished_at = time.time()
            with self._cond:
                self._reindexing = False
                self.lane.request()
                self._cond.notify_all()
        self.request_sync()

    # -- state ---------------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        status = self.memory.status()
        with self._cond:  # a sync asked for but not yet begun (its thread runs at index_nice) is pending work too
            pending = self._requested > self._completed and not self._running
        waiting = status.get("embedding", {}).get("waiting", 0)  # none counted while the index is being rebuilt
        status.update(
            {
                "embedding": {
                    "waiting": waiting,
                    "running": self.lane.running,
                    "paused": "for the reindex" if self._reindexing and waiting else None,
                    "error": self.lane.error,
                },
                "dirty": self.dirty or pending or self.feed.pending,
                "syncing": self._running,
                "sync_runs": self.sync_runs,
                "sync_progress": self.sync_progress.as_dict() if self.sync_progress else None,
                "sync_error": self.sync_error,
                "reindex": self.reindex_progress.as_dict() if self.reindex_progress else None,
                "watcher": self.watcher_state,
            }
        )
        return status

    def begin_stop(self) -> None:
        """Tell every job and waiter to stop now: waiting clients get an error, the model stops between inputs."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self.feed.close()
        if self.memory.embedder is not None:
            self.memory.embedder.interrupt()

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def busy(self) -> bool:
        """A sync, a reindex or the embedding lane is running."""
        return self._running or self._reindexing or self.lane.running

    def write(self, text: str, path: str | None, kind: str | None, importance: float | None) -> dict[str, Any]:
        """Append to a note; it is keyword-searchable when this returns, and its vectors follow on the lane."""
        result = self.memory.write(text, path, kind=kind, importance=importance)
        if not result["indexed"]:
            self.unindexed = True
        self.lane.request()
        return result

    @property
    def watcher_state(self) -> str:
        return self.watcher_source() if self.watcher_source is not None else "not watched"

    def close(self, timeout: float = 3.0) -> None:
        self.begin_stop()
        deadline = time.monotonic() + timeout
        threads = [self._worker, self.lane.thread, *([self._reindex_thread] if self._reindex_thread else [])]
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            log.warning("a job did not stop in time; closing anyway", agent=self.agent.id)
            return  # its threads are daemons: the process exits without closing the store under them
        self.memory.close()
