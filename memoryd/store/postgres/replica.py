"""Whether a search may read the replica now. A streaming replica replays the primary's commits a little after
they are made, and a daemon hears of a commit (NOTIFY, through the primary) before the replica has replayed it:
read there, a new note is missing, and what is read then is remembered as if it were current. A replica can also
be promoted (it answers, frozen, forever) or stop answering. So reads go to the replica only while it answers, is
still in recovery, and has replayed every commit this daemon has heard of; otherwise to the primary."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

CHECK_SECONDS = 1.0  # a replica that is caught up is asked again after this long (still a replica? still there?)
RETRY_SECONDS = 5.0  # one that did not answer, or was promoted, is asked again after this long
REPLAY_LSN = "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn() - '0/0'::pg_lsn"
CURRENT_LSN = "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"


@dataclass
class ReplicaView:
    state: str = "unknown"  # streaming, catching up, promoted, unreachable
    error: str | None = None
    since: float = 0.0  # wall time the state began
    checked: float = float("-inf")  # monotonic time of the last answer (or failure)
    replayed: int = 0  # the replica's replay position (bytes of WAL)


class ReplicaGate:
    """The replica's state as reads found it, and the newest commit heard of (`needed`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._view = ReplicaView(since=time.time())
        self._needed = 0

    def heard(self, lsn: int) -> None:
        """A commit ending at or before `lsn` was made: the replica serves reads once it has replayed it."""
        with self._lock:
            self._needed = max(self._needed, lsn)

    def due(self) -> bool | None:
        """Whether the replica must be asked before this read; when not, whether it may be read (None: ask)."""
        with self._lock:
            view, needed = self._view, self._needed
            age = time.monotonic() - view.checked
            if view.state in ("unreachable", "promoted"):
                return None if age >= RETRY_SECONDS else False
            if view.state == "streaming" and view.replayed >= needed and age < CHECK_SECONDS:
                return True
            return None

    def answered(self, recovering: bool, replayed: int) -> bool:
        """Record the replica's answer to REPLAY_LSN; whether it may serve the read."""
        with self._lock:
            if not recovering:
                self._set("promoted", "the replica is no longer in recovery (promoted?): reads go to the primary")
            elif replayed < self._needed:
                self._set("catching up", None)
            else:
                self._set("streaming", None)
            self._view.replayed = replayed
            self._view.checked = time.monotonic()
            return self._view.state == "streaming"

    def failed(self, why: str) -> None:
        with self._lock:
            self._set("unreachable", f"{why}: reads go to the primary")
            self._view.checked = time.monotonic()

    def _set(self, state: str, error: str | None) -> None:
        if self._view.state != state:
            self._view.state, self._view.since = state, time.time()
        self._view.error = error

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            view = self._view
            return {
                "state": view.state,
                "ok": view.state in ("streaming", "catching up", "unknown"),
                "error": view.error,
                "since": view.since,
                "reads_from": "replica" if view.state == "streaming" else "primary",
            }
