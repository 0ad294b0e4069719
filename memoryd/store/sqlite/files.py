"""Files and their chunks: what a sync writes, one file per transaction."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from memoryd.store.rows import (
    ChunkVectors,
    FileRow,
    NewChunk,
    StoreChange,
    WindowVectors,
    file_change,
    one_row,
    vector_dims,
)
from memoryd.store.schema import FTS_INSERT
from memoryd.store.sqlite.vectors import Vectors as VectorRows


class Files(VectorRows):
    """Files and their chunks (with their keyword rows and, where given, their vectors)."""

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
        self.conn.executemany("DELETE FROM chunk_windows WHERE chunk_id = ?", params)
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
        chunks: Sequence[NewChunk],
        vectors: ChunkVectors | None,
        model: str,
        cursor: tuple[int, int, int] | None = None,
        append: bool = False,
        windows: WindowVectors | None = None,
    ) -> list[int]:
        """Swap a file's chunks for new ones (or, with append, add to them) in one transaction; returns the new ids.

        `vectors` holds one vector per chunk, or None for a chunk stored without one (embedded later): a chunk is
        keyword-searchable from this call on, whatever the embedder's pace; `windows` each chunk's window vectors.
        `cursor` is (inode, byte offset, lines read) for files read incrementally (transcripts)."""
        dims = vector_dims(chunks, vectors)
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
                    next_seq = "SELECT coalesce(max(seq) + 1, 0) FROM chunks WHERE file_id = ?"
                    first_seq = one_row(self.conn.execute(next_seq, (file_id,)).fetchone())[0]
                added = self._insert_chunks(file_id, first_seq, source, chunks, vectors, model, windows)
                if cursor is not None:
                    self.conn.execute(
                        "INSERT OR REPLACE INTO cursors(file_id, inode, offset, lines) VALUES (?, ?, ?, ?)",
                        (file_id, *cursor),
                    )
            self._notify(file_change(removed, added, vectors))
        return added

    def _insert_chunks(
        self,
        file_id: int,
        first_seq: int,
        source: str,
        chunks: Sequence[NewChunk],
        vectors: ChunkVectors | None,
        model: str,
        windows: WindowVectors | None = None,
    ) -> list[int]:
        added: list[int] = []
        for offset, chunk in enumerate(chunks):
            vector = vectors[offset] if vectors is not None else None
            self.conn.execute(
                "INSERT INTO chunks(file_id, seq, start_line, end_line, heading, context, text, hash, model, source,"
                " ts, kind, importance, source_lines, lang) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    chunk.language,
                ),
            )
            chunk_id = self.conn.last_insert_rowid()
            added.append(chunk_id)
            if self.fts_available:
                self.conn.execute(FTS_INSERT, (chunk_id, *chunk.terms))
            if vector is not None:
                self._insert_vector(chunk_id, vector)
                self._insert_windows(chunk_id, windows[offset] if windows is not None else None)
        return added

    def cursor(self, path: str) -> tuple[int, int, int] | None:
        """(inode, byte offset, lines read) of an incrementally read file."""
        row = self.reader.execute(
            "SELECT c.inode, c.offset, c.lines FROM cursors c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
            (path,),
        ).fetchone()
        return tuple(row) if row else None
