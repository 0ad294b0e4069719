"""What a store raises, sorted by what it means to the code above it, so that nothing outside memoryd.store names a
database library: the index is unreadable (set it aside, rebuild it from the notes), the disk is full (pause
indexing), a request failed (skip the file, retry on the next sync), or the server is away (StoreUnavailable)."""

from __future__ import annotations

import apsw

from memoryd.store.interface import NotGranted, StoreBusy, StoreUnavailable


class DiskFull(RuntimeError):
    """The index cannot grow: indexing pauses until there is room; searches go on."""


class RequestFailed(RuntimeError):
    """A server refused one request (a constraint, a value it cannot store): the file is retried at the next sync."""


CORRUPT: tuple[type[BaseException], ...] = (apsw.CorruptError, apsw.NotADBError)
FULL: tuple[type[BaseException], ...] = (DiskFull, apsw.FullError)
FAILED: tuple[type[BaseException], ...] = (apsw.Error, RequestFailed)  # one request refused; the store itself is fine

__all__ = ["CORRUPT", "FAILED", "FULL", "DiskFull", "NotGranted", "RequestFailed", "StoreBusy", "StoreUnavailable"]
