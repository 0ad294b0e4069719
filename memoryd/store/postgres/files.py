"""Files and their chunks in PostgreSQL: what a sync writes, one file per transaction, with the vocabulary's
document counts and the namespace's totals kept in the same transaction."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import structlog
from psycopg import sql
from psycopg.types.json import Jsonb

from memoryd.store.errors import DiskFull, RequestFailed
from memoryd.store.interface import StoreUnavailable
from memoryd.store.postgres.schema import (
    CHANGES_KEPT,
    VECTOR_INDEX_PENDING,
    hnsw_build_memory,
    vector_column,
    vector_index,
)
from memoryd.store.postgres.state import State
from memoryd.store.postgres.terms import document_terms, encode
from memoryd.store.rows import (
    ChunkVectors,
    FileRow,
    NewChunk,
    StoreChange,
    Unembedded,
    WindowVectors,
    attached_change,
    file_change,
    one_row,
    vector_dims,
    window_blob,
)

FILE_COLUMNS = "id, path, abs_path, source, hash, mtime_ns, size"
log = structlog.get_logger("memoryd.postgres")


def vector_text(vector: np.ndarray) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(np.char.mod("%.8g", np.asarray(vector, dtype=np.float32))) + "]"


def sent_vector(data: bytes) -> np.ndarray:
    """A vector as pgvector's `vector_send` gives it: dimensions and a reserved word (int16 each), then big-endian
    float32s; read without parsing text (a search reads up to hundreds of them)."""
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


class Files(State):
    """Files and their chunks (with their keyword columns and, where given, their vectors)."""

    def files(self) -> dict[str, FileRow]:
        with self.reading() as cur:
            cur.execute(sql.SQL(f"SELECT {FILE_COLUMNS} FROM {{}}.files").format(self._s))
            return {r[1]: FileRow(*r) for r in cur}

    def file_row(self, path: str) -> FileRow | None:
        with self.reading() as cur:
            cur.execute(sql.SQL(f"SELECT {FILE_COLUMNS} FROM {{}}.files WHERE path = %s").format(self._s), (path,))
            row = cur.fetchone()
        return FileRow(*row) if row else None

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        with self.writing() as cur:
            cur.execute(
                sql.SQL("UPDATE {}.files SET mtime_ns = %s, size = %s WHERE path = %s").format(self._s),
                (mtime_ns, size, path),
            )

    def _delete_chunks(self, cur, where: sql.Composable, params: Sequence[object]) -> list[int]:
        """Delete chunks, taking their tokens out of the vocabulary and their sizes out of the totals."""
        s = self._s
        cur.execute(
            sql.SQL(
                "WITH gone AS (DELETE FROM {s}.chunks c WHERE {w} RETURNING id, tf, doc_len, model)"
                " SELECT id, doc_len, model <> '', ARRAY(SELECT jsonb_object_keys(tf)) FROM gone"
            ).format(s=s, w=where),
            params,
        )
        rows = cur.fetchall()
        if not rows:
            return []
        self._log_changes(cur, [r[0] for r in rows], "r")
        terms: Counter[str] = Counter()
        for _, _, _, keys in rows:
            terms.update(keys)
        self._count_terms(cur, terms, -1)
        cur.execute(
            sql.SQL("UPDATE {}.totals SET chunks = chunks - %s, embedded = embedded - %s, tokens = tokens - %s").format(
                s
            ),
            (len(rows), sum(1 for r in rows if r[2]), sum(r[1] for r in rows)),
        )
        return [r[0] for r in rows]

    def _log_changes(self, cur, chunks: Sequence[int], op: str) -> None:
        """The change log's rows for chunks added ('a'), removed ('r') or given a vector ('v'), in this transaction
        (schema.CHANGES)."""
        cur.execute(
            sql.SQL("INSERT INTO {}.changes(chunk, op) SELECT unnest(%s::bigint[]), %s").format(self._s),
            (list(chunks), op),
        )

    def _count_terms(self, cur, terms: Counter[str], sign: int) -> None:
        if not terms:
            return
        keys = list(terms)
        amounts = [sign * terms[k] for k in keys]
        cur.execute(
            sql.SQL(
                "INSERT INTO {s}.vocab(term, doc) SELECT * FROM unnest(%s::text[], %s::int[])"
                " ON CONFLICT (term) DO UPDATE SET doc = {s}.vocab.doc + excluded.doc"
            ).format(s=self._s),
            (keys, amounts),
        )
        if sign < 0:
            cur.execute(sql.SQL("DELETE FROM {}.vocab WHERE term = ANY(%s) AND doc <= 0").format(self._s), (keys,))

    def delete_files(self, paths: Iterable[str]) -> int:
        """Remove files and every trace of their chunks in one transaction; returns chunks removed."""
        paths = list(paths)
        if not paths:
            return 0
        with self.writing() as cur:
            removed = self._delete_chunks(
                cur, sql.SQL("c.file_id IN (SELECT id FROM {}.files WHERE path = ANY(%s))").format(self._s), (paths,)
            )
            cur.execute(sql.SQL("DELETE FROM {}.files WHERE path = ANY(%s)").format(self._s), (paths,))
            cur.execute(sql.SQL("UPDATE {}.totals SET files = files - %s").format(self._s), (cur.rowcount,))
        if removed:
            self._notify(StoreChange(tuple(removed), (), None))
        return len(removed)

    def ensure_vectors(self, dims: int) -> None:
        current = self.dims
        if current and current != dims:
            raise ValueError(f"index holds {current}-dimensional vectors, got {dims}")
        if current:
            return
        with self.writing() as cur:
            cur.execute(vector_column(self.schema, dims))
            cur.executemany(
                sql.SQL(
                    "INSERT INTO {}.meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                ).format(self._s),
                [("dims", str(dims)), (VECTOR_INDEX_PENDING, "1")],
            )
        self._dims = dims

    def _prune_changes(self) -> None:
        if not self.writable:
            return
        with self.reading() as cur:
            cur.execute(sql.SQL("SELECT min(seq), max(seq) FROM {}.changes").format(self._s))
            first, last = one_row(cur.fetchone())
        if first is None or last - first < CHANGES_KEPT + CHANGES_KEPT // 10:
            return
        floor = int(last) - CHANGES_KEPT
        with self.writing() as cur:
            cur.execute(sql.SQL("DELETE FROM {}.changes WHERE seq <= %s").format(self._s), (floor,))
            cur.execute(
                sql.SQL(
                    "INSERT INTO {}.meta VALUES ('changes_pruned_below', %s) ON CONFLICT (key)"
                    " DO UPDATE SET value = excluded.value"
                ).format(self._s),
                (str(floor),),
            )

    def settle(self) -> None:
        """Build the vector index that the namespace's first vectors put off (schema.vector_index), once they are
        in; searches meanwhile rank vectors by an exact scan. A daemon that died first builds it at its next sync.
        The change log is cut to its last CHANGES_KEPT rows."""
        self._prune_changes()
        if not self.writable or not self.dims or self.get_meta(VECTOR_INDEX_PENDING) is None:
            return
        embedded = self.row_counts()["embedded_chunks"]
        started = time.perf_counter()
        try:
            with self.writing() as cur:
                cur.execute("SET LOCAL statement_timeout = 0")
                cur.execute("SELECT pg_size_bytes(current_setting('maintenance_work_mem'))")
                if (wanted := hnsw_build_memory(embedded, self.dims)) > int(one_row(cur.fetchone())[0]):
                    memory = sql.Literal(f"{wanted // 1024}kB")
                    cur.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(memory))
                cur.execute(vector_index(self.schema))
                cur.execute(sql.SQL("DELETE FROM {}.meta WHERE key = %s").format(self._s), (VECTOR_INDEX_PENDING,))
        except (RequestFailed, DiskFull, StoreUnavailable) as exc:  # the rows are in; searches scan until it is built
            log.warning("vector index not built; retried at the next sync", namespace=self.namespace, error=str(exc))
            return
        log.info(
            "vector index built", namespace=self.namespace, vectors=embedded, s=round(time.perf_counter() - started, 1)
        )

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
        """Swap a file's chunks for new ones (or, with append, add to them) in one transaction; returns the new ids."""
        dims = vector_dims(chunks, vectors)
        if dims:
            self.ensure_vectors(dims)
        s = self._s
        with self.writing() as cur:
            cur.execute(sql.SQL("SELECT id FROM {}.files WHERE path = %s FOR UPDATE").format(s), (path,))
            row = cur.fetchone()
            removed = [] if append or not row else self._delete_chunks(cur, sql.SQL("c.file_id = %s"), (row[0],))
            now = time.time()
            if row:
                file_id = row[0]
                cur.execute(
                    sql.SQL(
                        "UPDATE {}.files SET abs_path=%s, source=%s, hash=%s, mtime_ns=%s, size=%s, indexed_at=%s"
                        " WHERE id=%s"
                    ).format(s),
                    (abs_path, source, hash, mtime_ns, size, now, file_id),
                )
            else:
                cur.execute(
                    sql.SQL(
                        "INSERT INTO {}.files(path, abs_path, source, hash, mtime_ns, size, indexed_at)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id"
                    ).format(s),
                    (path, abs_path, source, hash, mtime_ns, size, now),
                )
                file_id = one_row(cur.fetchone())[0]
                cur.execute(sql.SQL("UPDATE {}.totals SET files = files + 1").format(s))
            first_seq = 0
            if append:
                cur.execute(
                    sql.SQL("SELECT coalesce(max(seq) + 1, 0) FROM {}.chunks WHERE file_id = %s").format(s), (file_id,)
                )
                first_seq = one_row(cur.fetchone())[0]
            added = self._insert_chunks(cur, file_id, first_seq, source, chunks, vectors, model, windows)
            if cursor is not None:
                cur.execute(
                    sql.SQL(
                        'INSERT INTO {}.cursors(file_id, inode, "offset", lines) VALUES (%s, %s, %s, %s)'
                        ' ON CONFLICT (file_id) DO UPDATE SET inode = excluded.inode, "offset" = excluded."offset",'
                        " lines = excluded.lines"
                    ).format(s),
                    (file_id, *cursor),
                )
        self._notify(file_change(removed, added, vectors))
        return added

    def _insert_chunks(
        self,
        cur,
        file_id: int,
        first_seq: int,
        source: str,
        chunks: Sequence[NewChunk],
        vectors: ChunkVectors | None,
        model: str,
        windows: WindowVectors | None = None,
    ) -> list[int]:
        if not chunks:
            return []
        rows = []
        terms: Counter[str] = Counter()
        tokens = 0
        embedded = 0
        for offset, chunk in enumerate(chunks):
            vector = vectors[offset] if vectors is not None else None
            chunk_windows = windows[offset] if windows is not None and vector is not None else None
            encoded = encode(chunk.terms)
            terms.update(document_terms(chunk.terms))
            tokens += encoded.length
            embedded += vector is not None
            rows.append(
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
                    encoded.length,
                    Jsonb(encoded.counts),
                    encoded.tsvector,
                    window_blob(chunk_windows) if chunk_windows is not None else None,
                    chunk.language,
                    vector_text(vector) if vector is not None else None,
                )
            )
        vector_part = ", embedding" if self.dims else ""
        vector_value = ", %s::vector" if self.dims else ""
        statement = sql.SQL(
            "INSERT INTO {}.chunks(file_id, seq, start_line, end_line, heading, context, text, hash, model, source,"
            f" ts, kind, importance, source_lines, doc_len, tf, tsv, windows, lang{vector_part}) VALUES"
            f" (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s, %s{vector_value})"
            " RETURNING id"
        ).format(self._s)
        cur.executemany(statement, rows if self.dims else [r[:-1] for r in rows], returning=True)
        added = []
        while True:
            added.append(one_row(cur.fetchone())[0])
            if not cur.nextset():
                break
        self._log_changes(cur, added, "a")
        self._count_terms(cur, terms, 1)
        cur.execute(
            sql.SQL("UPDATE {}.totals SET chunks = chunks + %s, embedded = embedded + %s, tokens = tokens + %s").format(
                self._s
            ),
            (len(rows), embedded, tokens),
        )
        return added

    def cursor(self, path: str) -> tuple[int, int, int] | None:
        with self.reading() as cur:
            cur.execute(
                sql.SQL(
                    'SELECT c.inode, c."offset", c.lines FROM {s}.cursors c JOIN {s}.files f ON f.id = c.file_id'
                    " WHERE f.path = %s"
                ).format(s=self._s),
                (path,),
            )
            row = cur.fetchone()
        return tuple(row) if row else None

    # -- vectors added later --------------------------------------------------------------------------
    def set_vectors(
        self,
        chunk_ids: Sequence[int],
        hashes: Sequence[str],
        vectors: np.ndarray,
        model: str,
        windows: WindowVectors | None = None,
    ) -> int:
        """Attach vectors (and window vectors) to chunks stored without one, if their text is still the hashed one."""
        if not len(chunk_ids):
            return 0
        self.ensure_vectors(vectors.shape[1])
        blobs = [window_blob(w) if w is not None else None for w in windows] if windows is not None else None
        with self.writing() as cur:
            cur.execute(
                sql.SQL(
                    "UPDATE {s}.chunks c SET embedding = v.e::vector, model = %s, windows = v.w"
                    " FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::bytea[]) AS v(id, hash, e, w)"
                    " WHERE c.id = v.id AND c.hash = v.hash AND c.model = '' RETURNING c.id"
                ).format(s=self._s),
                (
                    model,
                    list(map(int, chunk_ids)),
                    list(hashes),
                    [vector_text(v) for v in vectors],
                    blobs or [None] * len(chunk_ids),
                ),
            )
            live = [r[0] for r in cur.fetchall()]
            self._log_changes(cur, live, "v")
            cur.execute(sql.SQL("UPDATE {}.totals SET embedded = embedded + %s").format(self._s), (len(live),))
        if live:
            self._notify(attached_change(chunk_ids, live, vectors))
        return len(live)

    def unembedded(self, limit: int = 1000) -> list[Unembedded]:
        with self.reading() as cur:
            cur.execute(
                sql.SQL(
                    "SELECT id, hash, context, text, heading FROM {}.chunks WHERE model = '' ORDER BY id LIMIT %s"
                ).format(self._s),
                (limit,),
            )
            return [Unembedded(*r) for r in cur]

    def has_vectors(self) -> bool:
        return self.row_counts()["embedded_chunks"] > 0
