"""Long jobs (first index, syncs, reindexes): their progress as `status` shows it, and how they end on a stop."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from memoryd.embeddings.base import Interrupted


@dataclass
class JobProgress:
    """Progress of a long job (first index, forced sync, reindex), as `status` shows it."""

    kind: str
    state: str = "running"  # running, done, failed, cancelled
    done: int = 0
    total: int = 0
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    error: str | None = None

    def update(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def as_dict(self) -> dict[str, Any]:
        elapsed = (self.finished_at or time.time()) - self.started_at
        eta = None
        if self.state == "running" and self.done and self.total:
            eta = round(elapsed / self.done * (self.total - self.done), 1)
        return {
            "kind": self.kind,
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "elapsed_s": round(elapsed, 1),
            "eta_s": eta,
            "error": self.error,
        }


class Cancelled(Exception):
    """The daemon is stopping; long work stops at the next file."""


class Stopping(RuntimeError):
    """The daemon began to stop while a client waited for a job."""


STOPPED = (Cancelled, Interrupted)  # how long work ends when the daemon stops
