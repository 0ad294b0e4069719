"""The store interface: everything sync, search and the library ask of an index (MemoryStore), and of the backend
that opens, heals, leads and rebuilds it (Backend), and nothing more.

`memoryd.store.sqlite.Store` implements it (the embedded default); a second backend implements the same methods.
Rows in and out are `memoryd.store.rows`; a store never analyses text (sync hands it analysed keyword columns),
so every backend ranks the same terms."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from memoryd.store.rows import (
    CachedEmbedding,
    ChunkFilter,
    ChunkRow,
    ChunkVectors,
    FileRow,
    Match,
    NewChunk,
    StoreChange,
    Unembedded,
    WindowVectors,
)
from memoryd.store.vectors import Vectors


class StoreUnavailable(RuntimeError):
    """The store's server cannot be reached (a server store only); the request may be retried later."""


class StoreBusy(StoreUnavailable):
    """The store's server took longer than its statement timeout on a request; the request may be retried."""


class NotGranted(StoreUnavailable):
    """The shared namespace does not exist, or this daemon's role was not granted it (the server said so)."""


class MemoryStore(Protocol):
    """One agent's index. Thread-safe: any number of readers beside one writer."""

    path: Path  # where it lives (a file; for a server, what names it)

    @property
    def ranking_cost(self) -> float:
        """What ranking one matching row by BM25 costs, in FTS5's units: keyword search lets only rarer terms
        recruit chunks where it is high (the rest score what those find), keeping the same top results."""
        ...

    # -- lifecycle and state -------------------------------------------------------------------------
    def close(self) -> None: ...
    def release_memory(self) -> None:
        """Hand back caches (the daemon calls it when the agent has been idle)."""

    def scrubbed(self) -> AbstractContextManager[None]:
        """A scope whose deletions leave no copy of the deleted text in the store's files (a forget with purge)."""
        ...

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
        vectors: ChunkVectors | None,
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
    def cache_drop(self, hashes: Iterable[str]) -> int:
        """Take these texts' vectors out of the embedding cache, under every model (a purge); returns rows taken."""
        ...

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


class Filled(Protocol):
    """What filling a new store reports, as much as the backend checks before swapping it in."""

    files_seen: int
    skipped: dict[str, str]
    embedding_error: str | None


R = TypeVar("R", bound=Filled)


# A store built beside the live one by `build`, waiting to be swapped in or discarded: each kind's own (SQLite: the
# new file's path; PostgreSQL: the staging schema's store). Backend[Any] where the kind is not known: what `build`
# returns only ever goes back to the same backend's `swap` and `discard`.
Staged = TypeVar("Staged")


class Backend(Protocol[Staged]):
    """The store of one agent, whatever its kind. `store` and `vectors` are replaced when the store is healed or
    swapped: read them anew each time, under the caller's gate."""

    kind: str

    @property
    def store(self) -> MemoryStore: ...
    @property
    def vectors(self) -> Vectors: ...

    healed: str | None  # why the store was last rebuilt from the sources, for `status`
    watched: bool  # a job must watch who writes it (other daemons may)

    @property
    def role(self) -> str:
        """writer; standby (another daemon writes the store); reader (this daemon may only read it)."""

    def lead(self) -> bool:
        """Become the store's writer if no one else is; whether this daemon writes it now."""

    def still_leads(self) -> bool:
        """The writer's hold is still in force (checked by the watch job)."""

    @property
    def healthy(self) -> bool:
        """The store's server answers (always, for a store in a file)."""

    def damage(self) -> str | None:
        """Why the open store must be healed although no request failed yet (a file deleted or replaced)."""

    def heal(self, why: BaseException | str) -> None:
        """Set the store aside and open a new, empty one that the next sync fills. The caller holds the gate."""

    def build(self, fill: Callable[[MemoryStore], R]) -> tuple[Staged, R]:
        """A new store beside the live one, filled by `fill` and verified; the live one keeps serving."""

    def swap(self, staged: Staged) -> None:
        """Put a built store in the live one's place. The caller holds the gate exclusively."""

    def discard(self, staged: Staged) -> None:
        """Drop a built store that was not swapped in (harmless after a swap)."""

    def status(self) -> dict[str, Any]:
        """What the store is and how it is: store, store_kind, keyword ranking; role and health where shared."""

    def close(self) -> None: ...
