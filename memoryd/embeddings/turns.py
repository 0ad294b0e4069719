"""Who runs the local model next: a query that is waiting goes before the next document of a batch."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Interrupted(RuntimeError):
    """The embedder is shutting down; the batch in progress stops at the next input."""


class ModelTurns:
    """A lock taken once per input. Queries (`urgent`) wait only for the input being embedded now; batch work
    waits while any query is waiting. `interrupt()` makes every later batch turn raise Interrupted."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._urgent_waiting = 0
        self._interrupted = False

    @contextmanager
    def turn(self, *, urgent: bool = False) -> Iterator[None]:
        with self._cond:
            if urgent:
                self._urgent_waiting += 1
            try:
                while self._held or (not urgent and self._urgent_waiting):
                    if self._interrupted and not urgent:
                        raise Interrupted("the embedder is stopping")
                    self._cond.wait()
                if self._interrupted and not urgent:
                    raise Interrupted("the embedder is stopping")
            finally:
                if urgent:
                    self._urgent_waiting -= 1
            self._held = True
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self._cond.notify_all()

    def interrupt(self) -> None:
        with self._cond:
            self._interrupted = True
            self._cond.notify_all()
