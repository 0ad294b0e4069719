"""What goes into a store and what comes out: plain rows, the same for every backend."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np


@dataclass(frozen=True)
class FileRow:
    id: int
    path: str
    abs_path: str
    source: str
    hash: str
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class NewChunk:
    """A chunk as sync hands it to a store: text and metadata, with its keyword columns already analysed (the
    store never analyses text, so every backend ranks the same terms)."""

    start_line: int
    end_line: int
    heading: str
    context: str
    text: str
    hash: str  # of what the embedder sees (context and text): the embedding cache's key
    ts: float | None
    kind: str
    importance: float | None
    source_lines: tuple[int, ...]  # the file line of each text line, where they are not consecutive
    terms: tuple[str, str, str, str]  # keyword columns: body, exact, heading, grams
    language: str = ""  # memoryd.sources.language: "" when unknown


@dataclass(frozen=True)
class ChunkRow:
    id: int
    path: str
    source: str
    start_line: int
    end_line: int
    heading: str
    text: str
    hash: str
    mtime_ns: int
    ts: float | None
    kind: str
    importance: float | None
    source_lines: str | None = None  # "3,5,9": the file line of each text line (transcripts)

    @property
    def when(self) -> float:
        """When it happened (epoch seconds): the note's date or the turn's time, else the file's modification."""
        return self.ts if self.ts is not None else self.mtime_ns / 1e9

    def file_line(self, offset: int) -> int:
        """The file line of the chunk's text line at `offset` (0-based)."""
        if self.source_lines:
            numbers = self.source_lines.split(",")
            return int(numbers[min(offset, len(numbers) - 1)])
        return self.start_line + offset


@dataclass(frozen=True)
class CachedEmbedding:
    """One embedding cache row as stored (the vector's bytes untouched), for moving a cache between stores."""

    provider: str
    model: str
    key_fp: str
    hash: str
    dims: int
    vector: bytes
    created_at: float


@dataclass(frozen=True)
class Unembedded:
    """A chunk stored without a vector: what the embedder needs to give it one."""

    id: int
    hash: str
    context: str
    text: str
    heading: str = ""


@dataclass(frozen=True)
class Phrase:
    """Tokens that must occur in this order in one of the keyword columns (0 body, 1 exact, 2 heading, 3 grams;
    none named: any), with how many chunks hold it where the caller knows (-1 where not)."""

    tokens: tuple[str, ...]
    columns: tuple[int, ...] = ()
    hits: int = -1


@dataclass(frozen=True)
class Match:
    """A keyword query: an FTS5 expression, with how many chunks each of its phrases matches, in order, where the
    caller knows it (-1 where not), and the same query as `groups` of phrases (a chunk matches when it holds a
    phrase of every group), for stores that do not parse FTS5 expressions."""

    expression: str
    hits: tuple[int, ...] = ()
    groups: tuple[tuple[Phrase, ...], ...] = ()


@dataclass(frozen=True)
class StoreChange:
    """What a committed write did, so that in-memory views (the vector matrix) can follow."""

    removed: tuple[int, ...]
    added: tuple[int, ...]
    vectors: np.ndarray | None  # rows for `added`, or None when they have none


class ChunkFilter(Protocol):
    """What a search may restrict chunks to (search.filters.Filters, a frozen dataclass: read-only members)."""

    @property
    def sources(self) -> tuple[str, ...]: ...
    @property
    def path(self) -> str | None:
        """A prefix, or a glob when it has * ? or [."""

    @property
    def after(self) -> float | None: ...
    @property
    def before(self) -> float | None: ...
    @property
    def kinds(self) -> tuple[str, ...]: ...
    @property
    def active(self) -> bool: ...


T = TypeVar("T")


def one_row(row: T | None) -> T:
    """The row of a query that always returns one (count(*), a PRAGMA, INSERT ... RETURNING), which the drivers'
    fetchone() types as perhaps none."""
    assert row is not None, "the query returned no row"
    return row


def path_spellings(path: str) -> list[str]:
    """What a search's path filter may match: as for `write`, a path that does not name memory/ may mean a note
    under it (`people` finds memory/people/)."""
    return [path] + ([] if path.startswith("memory/") else [f"memory/{path}"])


def is_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


ChunkVectors = np.ndarray | Sequence[np.ndarray | None]  # one per chunk; None: stored without one, embedded later
# one matrix per chunk of its windows' vectors (no rows: a chunk that is one window); None: not embedded
WindowVectors = Sequence[np.ndarray | None]


def window_blob(matrix: np.ndarray) -> bytes:
    """A chunk's window vectors as stored: float16, like the embedding cache (cosine within 1e-3)."""
    return np.ascontiguousarray(matrix, dtype=np.float16).tobytes()


def window_matrix(blob: bytes, dims: int) -> np.ndarray:
    """Stored window vectors as a (windows x dims) float32 matrix (no rows for a chunk that is one window)."""
    return np.frombuffer(blob, dtype=np.float16).reshape(-1, max(dims, 1)).astype(np.float32)


def vector_dims(chunks: Sequence[object], vectors: ChunkVectors | None) -> int:
    """The dimension of the vectors handed with a file's chunks (0: none), which must be one (or None) per chunk."""
    if vectors is None:
        return 0
    if len(vectors) != len(chunks):
        raise ValueError("one vector (or None) per chunk is required")
    return next((len(v) for v in vectors if v is not None), 0)


def file_change(removed: Sequence[int], added: Sequence[int], vectors: ChunkVectors | None) -> StoreChange:
    """What replacing a file's chunks did: the chunks removed, and those added with a vector, with their vectors."""
    with_vectors = [] if vectors is None else [i for i in range(len(added)) if vectors[i] is not None]
    matrix = (
        np.stack([np.asarray(vectors[i], dtype=np.float32) for i in with_vectors])
        if vectors is not None and with_vectors
        else None
    )
    return StoreChange(tuple(removed), tuple(added[i] for i in with_vectors), matrix)


def attached_change(chunk_ids: Sequence[int], attached: Sequence[int], vectors: np.ndarray) -> StoreChange:
    """What attaching vectors to stored chunks did: each attached chunk replaced by itself with its vector."""
    alive = set(attached)
    keep = [i for i, cid in enumerate(chunk_ids) if cid in alive]
    ids = tuple(int(chunk_ids[i]) for i in keep)
    return StoreChange(ids, ids, vectors[keep])


def add_access(counts: dict[str, tuple[int, float]], more: dict[str, tuple[int, float]]) -> None:
    """Add search hits per chunk content (hits, last time) to those counted so far."""
    for digest, (hits, last) in more.items():
        held, newer = counts.get(digest, (0, last))
        counts[digest] = (hits + held, max(last, newer))
