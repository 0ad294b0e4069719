"""Chunks as search reads them, and keyword ranking over FTS5 (bm25_topk where it is built)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from memoryd.store import topk
from memoryd.store.rows import ChunkFilter, ChunkRow, Match, is_glob, path_spellings
from memoryd.store.sqlite.base import Connections, rows_in
from memoryd_client.protocol.schema import SOURCES

MAX_REMEMBERED_FREQUENCIES = 100_000
FTS_THREADS = 2  # threads for a keyword search's side queries (bm25_many), beside the caller's own
# From this many chunks those queries run side by side; below it, on the caller's thread (a keyword search takes a
# few ms there, and each FTS thread holds a connection and its page cache: 100k chunks, RSS a minute after a full
# reindex 219 -> 229 MB with them)
PARALLEL_FTS_CHUNKS = 200_000


def filter_sql(filters: ChunkFilter, all_sources: Sequence[str]) -> tuple[str, list[object]]:
    """A WHERE clause over `chunks c JOIN files f`, and its parameters."""
    clauses: list[str] = []
    params: list[object] = []
    if filters.sources and set(filters.sources) != set(all_sources):
        clauses.append(f"c.source IN ({','.join('?' * len(filters.sources))})")
        params += list(filters.sources)
    if filters.path:
        spellings = path_spellings(filters.path)
        if is_glob(filters.path):
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


class Keyword(Connections):
    """Chunks as search reads them, and BM25 over their keyword rows."""

    def chunks_by_ids(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        rows = rows_in(
            self.reader,
            "SELECT c.id, f.path, c.source, c.start_line, c.end_line, c.heading, c.text, c.hash, f.mtime_ns,"
            " c.ts, c.kind, c.importance, c.source_lines FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id",
            list(ids),
        )
        return {row[0]: ChunkRow(*row) for row in rows}

    def chunk_ids(self, filters: ChunkFilter) -> set[int]:
        """Every chunk a filter lets through."""
        where, params = filter_sql(filters, SOURCES)
        rows = self.reader.execute(f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where}", params)
        return {r[0] for r in rows}

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
