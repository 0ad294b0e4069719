"""What the jobs of one agent share (memoryd.daemon.jobs): what was asked of them, what runs, and how the last run
went, under one condition that every job and waiting client uses."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from memoryd.daemon.progress import JobProgress, Stopping


class AgentState:
    def __init__(self) -> None:
        self.cond = threading.Condition()  # re-entrant: a job may ask for another while it holds it
        # syncs: tickets asked for and done; what the next one must do
        self.requested = 0
        self.completed = 0
        self.force_pending = False
        self.full_pending = True  # the first sync walks everything
        self.changed: set[Path] = set()  # Markdown paths the watchers reported since the last sync
        self.syncing = False
        self.sync_runs = 0
        self.sync_progress: JobProgress | None = None
        self.sync_error: str | None = None
        self.dirty = False  # files changed that no sync has read yet
        self.unindexed = False  # a write the store could not take: a sync follows once it can
        # the embedding job: chunks may wait for vectors from an earlier run
        self.embed_wanted = True
        self.embedding = False
        self.embed_error: str | None = None
        # a reindex runs or is about to: syncs and the embedding wait for it
        self.reindexing = False
        self.reindex_progress: JobProgress | None = None
        self.stopping = False

    def request_sync(self, force: bool = False, *, full: bool = True) -> int:
        """Ask for a sync; returns a ticket that `wait_until` can wait for. `full=False` asks only for the paths the
        watchers reported since the last sync (a full walk still runs when anything else was asked for)."""
        with self.cond:
            self.requested += 1
            self.force_pending = self.force_pending or force
            self.full_pending = self.full_pending or full
            self.cond.notify_all()
            return self.requested

    def request_embedding(self) -> None:
        """Chunks were stored without vectors: embed them (at once, or after the running reindex)."""
        with self.cond:
            self.embed_wanted = True
            self.cond.notify_all()

    def changes(self, notes: set[Path], folders: bool) -> None:
        """Files the watchers reported: these notes alone, or (a folder changed) a walk of everything."""
        with self.cond:
            self.changed |= notes
            self.full_pending = self.full_pending or folders
            self.dirty = True

    @property
    def sync_pending(self) -> bool:
        """A sync asked for and not yet begun (its thread may run at a low priority)."""
        with self.cond:
            return self.requested > self.completed and not self.syncing

    @property
    def busy(self) -> bool:
        """A sync, a reindex or the embedding runs."""
        return self.syncing or self.reindexing or self.embedding

    def wait_until(self, done: Callable[[], bool], timeout: float | None, what: str) -> bool:
        """Wait until `done()` (True) or the timeout (False); Stopping once the daemon stops."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.cond:
            while not done():
                if self.stopping:
                    raise Stopping(f"memoryd is stopping; {what} was not finished")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self.cond.wait(remaining)
            return True

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
