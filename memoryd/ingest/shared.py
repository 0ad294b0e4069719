"""What a sync keeps in the store beside the chunks for every daemon of a shared namespace to read."""

from __future__ import annotations

from collections.abc import Callable

from memoryd.store.interface import MemoryStore


class SharedRecord:
    """The forget record's copy in the store's meta: in a shared store, what every daemon of the namespace reads."""

    KEY = "forgotten"

    def __init__(self, store: Callable[[], MemoryStore]) -> None:
        self._store = store

    def read(self) -> str | None:
        return self._store().get_meta(self.KEY)

    def write(self, text: str) -> None:
        self._store().set_meta(self.KEY, text)
