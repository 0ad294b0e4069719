"""The jobs an agent's scheduler runs (memoryd.daemon.runtime), each on a thread of its own over the agent's shared
state (memoryd.daemon.state): `sync` reads changed files into the store, `embed` adds the vectors syncs and writes
left out, `reindex` rebuilds the store beside the live one, and `watch` follows who writes a store that other
daemons share. Syncs never run beside a reindex; the embedding gives way to it; all stop with the daemon."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from memoryd.config import AgentConfig, Config
from memoryd.daemon.budgets import lower_this_thread
from memoryd.daemon.progress import STOPPED, Cancelled, JobProgress, Stopping
from memoryd.daemon.state import AgentState
from memoryd.memory import AgentMemory
from memoryd.store.errors import FAILED, FULL, StoreUnavailable

AUTO_RETRY_SECONDS = 60.0  # a reindex that failed is not started again on its own sooner
log = structlog.get_logger("memoryd.runtime")

MAX_TARGETED_PATHS = 256  # more changed files than this at once: one walk is cheaper
WATCH_SECONDS = 1.0  # how often a standby tries to take over, and the writer checks that its hold still stands


class Job:
    """One thread running `run` until the agent stops."""

    name = "job"

    def __init__(self, memory: AgentMemory, state: AgentState, config: Config) -> None:
        self.memory, self.state, self.config = memory, state, config
        self.agent: AgentConfig = memory.agent
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name=f"{self.name}-{self.agent.id}", daemon=True)
        self.thread.start()

    def run(self) -> None:
        raise NotImplementedError

    def work_waits(self, ready: Callable[[], bool]) -> bool:
        """Wait, holding the state's condition, until `ready()` or the agent stops; False when it stopped."""
        state = self.state
        while not ready() and not state.stopping:
            state.cond.wait()
        return not state.stopping

    def tracker(self, progress: JobProgress, yields_to_reindex: bool = False) -> Callable[[int, int], None]:
        """Progress into `status`, a log line every few seconds for long jobs, and cancellation on stop (and, for
        a sync, when a reindex starts: what it embedded so far is in the cache the reindex starts from)."""
        last = [time.monotonic()]
        state = self.state

        def update(done: int, total: int) -> None:
            if state.stopping or (yields_to_reindex and state.reindexing):
                raise Cancelled
            progress.update(done, total)
            now = time.monotonic()
            if now - last[0] >= 3.0 and done < total:
                last[0] = now
                eta = progress.as_dict()["eta_s"]
                log.info(progress.kind, agent=self.agent.id, done=done, total=total, eta_s=eta)

        return update


