"""One agent's SQLite index: files, chunks, FTS5, vectors (sqlite-vec or plain blobs) and the embedding cache."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import apsw
import numpy as np

from memoryd.config import SOURCES
from memoryd.index import topk
from memoryd.index.schema import FTS_DDL, FTS_INSERT, VOCAB_DDL, migrate, vec_ddl
from memoryd.sources.analyzer import fts_row
from memoryd.sources.markdown import Chunk, embed_input
from memoryd.sources.metadata import date_words

ChangeListener = Callable[["StoreChange"], None]
MAX_REMEMBERED_FREQUENCIES = 100_000
MAX_PENDING_ACCESS = 100_000  # distinct chunks counted between flushes
FTS_THREADS = 2  # threads for a keyword search's side queries (bm25_many), beside the caller's own
# From this many chunks those queries run side by side; below it, on the caller's thread (a keyword search takes a
# few ms there, and each FTS thread holds a connection and its page cache: 100k chunks, RSS a minute after a full
# reindex 219 -> 229 MB with them)
PARALLEL_FTS_CHUNKS = 200_000


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

    def file_line(self, offset: int) -> int:
        """The file line of the chunk's text line at `offset` (0-based)."""
        if self.source_lines:
            numbers = self.source_lines.split(",")
            return int(numbers[min(offset, len(numbers) - 1)])
        return self.start_line + offset


@dataclass(frozen=True)
class Match:
    """An FTS5 expression, with how many chunks each of its phrases matches, in order, where the caller knows it
    (-1 where not): bm25_topk then need not count them by reading their posting lists."""

    expression: str
    hits: tuple[int, ...] = ()


@dataclass(frozen=True)
class StoreChange:
    """What a committed write did, so that in-memory views (the vector matrix) can follow."""

    removed: tuple[int, ...]
    added: tuple[int, ...]
    vectors: np.ndarray | None  # rows for `added`, or None when they have none


def _load_sqlite_vec(conn: apsw.Connection) -> str | None:
    """Load sqlite-vec; returns why not, or None when it loaded."""
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        return None
    except Exception as exc:  # any failure means: use the fallback scan
        return f"sqlite-vec unavailable: {exc}"


def _vector_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def _cache_blob(vector: np.ndarray) -> bytes:
    """The embedding cache keeps float16: half the disk, and cosine within 1e-3 of the float32 original."""
    return np.ascontiguousarray(vector, dtype=np.float16).tobytes()


def _as_matrix(ids: list[int], blobs: list[bytes], dims: int) -> tuple[np.ndarray, np.ndarray]:
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dims)
    return np.asarray(ids, dtype=np.int64), matrix


def _cache_rows(
    conn: apsw.Connection, columns: str, provider: str, model: str, key_fp: str, hashes: Iterable[str]
) -> Iterator[tuple]:
    """The embedding cache's rows (those `columns`) for these text hashes under one model, 500 keys a query."""
    unique = list(dict.fromkeys(hashes))
    for start in range(0, len(unique), 500):
        part = unique[start : start + 500]
        marks = ",".join("?" * len(part))
        yield from conn.execute(
            f"SELECT {columns} FROM embedding_cache WHERE provider = ? AND model = ? AND key_fp = ?"
            f" AND hash IN ({marks})",
            (provider, model, key_fp, *part),
        )


