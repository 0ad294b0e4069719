"""The store interface: everything sync, search and the library ask of an index, and nothing more.

`memoryd.index.sqlite.Store` implements it (the embedded default); a second backend implements the same methods.
Rows in and out are `memoryd.index.rows`; a store never analyses text (sync hands it analysed keyword columns),
so every backend ranks the same terms."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from memoryd.index.rows import (
    CachedEmbedding,
    ChunkFilter,
    ChunkRow,
    FileRow,
    Match,
    NewChunk,
    StoreChange,
    Unembedded,
    Vectors,
    WindowVectors,
)


class StoreUnavailable(RuntimeError):
    """The store's server cannot be reached (a server store only); the request may be retried later."""


class StoreBusy(StoreUnavailable):
    """The store's server took longer than its statement timeout on a request; the request may be retried."""


class NotGranted(StoreUnavailable):
    """The shared namespace does not exist, or this daemon's role was not granted it (the server said so)."""


class MemoryStore(Protocol):
    """One agent's index. Thread-safe: any number of readers beside one writer."""

    path: Path  # where it lives (a file; for a server, what names it)
    # what ranking one matching row by BM25 costs, in FTS5's units: keyword search lets only rarer terms recruit
    # chunks where it is high (the rest score what those find), keeping the same top results
    ranking_cost: float

    # -- lifecycle and state -------------------------------------------------------------------------
    def close(self) -> None: ...
    def release_memory(self) -> None:
        """Hand back caches (the daemon calls it when the agent has been idle)."""

    def cache_bytes(self) -> int: ...
    def subscribe(self, listener: Callable[[StoreChange], None]) -> None:
        """Called after every committed write that adds or removes chunks or vectors."""

    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    @property
    def fts_available(self) -> bool: ...
    @property
    def ranking_error(self) -> str | None:
        """Why keyword search ranks the slower way (None: the fast ranker is in use)."""

    @property
    def dims(self) -> int: ...
    @property
    def vector_backend(self) -> str: ...
    def counts(self) -> dict[str, int]:
        """files, chunks, embedded_chunks, cached_embeddings."""

    def row_counts(self) -> dict[str, int]:
        """files, chunks, embedded_chunks; never waits on a write."""

    def chunk_count(self) -> int: ...

    # -- files ---------------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRow]: ...
    def file_row(self, path: str) -> FileRow | None: ...
    def touch_file(self, path: str, mtime_ns: int, size: int) -> None: ...
    def delete_files(self, paths: Iterable[str]) -> int:
        """Remove files and every trace of their chunks in one transaction; returns chunks removed."""

    def replace_file(
        self,
        *,
        path: str,
        abs_path: str,
        source: str,
        hash: str,
        mtime_ns: int,
        size: int,
        chunks: Sequence[NewChunk],
        vectors: Vectors | None,
        model: str,
        cursor: tuple[int, int, int] | None = None,
        append: bool = False,
        windows: WindowVectors | None = None,
    ) -> list[int]:
        """Swap a file's chunks for new ones (or add to them) in one transaction; returns the new chunk ids."""

    def cursor(self, path: str) -> tuple[int, int, int] | None:
        """(inode, byte offset, lines read) of an incrementally read file."""

    # -- chunks and keyword search -------------------------------------------------------------------
    def chunks_by_ids(self, ids: Sequence[int]) -> dict[int, ChunkRow]: ...
    def chunk_ids(self, filters: ChunkFilter) -> set[int]: ...
    def bm25(
        self, query: str | Match, weights: Sequence[float], limit: int, filters: ChunkFilter | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, larger is better) of the chunks a keyword expression matches, best first."""

    def bm25_many(
        self, queries: Sequence[str | Match], weights: Sequence[float], limit: int, filters: ChunkFilter | None = None
    ) -> list[list[tuple[int, float]]]: ...
    def document_frequencies(self, tokens: Iterable[str]) -> dict[str, int]: ...

    # -- vectors -------------------------------------------------------------------------------------
    def unembedded(self, limit: int = 1000) -> list[Unembedded]: ...
    def set_vectors(
        self,
        chunk_ids: Sequence[int],
        hashes: Sequence[str],
        vectors: np.ndarray,
        model: str,
        windows: WindowVectors | None = None,
    ) -> int:
        """Attach vectors (and window vectors) to chunks stored without one, if their text is still the hashed
        one; returns how many."""

    def has_vectors(self) -> bool: ...
    def settle(self) -> None:
        """Finish what writing put off (PostgreSQL: the vector index of a namespace's first vectors); called
        when a sync or an embedding run ends."""

    def iter_vectors(self, batch: int = 65_536) -> Iterator[tuple[np.ndarray, np.ndarray]]: ...
    def vectors_by_ids(self, ids: Sequence[int]) -> dict[int, np.ndarray]: ...
    def window_vectors(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The window vectors of chosen chunks (windows x dims), for those stored with them."""

    def languages(self, ids: Sequence[int]) -> dict[int, str]:
        """The language of chosen chunks (memoryd.sources.language), for those with a known one."""

    # -- embedding cache -----------------------------------------------------------------------------
    def cache_get(self, provider: str, model: str, key_fp: str, hashes: Iterable[str]) -> dict[str, np.ndarray]: ...
    def cache_put(self, provider: str, model: str, key_fp: str, items: dict[str, np.ndarray]) -> None: ...
    def copy_cache_from(self, other: Path) -> int: ...
    def export_cache(self, batch: int = 2000) -> Iterator[list[CachedEmbedding]]:
        """Every cached embedding, `batch` rows at a time (moving an index to another store)."""

    def import_cache(self, rows: Sequence[CachedEmbedding]) -> int:
        """Add cache rows (those already held stay); returns how many were new."""

    # -- access statistics ---------------------------------------------------------------------------
    def record_access(self, hashes: Sequence[str]) -> None: ...
    def flush_access(self) -> bool: ...
    def access_stats(self, hashes: Sequence[str]) -> dict[str, tuple[int, float]]: ...
    def export_access(self) -> dict[str, tuple[int, float]]: ...
    def import_access(self, stats: dict[str, tuple[int, float]]) -> None:
        """Add search hits per chunk content to those already counted."""
