"""Index swaps against their users: any number of users of the index at once, and a swap (reindex, healing) that
waits for them and holds new ones back."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class SwapGate:
    """Any number of users of the index at once; swapping the index file waits for them and holds new ones back."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._users = 0
        self._swapping = False

    @contextmanager
    def use(self) -> Iterator[None]:
        with self._cond:
            while self._swapping:
                self._cond.wait()
            self._users += 1
        try:
            yield
        finally:
            with self._cond:
                self._users -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            while self._swapping:
                self._cond.wait()
            self._swapping = True
            while self._users:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._swapping = False
                self._cond.notify_all()
