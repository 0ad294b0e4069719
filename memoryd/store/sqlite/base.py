"""A SQLite index's connections, metadata, counts and listeners: what every other part of the store builds on."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import apsw
import structlog

from memoryd.durable import private_file, private_folder
from memoryd.store import topk
from memoryd.store.rows import StoreChange, one_row
from memoryd.store.schema import FTS_DDL, VOCAB_DDL, migrate

ChangeListener = Callable[[StoreChange], None]
IN_BATCH = 500  # keys one query's IN list takes


def rows_in(
    conn: apsw.Connection, select: str, keys: Sequence[object], params: Sequence[object] = ()
) -> Iterator[tuple]:
    """The rows of `select` ending in "<column> IN (keys)", IN_BATCH keys a query; `params` come before the keys."""
    for start in range(0, len(keys), IN_BATCH):
        part = list(keys[start : start + IN_BATCH])
        yield from conn.execute(f"{select} IN ({','.join('?' * len(part))})", (*params, *part))


def load_sqlite_vec(conn: apsw.Connection) -> str | None:
    """Load sqlite-vec; returns why not, or None when it loaded."""
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        return None
    except Exception as exc:  # any failure means: use the fallback scan
        return f"sqlite-vec unavailable: {exc}"


log = structlog.get_logger("memoryd.store")


class Connections:
    """Owns the connections to one index file. Writes go through one connection, reads through another per
    thread."""

    def __init__(self, path: Path, *, use_sqlite_vec: bool = True) -> None:
        self.path = Path(path)
        private_folder(self.path.parent)
        private_file(self.path)  # indexes hold every note and transcript: never another user's to read
        self._write_lock = threading.RLock()
        self._scrubbing = 0  # open scrubbed() scopes: secure_delete stays on while any is
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
        self.vec_error = load_sqlite_vec(self.conn) if use_sqlite_vec else "sqlite-vec disabled"
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
                load_sqlite_vec(conn)
            self._local.topk = self.fts_error is None and self.ranking_error is None and topk.load(conn) is None
            self._local.conn = conn
            with self._readers_lock:
                self._readers = [*self._live_readers(), (threading.current_thread(), conn)]
        return conn

    def _live_readers(self) -> list[tuple[threading.Thread, apsw.Connection]]:
        """The readers whose threads still run; the others are closed (no thread can reach them again, and each
        holds a page cache). Threads that end, such as a caller's own, read too."""
        live = []
        for thread, conn in self._readers:
            if thread.is_alive():
                live.append((thread, conn))
            else:
                conn.close()
        return live

    @contextlib.contextmanager
    def scrubbed(self) -> Iterator[None]:
        """Deletions made inside zero what they free (`secure_delete`, on the writer connection while any scope is
        open). When the last open scope ends, the keyword index is merged into one segment (which leaves none of the
        deleted rows' words in it), the file is rebuilt (VACUUM: a text an earlier edit deleted without a purge may
        still be in a page), and the write-ahead log is emptied into the file (it keeps the pages from before the
        deletion). The write lock is held to switch, and then to merge and rebuild (writes wait that long), never
        across the scope: the deletions inside take it after the agent's own locks, as every write does."""
        with self._write_lock:
            self._scrubbing += 1
            if self._scrubbing == 1:
                self.conn.execute("PRAGMA secure_delete=ON")
        try:
            yield
        finally:
            with self._write_lock:
                self._scrubbing -= 1
                if not self._scrubbing:
                    self._scrub()

    def _scrub(self) -> None:
        """Merge, rebuild and empty the log after the last scope; each step that fails is logged, and the others
        still run (the note is purged already; its text may stay in the files until their pages are reused)."""
        steps: list[tuple[str, Callable[[], object]]] = [
            ("merge", self._merge_keywords),
            ("secure_delete", lambda: self.conn.execute("PRAGMA secure_delete=OFF")),
            ("vacuum", lambda: self.conn.execute("VACUUM")),
            # readers still on older pages hold this up to the busy timeout; the next checkpoint empties it
            ("checkpoint", lambda: self.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)),
        ]
        for step, run in steps:
            try:
                run()
            except apsw.Error as exc:
                log.warning("purge_scrub_failed", path=str(self.path), step=step, error=str(exc))

    def _merge_keywords(self) -> None:
        if self.fts_error is None:
            with self.conn:
                self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")

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

    def flush_access(self) -> bool:
        """Write what is counted in memory before closing (the access part of the store does)."""
        return True

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

    def subscribe(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    def _notify(self, change: StoreChange) -> None:
        self._counts_changed(cache_rows=0)
        self._frequencies = {}
        for listener in self._listeners:
            listener(change)

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

    def counts(self) -> dict[str, int]:
        """Files, chunks, embedded chunks and cached embeddings, counted on indexes only: `status` is polled, and
        counting embedded chunks by reading every chunk row took 0.18 s with the pages cached and over 30 s without
        them at a million chunks (now 8 ms; the embedding cache's 54 ms once, then kept up to date by each cache
        write)."""
        with self._count_lock:
            cached = self._cached_count
        if cached is None:
            with self._write_lock:  # cache writes move the count under this lock: none can land between
                cached = one_row(self.reader.execute("SELECT count(*) FROM embedding_cache").fetchone())[0]
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
            files = one_row(self.reader.execute("SELECT count(*) FROM files").fetchone())[0]
            chunks = one_row(self.reader.execute("SELECT count(*) FROM chunks").fetchone())[0]
            waiting = one_row(self.reader.execute("SELECT count(*) FROM chunks WHERE model = ''").fetchone())[0]
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

    def chunk_count(self) -> int:
        """Number of chunks, remembered between writes (it sizes keyword query pruning)."""
        return self._row_counts()["chunks"]
