"""The embedding lane: one thread per agent that adds the vectors syncs and writes left out, so that neither ever
waits for the embedder. It shares its agent runtime's condition: it gives way to a reindex (which embeds
everything into the new index) and stops with the daemon."""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from memoryd.memory import AgentMemory
from memoryd.service.budgets import lower_this_thread
from memoryd.service.jobs import STOPPED

log = structlog.get_logger("memoryd.lane")


class EmbeddingLane:
    def __init__(
        self,
        memory: AgentMemory,
        cond: threading.Condition,
        *,
        paused: Callable[[], bool],
        stopping: Callable[[], bool],
        after: Callable[[], None],
        nice: int,
        name: str,
    ) -> None:
        self.memory = memory
        self._cond = cond
        self._paused, self._stopping, self._after, self._nice = paused, stopping, after, nice
        self.wanted = True  # chunks may wait for vectors from an earlier run; set under `cond`
        self.running = False
        self.error: str | None = None
        self._log = log.bind(lane=name)
        self.thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self.thread.start()

    def request(self) -> None:
        """Chunks were stored without vectors: embed them (at once, or after the running reindex). The caller may
        hold the shared condition: it is re-entrant."""
        with self._cond:
            self.wanted = True
            self._cond.notify_all()

    def _loop(self) -> None:
        lower_this_thread(self._nice)
        while True:
            with self._cond:
                while (not self.wanted or self._paused()) and not self._stopping():
                    self._cond.wait()
                if self._stopping():
                    return
                self.wanted = False
                self.running = True
            try:
                report = self.memory.embed_pending(lambda: not (self._stopping() or self._paused()))
                self.error = report.embedding_error
                if report.embedded:
                    self._log.info(
                        "embedded",
                        chunks=report.embedded,
                        windows=report.windows_embedded,
                        seconds=round(report.seconds, 2),
                    )
            except STOPPED:
                pass
            except Exception as exc:  # the lane must outlive any failure; status reports it, the next request retries
                self.error = f"{type(exc).__name__}: {exc}"
                self._log.exception("embedding failed")
            finally:
                self._after()
                with self._cond:
                    self.running = False
                    self._cond.notify_all()
