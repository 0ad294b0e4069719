"""One agent inside the daemon: its memory and a scheduler of named jobs (sync, embed, reindex, watch) over one
shared state, fed by the watchers' debounced change sets."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from memoryd.config import AgentConfig, Config
from memoryd.daemon.jobs import EmbedJob, Job, ReindexJob, SyncJob, WatchJob
from memoryd.daemon.progress import JobProgress
from memoryd.daemon.state import AgentState
from memoryd.ingest.batch import SyncReport
from memoryd.ingest.feed import Batch, ChangeFeed, Kind
from memoryd.memory import AgentMemory
from memoryd.sources.discovery import display_path, real_workspace
from memoryd.sources.transcripts import grown_since
from memoryd.store.errors import FAILED, StoreUnavailable

log = structlog.get_logger("memoryd.runtime")


class AgentRuntime:
    """Runs at most one sync at a time for its agent; requests made during a sync cause exactly one more."""

    def __init__(self, agent: AgentConfig, config: Config) -> None:
        self.agent = agent
        self.config = config
        self.memory = AgentMemory(agent, owner={"socket": str(config.socket)}, embed_later=True)
        self.state = AgentState()
        self.watcher_source: Callable[[], str] | None = None  # asked at each `status`, so it is never stale
        self.feed = ChangeFeed(self._changes_settled, self._debounce_of, self._urgent, name=f"changes-{agent.id}")
        self.reindexer = ReindexJob(self.memory, self.state, config)
        self.jobs: dict[str, Job] = {
            job.name: job
            for job in (
                SyncJob(self.memory, self.state, config, self.reindexer),
                EmbedJob(self.memory, self.state, config, self.reindexer),
                self.reindexer,
                WatchJob(self.memory, self.state, config),
            )
        }
        for job in self.jobs.values():
            job.start()

    # -- syncs ---------------------------------------------------------------------------------------

    def request_sync(self, force: bool = False, *, full: bool = True) -> int:
        """Ask for a sync; returns a ticket that `wait_for` accepts (see AgentState.request_sync)."""
        return self.state.request_sync(force, full=full)

    def wait_for(self, ticket: int, timeout: float | None = None) -> bool:
        """Wait until sync `ticket` is done (True), the timeout passes (False) or the daemon stops (Stopping)."""
        return self.state.wait_until(lambda: self.state.completed >= ticket, timeout, "the sync")

    def sync_now(
        self, force: bool = False, timeout: float | None = None, *, vectors: bool = True
    ) -> tuple[SyncReport | None, bool]:
        """Request a sync and wait for it (and, with `vectors`, for the embedding to add the vectors it left);
        returns the last report and whether all of that finished within the timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ticket = self.request_sync(force)
        finished = self.wait_for(ticket, timeout)
        if finished and vectors:
            finished = self.wait_embedded(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self.memory.last_sync, finished

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """Wait until the embedding has nothing left it can do (every vector added, or an embedding error); False
        when the timeout passed first. Raises Stopping on shutdown."""
        state = self.state
        return state.wait_until(
            lambda: not (state.embed_wanted or state.embedding or state.reindexing), timeout, "the embedding"
        )

    def sync_if_dirty(self, timeout: float = 5.0) -> None:
        """Before a search: when files changed and nothing is syncing, bring the index up to date first; wait
        for the daemon's first sync too, or a search right after start finds none of the notes it is reading."""
        state = self.state
        if self.config.sync_on_search and state.completed == 0 and state.requested > 0 and not state.reindexing:
            self.wait_for(1, timeout)
            return
        dirty = state.dirty or self.feed.pending
        if dirty and not state.syncing and not state.reindexing and self.config.sync_on_search:
            self.feed.flush()
            self.wait_for(self.request_sync(full=False), timeout)

    # -- file events ---------------------------------------------------------------------------------

    def file_changed(self, path: str, kind: Kind) -> None:
        """A watcher saw a change: it joins the change feed's next batch."""
        self.state.dirty = True
        self.feed.add(path, kind)

    def _debounce_of(self, kind: Kind) -> float:
        return self.config.session_debounce_seconds if kind == "transcript" else self.config.debounce_seconds

    def _urgent(self, path: str, kind: Kind) -> bool:
        """A transcript syncs at once when enough has been appended (bytes or messages) since it was read."""
        return kind == "transcript" and self._transcript_due(Path(path))

    def _changes_settled(self, batch: Batch) -> None:
        """A batch from the feed: its notes and transcripts are synced alone, a folder by a walk."""
        notes = {Path(path) for path, kind in batch.items() if kind != "folder"}
        self.state.changes(notes, folders=len(notes) < len(batch))
        self.request_sync(full=False)

    def _transcript_due(self, path: Path) -> bool:
        """Has a transcript grown by session_sync_bytes or session_sync_messages since it was last read?"""
        try:
            real = path.resolve()
            cursor = self.memory.cursor(display_path(real, real_workspace(self.agent)))
            return grown_since(real, cursor, self.config.session_sync_bytes, self.config.session_sync_messages)
        except (OSError, *FAILED, StoreUnavailable):  # type: ignore[misc]  # mypy misreads *FAILED (mypy#21092)
            return False

    # -- reindex -------------------------------------------------------------------------------------

    def start_reindex(self) -> bool:
        """Start an atomic full reindex in the background; False when one is already running."""
        return self.reindexer.begin()

    def wait_reindex(self, timeout: float | None = None) -> bool:
        """Wait for the running reindex; False when the timeout passed first. Raises Stopping on shutdown."""
        return self.reindexer.wait(timeout)

    # -- writes and state ----------------------------------------------------------------------------

    def write(
        self,
        text: str,
        path: str | None,
        kind: str | None,
        importance: float | None,
        supersedes: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Append to a note; it is keyword-searchable when this returns, and its vectors follow from `embed`."""
        result = self.memory.write(text, path, kind=kind, importance=importance, supersedes=supersedes, force=force)
        return self.edited(result)

    def edited(self, result: dict[str, Any]) -> dict[str, Any]:
        """After a write or an edit: what could not be indexed yet is left to the next sync, and the new chunks'
        vectors to the embed job."""
        many = result.get("results")
        answers: list[dict[str, Any]] = many if isinstance(many, list) else [result]
        if any(a.get("indexed") is False for a in answers):
            self.state.unindexed = True
        self.state.request_embedding()
        return result

    @property
    def sync_progress(self) -> JobProgress | None:
        return self.state.sync_progress

    @property
    def reindex_progress(self) -> JobProgress | None:
        return self.state.reindex_progress

    @property
    def sync_error(self) -> str | None:
        return self.state.sync_error

    @property
    def unindexed(self) -> bool:
        return self.state.unindexed

    @property
    def stopping(self) -> bool:
        return self.state.stopping

    @property
    def busy(self) -> bool:
        """A sync, a reindex or the embedding is running."""
        return self.state.busy

    @property
    def watcher_state(self) -> str:
        return self.watcher_source() if self.watcher_source is not None else "not watched"

    def status(self) -> dict[str, Any]:
        status = self.memory.status()
        state = self.state
        waiting = status.get("embedding", {}).get("waiting", 0)  # none counted while the index is being rebuilt
        status.update(
            {
                "embedding": {
                    "waiting": waiting,
                    "running": state.embedding,
                    "paused": "for the reindex" if state.reindexing and waiting else None,
                    "error": state.embed_error,
                },
                "dirty": state.dirty or state.sync_pending or self.feed.pending,
                "syncing": state.syncing,
                "sync_runs": state.sync_runs,
                "sync_progress": state.sync_progress.as_dict() if state.sync_progress else None,
                "sync_error": state.sync_error,
                "reindex": state.reindex_progress.as_dict() if state.reindex_progress else None,
                "watcher": self.watcher_state,
            }
        )
        return status

    def begin_stop(self) -> None:
        """Tell every job and waiter to stop now: waiting clients get an error, the model stops between inputs."""
        self.state.stop()
        self.feed.close()
        if self.memory.embedder is not None:
            self.memory.embedder.interrupt()

    def close(self, timeout: float = 3.0) -> None:
        self.begin_stop()
        deadline = time.monotonic() + timeout
        threads = [job.thread for job in self.jobs.values() if job.thread is not None]
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            log.warning("a job did not stop in time; closing anyway", agent=self.agent.id)
            return  # its threads are daemons: the process exits without closing the store under them
        self.memory.close()