class ReindexJob(Job):
    """An atomic full reindex, on its own thread while it runs; the live index serves until the new one is in."""

    name = "reindex"
    _retry_after = 0.0  # monotonic time before which no reindex starts on its own (after one failed)
    _held: tuple[str, str] | None = None  # the stale reason and why it waits, as last logged

    def start(self) -> None:
        """Use `begin`: a reindex starts on request, not with the agent."""

    def begin(self) -> bool:
        """Start a reindex; False when one is already running. A running sync stops at its next file, so that the
        two never embed the same text side by side."""
        state = self.state
        with state.cond:
            if self.thread is not None and self.thread.is_alive():
                return False
            state.reindexing = True
            state.cond.notify_all()
            state.reindex_progress = JobProgress("reindex")
            super().start()
            return True

    def begin_if_stale(self) -> bool:
        """Reindex on its own when the vector space changed, but never while the workspace is missing (the new
        index would hold none of its notes), where another daemon writes the store (only its writer may rebuild
        it: this one searches by keyword meanwhile), nor again within AUTO_RETRY_SECONDS of a reindex that
        failed. The user may still ask for one. Whether one started."""
        try:
            stale = self.memory.needs_reindex()
        except (*FAILED, StoreUnavailable):  # type: ignore[misc]  # mypy misreads *FAILED (mypy#21092)
            return False
        if not stale or self.state.stopping or time.monotonic() < self._retry_after:
            return False
        held = None
        if not self.agent.workspace.is_dir():
            held = "held until the workspace is back"
        elif self.memory.role != "writer":
            held = f"held: this daemon is a {self.memory.role}, and only the store's writer rebuilds it"
        if held:
            if (stale, held) != self._held:
                self._held = (stale, held)
                log.warning(f"reindex needed, {held}", agent=self.agent.id, reason=stale)
            return False
        self._held = None
        log.info("index out of date, reindexing", agent=self.agent.id, reason=stale)
        return self.begin()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running reindex; False when the timeout passed first. Raises Stopping on shutdown."""
        thread, state = self.thread, self.state
        deadline = None if timeout is None else time.monotonic() + timeout
        while thread is not None and thread.is_alive():
            if state.stopping:
                raise Stopping("memoryd is stopping; the reindex was abandoned and the live index kept")
            remaining = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if remaining <= 0:
                return False
            thread.join(remaining)
        progress = state.reindex_progress
        if state.stopping and progress is not None and progress.state == "cancelled":
            raise Stopping("memoryd is stopping; the reindex was abandoned and the live index kept")
        return True

    def run(self) -> None:
        state = self.state
        progress = state.reindex_progress
        assert progress is not None
        lower_this_thread(self.config.index_nice)
        log.info("reindex started", agent=self.agent.id)
        try:
            with state.cond:
                while state.syncing and not state.stopping:  # the sync gives way at its next file
                    state.cond.wait(0.5)
            report = self.memory.reindex(progress=self.tracker(progress))
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
            self._retry_after = time.monotonic() + AUTO_RETRY_SECONDS
            log.exception("reindex failed; live index kept", agent=self.agent.id)
        finally:
            progress.finished_at = time.time()
            with state.cond:
                state.reindexing = False
                state.embed_wanted = True
                state.cond.notify_all()
        state.request_sync()


class SyncJob(Job):
    """Syncs one after another: requests made during a sync cause exactly one more. While a reindex runs none
    starts (the reindex reads every file anyway, and a sync follows it); a sync that gave way to a reindex leaves
    its requests open for that following sync."""

    name = "sync"

    def __init__(self, memory: AgentMemory, state: AgentState, config: Config, reindex: ReindexJob) -> None:
        super().__init__(memory, state, config)
        self.reindex = reindex

    def run(self) -> None:
        lower_this_thread(self.config.index_nice)
        state = self.state
        while True:
            with state.cond:
                if not self.work_waits(lambda: state.requested > state.completed and not state.reindexing):
                    return
                target, force = state.requested, state.force_pending
                targets, state.changed = state.changed, set()
                full = force or state.full_pending or not targets or len(targets) > MAX_TARGETED_PATHS
                state.force_pending = state.full_pending = False
                state.syncing = True
                state.dirty = False
            finished = self._sync(force, None if full else targets)
            with state.cond:
                state.sync_runs += 1
                state.syncing = False
                state.embed_wanted = True
                if finished:
                    state.completed = target
                else:
                    state.force_pending = state.force_pending or force
                    state.full_pending = True
                state.cond.notify_all()

    def _sync(self, force: bool, targets: set[Path] | None = None) -> bool:
        """One sync (of `targets` alone when given); False when it gave way to a reindex before it finished."""
        state = self.state
        progress = JobProgress("forced sync" if force else "sync" if targets is None else "sync of changed files")
        state.sync_progress = progress
        tracker = self.tracker(progress, yields_to_reindex=True)
        try:
            if targets is not None:
                report = self.memory.sync_paths(targets, progress=tracker)
            else:
                if self.memory.file_count() == 0:
                    progress.kind = "first index"
                report = self.memory.sync(force=force, progress=tracker)
            progress.state = "done"
            state.sync_error = None
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
            self.reindex.begin_if_stale()
        except STOPPED:
            progress.state = "cancelled"
            if state.reindexing and not state.stopping:
                progress.state = "deferred to the reindex"
                return False
        except FULL as exc:
            progress.state, progress.error = "failed", str(exc)
            state.sync_error = f"disk full, indexing paused: {exc}"
            log.warning("disk full, indexing paused; searches go on", agent=self.agent.id, store=str(self.agent.store))
        except Exception as exc:  # a sync failure must not kill the job; status reports it
            progress.state, progress.error = "failed", str(exc)
            state.sync_error = str(exc)
            log.exception("sync failed", agent=self.agent.id)
        finally:
            progress.finished_at = time.time()
        return True


class EmbedJob(Job):
    """Adds the vectors that syncs and writes left out, so that neither ever waits for the embedder. Gives way to
    a reindex (which embeds everything into the new index)."""

    name = "embed"

    def __init__(self, memory: AgentMemory, state: AgentState, config: Config, reindex: ReindexJob) -> None:
        super().__init__(memory, state, config)
        self.reindex = reindex

    def run(self) -> None:
        lower_this_thread(self.config.index_nice)
        state = self.state
        while True:
            with state.cond:
                if not self.work_waits(lambda: state.embed_wanted and not state.reindexing):
                    return
                state.embed_wanted = False
                state.embedding = True
            try:
                report = self.memory.embed_pending(lambda: not (state.stopping or state.reindexing))
                state.embed_error = report.embedding_error
                if report.embedded:
                    log.info(
                        "embedded",
                        agent=self.agent.id,
                        chunks=report.embedded,
                        windows=report.windows_embedded,
                        seconds=round(report.seconds, 2),
                    )
            except STOPPED:
                pass
            except Exception as exc:  # the job must outlive any failure; status reports it, the next request retries
                state.embed_error = f"{type(exc).__name__}: {exc}"
                log.exception("embedding failed", agent=self.agent.id)
            finally:
                self.reindex.begin_if_stale()  # a provider that fell back mid-life changed the vector space
                with state.cond:
                    state.embedding = False
                    state.cond.notify_all()


class WatchJob(Job):
    """For a store that other daemons share: stand by until no other daemon writes it, then write it (a sync takes
    the workspace's changes since); after the server was away, sync what could not be written meanwhile."""

    name = "watch"

    def start(self) -> None:
        if self.memory.backend.watched:
            super().start()

    def run(self) -> None:
        memory, state = self.memory, self.state
        while not state.stopping:
            time.sleep(WATCH_SECONDS)
            was = memory.role
            try:
                leading = memory.lead() and memory.backend.still_leads()
            except Exception:  # a watch that died would leave a standby standing by forever
                log.exception("store watch failed", agent=self.agent.id)
                continue
            if leading and was != "writer":
                log.info("took over writing the shared store", agent=self.agent.id)
                state.request_sync()
            elif leading and (state.sync_error or state.unindexed) and memory.backend.healthy:
                state.unindexed = False
                state.request_sync()