def _cached_vector(blob: bytes, dims: int) -> np.ndarray:
    dtype = np.float16 if len(blob) == 2 * dims else np.float32  # float32 rows come from older indexes
    vector = np.frombuffer(blob, dtype=dtype).astype(np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


class ChunkFilter(Protocol):
    """What a search may restrict chunks to (search.filters.Filters)."""

    sources: tuple[str, ...]
    path: str | None  # a prefix, or a glob when it has * ? or [
    after: float | None
    before: float | None
    kinds: tuple[str, ...]

    @property
    def active(self) -> bool: ...


def filter_sql(filters: ChunkFilter, all_sources: Sequence[str]) -> tuple[str, list[object]]:
    """A WHERE clause over `chunks c JOIN files f`, and its parameters."""
    clauses: list[str] = []
    params: list[object] = []
    if filters.sources and set(filters.sources) != set(all_sources):
        clauses.append(f"c.source IN ({','.join('?' * len(filters.sources))})")
        params += list(filters.sources)
    if filters.path:
        # as for `write`, a path that does not name memory/ may mean a note under it: `people` finds memory/people/
        spellings = [filters.path] + ([] if filters.path.startswith("memory/") else [f"memory/{filters.path}"])
        if any(ch in filters.path for ch in "*?["):
            clauses.append("(" + " OR ".join("f.path GLOB ?" for _ in spellings) + ")")
            params += spellings
        else:
            clauses.append("(" + " OR ".join("substr(f.path, 1, ?) = ?" for _ in spellings) + ")")
            for spelling in spellings:
                params += [len(spelling), spelling]
    if filters.after is not None:
        clauses.append("c.ts >= ?")
        params.append(filters.after)
    if filters.before is not None:
        clauses.append("c.ts < ?")
        params.append(filters.before)
    if filters.kinds:
        clauses.append(f"c.kind IN ({','.join('?' * len(filters.kinds))})")
        params += list(filters.kinds)
    return " AND ".join(clauses) or "1", params


class Store:
    """Owns the connections to one index file. Writes go through one connection, reads through another."""

    def __init__(self, path: Path, *, use_sqlite_vec: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.RLock()
        self._listeners: list[ChangeListener] = []
        self._counts: dict[str, int] | None = None  # files, chunks, embedded chunks: until the next write
        self._cached_count: int | None = None  # embedding cache rows: until the next cache write
        self._count_epoch = 0  # moved by every write that changes a count (a count read across one is not kept)
        self._count_lock = threading.Lock()
        self._frequencies: dict[str, int] = {}  # token -> chunks holding it, until the next write
        self._access: dict[str, tuple[int, float]] = {}  # hash -> (hits, last time) not yet written
        self._access_lock = threading.Lock()
        self._dims = 0
        self._backend = ""
        self.conn = self._connect()
        self.vec_error = _load_sqlite_vec(self.conn) if use_sqlite_vec else "sqlite-vec disabled"
        migrate(self.conn)
        self.fts_error = self._ensure_fts()
        self.ranking_error = topk.load(self.conn) if self.fts_error is None else None
        self.rank_with_topk = self.ranking_error is None  # where loaded; cleared, FTS5's bm25() ranks (benches)
        self._local = threading.local()
        self._fts_pool: ThreadPoolExecutor | None = None
        self._fts_pool_lock = threading.Lock()
        self._readers: list[tuple[threading.Thread, apsw.Connection]] = []
        self._readers_lock = threading.Lock()

    def _connect(self) -> apsw.Connection:
        conn = apsw.Connection(str(self.path))
        conn.set_busy_timeout(10_000)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA journal_size_limit=67108864")  # a big sync must not leave a huge -wal behind
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def _ensure_fts(self) -> str | None:
        try:
            self.conn.execute(FTS_DDL)
            self.conn.execute(VOCAB_DDL)
            return None
        except apsw.SQLError as exc:
            return f"FTS5 unavailable: {exc}"

    @property
    def reader(self) -> apsw.Connection:
        """This thread's read connection: WAL lets readers run beside each other and beside the writer,
        but one apsw connection cannot serve two threads at once."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            if self.vec_error is None:
                _load_sqlite_vec(conn)
            self._local.topk = self.fts_error is None and self.ranking_error is None and topk.load(conn) is None
            self._local.conn = conn
            with self._readers_lock:
                self._readers = [*self._live_readers(), (threading.current_thread(), conn)]
        return conn

    def _live_readers(self) -> list[tuple[threading.Thread, apsw.Connection]]:
        """The readers whose threads still run; the others are closed (no thread can reach them again, and each
        holds a page cache). Short-lived threads, such as a search's query-vector thread, read too."""
        live = []
        for thread, conn in self._readers:
            if thread.is_alive():
                live.append((thread, conn))
            else:
                conn.close()
        return live

    def release_memory(self) -> None:
        """Close the readers of finished threads and hand back what every connection's page cache holds
        (`PRAGMA shrink_memory`); the daemon calls it when an agent has been idle long enough to unload its
        model. A connection its thread is using just then keeps its cache."""
        with self._readers_lock:
            self._readers = self._live_readers()
            connections = [self.conn, *(conn for _, conn in self._readers)]
        self._frequencies = {}
        for conn in connections:
            with contextlib.suppress(apsw.ThreadingViolationError):
                conn.execute("PRAGMA shrink_memory")

    def cache_bytes(self) -> int:
        """Page cache held by this index's connections."""
        with self._readers_lock:
            connections = [self.conn, *(conn for _, conn in self._readers)]
        total = 0
        for conn in connections:
            try:
                total += conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0]
            except apsw.Error:
                continue
        return total

    def close(self) -> None:
        if getattr(self, "conn", None) is not None:
            self.flush_access()
        pool = getattr(self, "_fts_pool", None)
        if pool is not None:
            pool.shutdown(wait=True)
        # a listener (the warm matrix) refers back to this store: without this cycle, a store swapped out by a
        # reindex is freed at once instead of at some later garbage collection (100k chunks: a 38 MB matrix)
        self._listeners.clear()
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for conn in [*(conn for _, conn in readers), getattr(self, "conn", None)]:
            if conn is not None:
                conn.close()

    # -- listeners -----------------------------------------------------------------------------------

    def subscribe(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    def _notify(self, change: StoreChange) -> None:
        self._counts_changed(cache_rows=0)
        self._frequencies = {}
        for listener in self._listeners:
            listener(change)

    # -- meta ----------------------------------------------------------------------------------------

    @property
    def fts_available(self) -> bool:
        return self.fts_error is None

    @property
    def vec_table_available(self) -> bool:
        return self.vec_error is None

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.reader.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self._write_lock, self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @property
    def dims(self) -> int:
        if not self._dims:  # set once per index file (ensure_vectors), then read from memory
            self._dims = int(self.get_meta("dims", "0") or 0)
        return self._dims

    @property
    def vector_backend(self) -> str:
        if not self._backend:
            self._backend = self.get_meta("vector_backend", "") or ""
        return self._backend

    def ensure_vectors(self, dims: int) -> None:
        """Create the vector table for this dimension; a different dimension is an error."""
        current = self.dims
        if current and current != dims:
            raise ValueError(f"index holds {current}-dimensional vectors, got {dims}")
        if current:
            return
        with self._write_lock, self.conn:
            backend = "blob"
            if self.vec_table_available:
                self.conn.execute(vec_ddl(dims))
                backend = "sqlite-vec"
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('dims', ?)", (str(dims),))
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vector_backend', ?)", (backend,))
        self._dims, self._backend = dims, backend

    def _vectors_readable(self) -> bool:
        return self.vector_backend == "blob" or (self.vector_backend == "sqlite-vec" and self.vec_table_available)

    # -- files ---------------------------------------------------------------------------------------

    def files(self) -> dict[str, FileRow]:
        rows = self.reader.execute("SELECT id, path, abs_path, source, hash, mtime_ns, size FROM files")
        return {r[1]: FileRow(*r) for r in rows}

    def file_row(self, path: str) -> FileRow | None:
        row = self.reader.execute(
            "SELECT id, path, abs_path, source, hash, mtime_ns, size FROM files WHERE path = ?", (path,)
        ).fetchone()
        return FileRow(*row) if row else None

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        with self._write_lock, self.conn:
            self.conn.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path))

    def _delete_chunks(self, chunk_ids: Sequence[int]) -> None:
        if not chunk_ids:
            return
        params = [(cid,) for cid in chunk_ids]
        if self.fts_available:
            self.conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", params)
        if self.vector_backend == "sqlite-vec" and self.vec_table_available:
            self.conn.executemany("DELETE FROM chunks_vec WHERE rowid = ?", params)
        self.conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", params)
        self.conn.executemany("DELETE FROM chunks WHERE id = ?", params)

    def _chunk_ids_of(self, file_id: int) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]

    def delete_files(self, paths: Iterable[str]) -> int:
        """Remove files and every trace of their chunks in one transaction; returns chunks removed."""
        removed: list[int] = []
        with self._write_lock:
            with self.conn:
                for path in paths:
                    row = self.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
                    if row is None:
                        continue
                    ids = self._chunk_ids_of(row[0])
                    self._delete_chunks(ids)
                    self.conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
                    removed.extend(ids)
            if removed:
                self._notify(StoreChange(tuple(removed), (), None))
            else:  # files without chunks: nothing for the listeners, but the file count moved
                self._counts_changed(cache_rows=0)
        return len(removed)

    def replace_file(
        self,
        *,
        path: str,
        abs_path: str,
        source: str,
        hash: str,
        mtime_ns: int,
        size: int,
        chunks: Sequence[Chunk],
        vectors: np.ndarray | Sequence[np.ndarray | None] | None,
        model: str,
        cursor: tuple[int, int, int] | None = None,
        append: bool = False,
    ) -> list[int]:
        """Swap a file's chunks for new ones (or, with append, add to them) in one transaction; returns the new ids.

        `vectors` holds one vector per chunk, or None for a chunk stored without one (embedded later): a chunk is
        keyword-searchable from this call on, whatever the embedder's pace. `cursor` is (inode, byte offset,
        lines read) for files read incrementally (transcripts)."""
        if vectors is not None and len(vectors) != len(chunks):
            raise ValueError("one vector (or None) per chunk is required")
        dims = next((len(v) for v in vectors if v is not None), 0) if vectors is not None else 0
        if dims:
            self.ensure_vectors(dims)
        with self._write_lock:
            with self.conn:
                row = self.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
                removed = self._chunk_ids_of(row[0]) if row and not append else []
                self._delete_chunks(removed)
                now = time.time()
                if row:
                    file_id = row[0]
                    self.conn.execute(
                        "UPDATE files SET abs_path=?, source=?, hash=?, mtime_ns=?, size=?, indexed_at=? WHERE id=?",
                        (abs_path, source, hash, mtime_ns, size, now, file_id),
                    )
                else:
                    self.conn.execute(
                        "INSERT INTO files(path, abs_path, source, hash, mtime_ns, size, indexed_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (path, abs_path, source, hash, mtime_ns, size, now),
                    )
                    file_id = self.conn.last_insert_rowid()
                first_seq = 0
                if append:
                    first_seq = self.conn.execute(
                        "SELECT coalesce(max(seq) + 1, 0) FROM chunks WHERE file_id = ?", (file_id,)
                    ).fetchone()[0]
                added = self._insert_chunks(file_id, first_seq, source, chunks, vectors, model)
                if cursor is not None:
                    self.conn.execute(
                        "INSERT OR REPLACE INTO cursors(file_id, inode, offset, lines) VALUES (?, ?, ?, ?)",
                        (file_id, *cursor),
                    )
            with_vectors = [i for i in range(len(added)) if vectors is not None and vectors[i] is not None]
            matrix = (
                np.stack([np.asarray(vectors[i], dtype=np.float32) for i in with_vectors]) if with_vectors else None
            )
            self._notify(StoreChange(tuple(removed), tuple(added[i] for i in with_vectors), matrix))
        return added

    def _insert_chunks(
        self,
        file_id: int,
        first_seq: int,
        source: str,
        chunks: Sequence[Chunk],
        vectors: np.ndarray | Sequence[np.ndarray | None] | None,
        model: str,
    ) -> list[int]:
        added: list[int] = []
        for offset, chunk in enumerate(chunks):
            vector = vectors[offset] if vectors is not None else None
            self.conn.execute(
                "INSERT INTO chunks(file_id, seq, start_line, end_line, heading, context, text, hash, model, source,"
                " ts, kind, importance, source_lines) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    file_id,
                    first_seq + offset,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.heading,
                    chunk.context,
                    chunk.text,
                    chunk.hash,
                    model if vector is not None else "",
                    source,
                    chunk.ts,
                    chunk.kind,
                    chunk.importance,
                    ",".join(map(str, chunk.source_lines)) if chunk.source_lines else None,
                ),
            )
            chunk_id = self.conn.last_insert_rowid()
            added.append(chunk_id)
            if self.fts_available:
                # a dated chunk also answers to its day: "what happened on 13 October?"
                heading = f"{chunk.heading} {date_words(chunk.ts)}" if chunk.dated and chunk.ts else chunk.heading
                self.conn.execute(FTS_INSERT, (chunk_id, *fts_row(chunk.text, heading)))
            if vector is not None:
                self._insert_vector(chunk_id, vector)
        return added

    def cursor(self, path: str) -> tuple[int, int, int] | None:
        """(inode, byte offset, lines read) of an incrementally read file."""
        row = self.reader.execute(
            "SELECT c.inode, c.offset, c.lines FROM cursors c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
            (path,),
        ).fetchone()
        return tuple(row) if row else None  # type: ignore[return-value]

    def record_access(self, hashes: Sequence[str]) -> None:
        """Count that these chunks were returned by a search (kept by content, so re-chunking keeps them).
        Counted in memory and written by `flush_access`, so that a search never waits on, or fails with, a write."""
        if not hashes:
            return
        now = time.time()
        with self._access_lock:
            if len(self._access) >= MAX_PENDING_ACCESS:
                return
            for digest in dict.fromkeys(hashes):
                hits, _ = self._access.get(digest, (0, now))
                self._access[digest] = (hits + 1, now)

    def flush_access(self) -> bool:
        """Write the access counts gathered since the last flush; on a write error (a full disk) keep them
        for the next flush and return False."""
        with self._access_lock:
            pending, self._access = self._access, {}
        if not pending:
            return True
        try:
            with self._write_lock, self.conn:
                self.conn.executemany(
                    "INSERT INTO access(hash, hits, last_at) VALUES (?, ?, ?)"
                    " ON CONFLICT(hash) DO UPDATE SET hits = hits + excluded.hits, last_at = excluded.last_at",
                    [(h, hits, last) for h, (hits, last) in pending.items()],
                )
            return True
        except apsw.Error:
            with self._access_lock:
                for digest, (hits, last) in pending.items():
                    more, newer = self._access.get(digest, (0, last))
                    self._access[digest] = (hits + more, max(last, newer))
            return False

    def access_stats(self, hashes: Sequence[str]) -> dict[str, tuple[int, float]]:
        unique = list(dict.fromkeys(hashes))
        if not unique:
            return {}
        marks = ",".join("?" * len(unique))
        rows = self.reader.execute(f"SELECT hash, hits, last_at FROM access WHERE hash IN ({marks})", unique)
        stats = {h: (hits, last) for h, hits, last in rows}
        with self._access_lock:
            for digest in unique:
                if digest in self._access:
                    hits, last = self._access[digest]
                    stored_hits, stored_last = stats.get(digest, (0, 0.0))
                    stats[digest] = (stored_hits + hits, max(last, stored_last))
        return stats

    def _vector_table(self) -> tuple[str, str, str]:
        """(table, id column, vector column) of the backend this index stores its vectors in."""
        if self.vector_backend == "sqlite-vec":
            return "chunks_vec", "rowid", "embedding"
        return "chunk_vectors", "chunk_id", "vector"

    def _insert_vector(self, chunk_id: int, vector: np.ndarray) -> None:
        table, key, column = self._vector_table()
        self.conn.execute(f"INSERT INTO {table}({key}, {column}) VALUES (?, ?)", (chunk_id, _vector_blob(vector)))

    def set_vectors(self, chunk_ids: Sequence[int], hashes: Sequence[str], vectors: np.ndarray, model: str) -> int:
        """Attach vectors to chunks stored without one; a chunk that was replaced meanwhile (its id gone, or
        reused for other text) is left alone. Returns how many were attached."""
        if not chunk_ids:
            return 0
        self.ensure_vectors(vectors.shape[1])
        live: list[int] = []
        with self._write_lock:
            with self.conn:
                for chunk_id, digest, vector in zip(chunk_ids, hashes, vectors, strict=True):
                    exists = self.conn.execute(
                        "SELECT 1 FROM chunks WHERE id = ? AND hash = ? AND model = ''", (chunk_id, digest)
                    )
                    if exists.fetchone() is None:
                        continue
                    self._insert_vector(chunk_id, vector)
                    self.conn.execute("UPDATE chunks SET model = ? WHERE id = ?", (model, chunk_id))
                    live.append(chunk_id)
            if live:
                alive = set(live)
                keep = [i for i, cid in enumerate(chunk_ids) if cid in alive]
                self._notify(StoreChange(tuple(live), tuple(live), vectors[keep]))
        return len(live)

    # -- reads ---------------------------------------------------------------------------------------

    def unembedded(self, limit: int = 1000) -> list[tuple[int, str, str]]:
        """(chunk id, hash, embedding input) of chunks without a vector."""
        rows = self.reader.execute(
            "SELECT id, hash, context, text FROM chunks WHERE model = '' ORDER BY id LIMIT ?", (limit,)
        )
        return [(r[0], r[1], embed_input(r[2], r[3])) for r in rows]

    def iter_vectors(self, batch: int = 65_536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every stored vector, as (ids, float32 matrix) pieces of at most `batch` rows."""
        dims = self.dims
        if not dims or not self._vectors_readable():
            return
        table, key, column = self._vector_table()
        rows = self.reader.execute(f"SELECT {key}, {column} FROM {table}")
        ids: list[int] = []
        blobs: list[bytes] = []
        for chunk_id, blob in rows:
            ids.append(chunk_id)
            blobs.append(blob)
            if len(ids) == batch:
                yield _as_matrix(ids, blobs, dims)
                ids, blobs = [], []
        if ids:
            yield _as_matrix(ids, blobs, dims)

    def all_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Every stored vector as (ids, float32 matrix)."""
        parts = list(self.iter_vectors())
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros((0, max(self.dims, 1)), dtype=np.float32)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def vectors_by_ids(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored float32 vectors of chosen chunks (exact rescoring of the warm matrix's approximations)."""
        dims = self.dims
        if not dims or not self._vectors_readable() or not ids:
            return {}
        table, key, column = self._vector_table()
        out: dict[int, np.ndarray] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        if table == "chunks_vec":
            # vec0 answers `rowid IN (...)` by scanning every vector (23 ms at 100k), `rowid = ?` by a lookup
            for chunk_id in unique:
                row = self.reader.execute(f"SELECT {column} FROM {table} WHERE {key} = ?", (chunk_id,)).fetchone()
                if row is not None:
                    out[chunk_id] = np.frombuffer(row[0], dtype=np.float32, count=dims)
            return out
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            for chunk_id, blob in self.reader.execute(
                f"SELECT {key}, {column} FROM {table} WHERE {key} IN ({marks})", part
            ):
                out[chunk_id] = np.frombuffer(blob, dtype=np.float32, count=dims)
        return out

    def chunks_by_ids(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        out: dict[int, ChunkRow] = {}
        ids = list(ids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self.reader.execute(
                "SELECT c.id, f.path, c.source, c.start_line, c.end_line, c.heading, c.text, c.hash, f.mtime_ns,"
                f" c.ts, c.kind, c.importance, c.source_lines FROM chunks c JOIN files f ON f.id = c.file_id"
                f" WHERE c.id IN ({marks})",
                part,
            )
            for row in rows:
                out[row[0]] = ChunkRow(*row)
        return out

    def bm25(
        self, query: str | Match, weights: Sequence[float], limit: int, filters: ChunkFilter | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, larger is better) of the chunks an FTS5 expression matches, best first."""
        match = query if isinstance(query, Match) else Match(query)
        reader = self.reader
        loaded = self.rank_with_topk and self._local.topk
        score = topk.ranking(", ".join(str(float(w)) for w in weights), limit, loaded)
        ranking_args: tuple = (",".join(map(str, match.hits)),) if loaded else ()
        if filters is not None and filters.active:
            where, params = filter_sql(filters, SOURCES)
            sql = (
                f"SELECT fts.rowid, {score} AS s FROM chunks_fts fts"
                " JOIN chunks c ON c.id = fts.rowid JOIN files f ON f.id = c.file_id"
                f" WHERE chunks_fts MATCH ? AND {where} ORDER BY s DESC LIMIT ?"
            )
            args: tuple = (*ranking_args, match.expression, *params, limit)
        else:
            sql = f"SELECT rowid, {score} AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s DESC LIMIT ?"
            args = (*ranking_args, match.expression, limit)
        return [(int(r[0]), float(r[1])) for r in reader.execute(sql, args)]

    def bm25_many(
        self,
        queries: Sequence[str | Match],
        weights: Sequence[float],
        limit: int,
        filters: ChunkFilter | None = None,
    ) -> list[list[tuple[int, float]]]:
        """`bm25` of several expressions; in a large index side by side, the first on this thread and the others
        on the store's FTS threads (each with its own read connection; SQLite runs them outside the GIL)."""
        if len(queries) <= 1 or self.chunk_count() < PARALLEL_FTS_CHUNKS:
            return [self.bm25(q, weights, limit, filters) for q in queries]
        with self._fts_pool_lock:
            if self._fts_pool is None:
                self._fts_pool = ThreadPoolExecutor(max_workers=FTS_THREADS, thread_name_prefix="fts")
            pool = self._fts_pool
        others = [pool.submit(self.bm25, q, weights, limit, filters) for q in queries[1:]]
        first = self.bm25(queries[0], weights, limit, filters)
        return [first, *(future.result() for future in others)]

    def chunk_ids(self, filters: ChunkFilter) -> set[int]:
        """Every chunk a filter lets through."""
        where, params = filter_sql(filters, SOURCES)
        rows = self.reader.execute(f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where}", params)
        return {r[0] for r in rows}

    def chunk_count(self) -> int:
        """Number of chunks, remembered between writes (it sizes keyword query pruning)."""
        return self._row_counts()["chunks"]

    def document_frequencies(self, tokens: Iterable[str]) -> dict[str, int]:
        """How many chunks hold each token, from the FTS5 vocabulary (remembered until the next write: a search
        asks twice, for its terms and for its snippet words, and agents repeat queries)."""
        unique = list(dict.fromkeys(tokens))
        if not unique or not self.fts_available:
            return {}
        known = self._frequencies
        missing = [t for t in unique if t not in known]
        if missing:
            marks = ",".join("?" * len(missing))
            rows = self.reader.execute(f"SELECT term, doc FROM chunks_fts_vocab WHERE term IN ({marks})", missing)
            fresh = dict.fromkeys(missing, 0)
            fresh.update({term: doc for term, doc in rows})
            if len(known) > MAX_REMEMBERED_FREQUENCIES:
                known = self._frequencies = {}
            known.update(fresh)
        return {t: known.get(t, 0) for t in unique}

    def has_vectors(self) -> bool:
        """Whether any chunk has a vector, from two index counts (the warm matrix need not be loaded to know)."""
        return self._row_counts()["embedded_chunks"] > 0

    def counts(self) -> dict[str, int]:
        """Files, chunks, embedded chunks and cached embeddings, counted on indexes only: `status` is polled, and
        counting embedded chunks by reading every chunk row took 0.18 s with the pages cached and over 30 s without
        them at a million chunks (now 8 ms; the embedding cache's 54 ms once, then kept up to date by each cache
        write)."""
        with self._count_lock:
            cached = self._cached_count
        if cached is None:
            with self._write_lock:  # cache writes move the count under this lock: none can land between
                cached = self.reader.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
                with self._count_lock:
                    self._cached_count = cached
        return {**self._row_counts(), "cached_embeddings": cached}

    def row_counts(self) -> dict[str, int]:
        """Files, chunks and embedded chunks, remembered until the next write changes them (never waits on
        a write, unlike `counts`, which may count the embedding cache under the write lock)."""
        return self._row_counts()

    def _row_counts(self) -> dict[str, int]:
        """Files, chunks and embedded chunks, remembered until the next write changes them."""
        with self._count_lock:
            epoch, counts = self._count_epoch, self._counts
        if counts is None:
            files = self.reader.execute("SELECT count(*) FROM files").fetchone()[0]
            chunks = self.reader.execute("SELECT count(*) FROM chunks").fetchone()[0]
            waiting = self.reader.execute("SELECT count(*) FROM chunks WHERE model = ''").fetchone()[0]
            counts = {"files": files, "chunks": chunks, "embedded_chunks": chunks - waiting}
            with self._count_lock:
                if epoch == self._count_epoch:  # a count read across a write is not kept
                    self._counts = counts
        return dict(counts)

    def _counts_changed(self, cache_rows: int) -> None:
        """A write changed the counts: files and chunks are counted again, and the embedding cache's count (54 ms
        to count at a million rows) moves by `cache_rows`; the caller holds the write lock."""
        with self._count_lock:
            self._count_epoch += 1
            self._counts = None
            if self._cached_count is not None:
                self._cached_count += cache_rows

    # -- embedding cache ----------------------------------------------------------------------------

    def cache_get(self, provider: str, model: str, key_fp: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        rows = _cache_rows(self.reader, "hash, dims, vector", provider, model, key_fp, hashes)
        return {digest: _cached_vector(blob, dims) for digest, dims, blob in rows}

    def cache_put(self, provider: str, model: str, key_fp: str, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        with self._write_lock:
            with self.conn:
                known = sum(1 for _ in _cache_rows(self.conn, "hash", provider, model, key_fp, items))
                self.conn.executemany(
                    "INSERT OR REPLACE INTO embedding_cache(provider, model, key_fp, hash, dims, vector, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(provider, model, key_fp, h, len(v), _cache_blob(v), now) for h, v in items.items()],
                )
            self._counts_changed(cache_rows=len(items) - known)

    def copy_cache_from(self, other: Path) -> int:
        """Seed this index's embedding cache from another index file (used by the atomic reindex)."""
        with self._write_lock:
            self.conn.execute("ATTACH DATABASE ? AS seed", (str(other),))
            try:
                with self.conn:
                    self.conn.execute(
                        "INSERT OR IGNORE INTO embedding_cache(provider, model, key_fp, hash, dims, vector, created_at)"
                        " SELECT provider, model, key_fp, hash, dims, vector, created_at FROM seed.embedding_cache"
                    )
                    added = self.conn.changes()
                self._counts_changed(cache_rows=added)
                return added
            finally:
                self.conn.execute("DETACH DATABASE seed")
