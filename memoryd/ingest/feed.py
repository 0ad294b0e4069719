"""One agent's change feed: the watchers' events, already filtered to what can change memory, gathered into
debounced batches of (path, kind) on one thread of its own.

A batch goes out `debounce` seconds after the last event, or at most five debounces after the first one of a
steady stream; a transcript that grew enough to be worth reading (`urgent`) sends the batch at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

Kind = Literal["note", "transcript", "folder"]  # a Markdown file, a .jsonl transcript, a folder (walk it)
Batch = dict[str, Kind]
MAX_WAIT_DEBOUNCES = 5


class ChangeFeed:
    def __init__(
        self,
        deliver: Callable[[Batch], None],
        debounce: Callable[[Kind], float],
        urgent: Callable[[str, Kind], bool],
        name: str = "changes",
    ) -> None:
        self._deliver = deliver
        self._debounce = debounce
        self._urgent = urgent
        self._cond = threading.Condition()
        self._pending: Batch = {}
        self._first: float | None = None
        self._due: float = 0.0
        self._now = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def add(self, path: str, kind: Kind) -> None:
        urgent = self._urgent(path, kind)
        with self._cond:
            now = time.monotonic()
            wait = self._debounce(kind)
            self._first = now if self._first is None else self._first
            self._pending[path] = "folder" if self._pending.get(path) == "folder" else kind
            self._due = min(now + wait, self._first + MAX_WAIT_DEBOUNCES * wait)
            self._now = self._now or urgent
            self._cond.notify_all()

    @property
    def pending(self) -> bool:
        with self._cond:
            return bool(self._pending)

    def flush(self) -> None:
        """Deliver what waits now, on the caller's thread (a search that must see every change)."""
        batch = self._take()
        if batch:
            self._deliver(batch)

    def _take(self) -> Batch:
        with self._cond:
            batch, self._pending = self._pending, {}
            self._first, self._now = None, False
            return batch

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and not (self._pending and (self._now or time.monotonic() >= self._due)):
                    self._cond.wait(None if not self._pending or self._now else self._due - time.monotonic())
                if self._closed:
                    return
            self.flush()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
