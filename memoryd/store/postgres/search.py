"""Reading a namespace in PostgreSQL: chunks, BM25 over the keyword columns, and vectors through pgvector."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg
from psycopg import sql

from memoryd.store.postgres.files import Files, sent_vector, vector_text
from memoryd.store.postgres.terms import idf, match_query, phrase_query, phrase_tokens, score_sql
from memoryd.store.rows import ChunkFilter, ChunkRow, Match, Phrase, is_glob, one_row, path_spellings, window_matrix
from memoryd_client.protocol.schema import SOURCES

RANKING_THREADS = 2  # a search sends at most three keyword queries; the first runs on the caller's thread

MAX_REMEMBERED = 100_000
MAX_ROWS_KEPT = 4_096  # chunk rows kept between commits (a search reads a few dozen)
EF_SEARCH_MIN = 100  # HNSW candidates per search at least (pgvector's default is 40)
EF_SEARCH_MAX = 1_000  # pgvector's most; a language too small to fill a search from that many is scanned


def _glob_regex(pattern: str) -> str:
    """SQLite GLOB as a PostgreSQL regular expression (what the SQLite store's path filter means)."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("^") else body).replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "^" + "".join(out) + "$"


def filter_sql(filters: ChunkFilter) -> tuple[str, list[object]]:
    """A condition over `chunks c JOIN files f`, and its parameters (the SQLite store's filter_sql, for PostgreSQL)."""
    clauses: list[str] = []
    params: list[object] = []
    if filters.sources and set(filters.sources) != set(SOURCES):
        clauses.append("c.source = ANY(%s)")
        params.append(list(filters.sources))
    if filters.path:
        spellings = path_spellings(filters.path)
        if is_glob(filters.path):
            clauses.append("(" + " OR ".join("f.path ~ %s" for _ in spellings) + ")")
            params += [_glob_regex(p) for p in spellings]
        else:
            clauses.append("(" + " OR ".join("left(f.path, %s) = %s" for _ in spellings) + ")")
            for spelling in spellings:
                params += [len(spelling), spelling]
    if filters.after is not None:
        clauses.append("c.ts >= %s")
        params.append(filters.after)
    if filters.before is not None:
        clauses.append("c.ts < %s")
        params.append(filters.before)
    if filters.kinds:
        clauses.append("c.kind = ANY(%s)")
        params.append(list(filters.kinds))
    return " AND ".join(clauses) or "true", params


def read_vectors(cur: psycopg.Cursor, schema: sql.Identifier, ids: list[int]) -> dict[int, np.ndarray]:
    """The stored vectors of chosen chunks, on a cursor of the caller's."""
    cur.execute(
        sql.SQL("SELECT id, vector_send(embedding) FROM {}.chunks WHERE id = ANY(%s) AND embedding IS NOT NULL").format(
            schema
        ),
        (ids,),
    )
    return {int(r[0]): sent_vector(r[1]) for r in cur}


class Search(Files):
    """Chunks as search reads them, BM25, and vectors."""

    def chunks_by_ids(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The rows of chunks (those that exist), in id order. Rows read since the last commit made or heard of
        are kept: a search reads its keyword hits' rows, then its pool's, which are mostly the same."""
        wanted = sorted(set(map(int, ids)))
        if not wanted:
            return {}
        with self._cache_lock:
            epoch = self._epoch
            found = {i: self._rows[i] for i in wanted if i in self._rows}
        missing = [i for i in wanted if i not in found]
        if missing:
            with self.reading(replica=True) as cur:
                cur.execute(
                    sql.SQL(
                        "SELECT c.id, f.path, c.source, c.start_line, c.end_line, c.heading, c.text, c.hash,"
                        " f.mtime_ns, c.ts, c.kind, c.importance, c.source_lines FROM {s}.chunks c JOIN {s}.files f"
                        " ON f.id = c.file_id WHERE c.id = ANY(%s)"
                    ).format(s=self._s),
                    (missing,),
                )
                read = {row[0]: ChunkRow(*row) for row in cur}
            found.update(read)
            with self._cache_lock:
                if epoch == self._epoch:
                    if len(self._rows) + len(read) > MAX_ROWS_KEPT:
                        self._rows = {}
                    self._rows.update(read)
        return {i: found[i] for i in wanted if i in found}

    def chunk_ids(self, filters: ChunkFilter) -> set[int]:
        where, params = filter_sql(filters)
        with self.reading(replica=True) as cur:
            cur.execute(
                sql.SQL(f"SELECT c.id FROM {{s}}.chunks c JOIN {{s}}.files f ON f.id = c.file_id WHERE {where}").format(
                    s=self._s
                ),
                params,
            )
            return {r[0] for r in cur}

    # -- keyword ------------------------------------------------------------------------------------------
    def document_frequencies(self, tokens: Iterable[str]) -> dict[str, int]:
        """How many chunks hold each token (the vocabulary table, kept by every write)."""
        unique = list(dict.fromkeys(tokens))
        if not unique:
            return {}
        held = self.postings.catch_up()
        if held is not None:  # the same counts, without asking the server
            return {t: held.frequency(t) for t in unique}
        with self._cache_lock:
            known = {t: self._frequencies[t] for t in unique if t in self._frequencies}
            epoch = self._epoch
        missing = [t for t in unique if t not in known]
        if missing:
            with self.reading(replica=True) as cur:
                cur.execute(sql.SQL("SELECT term, doc FROM {}.vocab WHERE term = ANY(%s)").format(self._s), (missing,))
                found = dict(cur.fetchall())
            fresh = {t: found.get(t, 0) for t in missing}
            known.update(fresh)
            with self._cache_lock:
                if epoch == self._epoch:
                    if len(self._frequencies) > MAX_REMEMBERED:
                        self._frequencies = {}
                    self._frequencies.update(fresh)
        return {t: known.get(t, 0) for t in unique}

    def _hits_of(self, phrase: Phrase) -> int:
        """How many chunks hold a phrase in its columns (FTS5 counts these for its IDF too)."""
        tokens = phrase_tokens(phrase)
        if phrase.hits >= 0 and not phrase.columns and len(tokens) == 1:
            return phrase.hits
        if not phrase.columns and len(tokens) == 1:
            return self.document_frequencies(tokens)[tokens[0]]
        query = phrase_query(phrase)
        with self._cache_lock:
            if query in self._phrase_hits:
                return self._phrase_hits[query]
            epoch = self._epoch
        with self.reading(replica=True) as cur:
            cur.execute(sql.SQL("SELECT count(*) FROM {}.chunks WHERE tsv @@ %s::tsquery").format(self._s), (query,))
            hits = int(one_row(cur.fetchone())[0])
        with self._cache_lock:
            if epoch == self._epoch and len(self._phrase_hits) < MAX_REMEMBERED:
                self._phrase_hits[query] = hits
        return hits

    def bm25(
        self, query: str | Match, weights: Sequence[float], limit: int, filters: ChunkFilter | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, larger is better) of the chunks a query's phrase groups match, best first."""
        if not isinstance(query, Match) or not query.groups:
            raise ValueError("the PostgreSQL store takes a Match with phrase groups")
        tsquery = match_query(query.groups)
        if not tsquery or limit <= 0:
            return []
        phrases = [p for group in query.groups for p in group]
        totals = self._totals()
        rows = max(int(totals["chunks"]), 1)
        idfs = [idf(rows, self._hits_of(p)) for p in phrases]
        if filters is None or not filters.active:
            ranked = self.postings.rank(query, idfs, weights, totals["tokens"] / rows, limit, self._phrases_held)
            if ranked is not None:
                return ranked
        scoring = score_sql(phrases, idfs, weights, totals["tokens"] / rows)
        join, where = "", "true"
        filter_params: list[object] = []
        if filters is not None and filters.active:
            where, filter_params = filter_sql(filters)
            join = " JOIN {s}.files f ON f.id = c.file_id"
        matching = (
            f"SELECT c.id, c.doc_len{''.join(', ' + i for i in scoring.inner)}"
            f" FROM {{s}}.chunks c{join} WHERE c.tsv @@ %s::tsquery AND {where} OFFSET 0"
        )
        decoded = f"SELECT x.id, x.doc_len{''.join(', ' + d for d in scoring.decoded)} FROM ({matching}) x OFFSET 0"
        weighed = f"SELECT y.id, {', '.join(scoring.middle)} FROM ({decoded}) y OFFSET 0"
        statement = sql.SQL(
            f"SELECT z.id, {scoring.score} AS s FROM ({weighed}) z ORDER BY s DESC, z.id LIMIT %s"
        ).format(s=self._s)
        params = [
            *scoring.score_params,
            *scoring.middle_params,
            *scoring.inner_params,
            tsquery,
            *filter_params,
            limit,
        ]
        with self.reading(replica=True) as cur:
            cur.execute(statement, params)
            return [(int(r[0]), float(r[1])) for r in cur]

    def _phrases_held(self, queries: list[str], chunks: list[int]) -> dict[int, list[bool]]:
        """Whether each chunk holds each phrase (a tsquery of tokens in order), for the chunks asked."""
        tests = ", ".join("tsv @@ %s::tsquery" for _ in queries)
        with self.reading(replica=True) as cur:
            cur.execute(
                sql.SQL(f"SELECT id, {tests} FROM {{}}.chunks WHERE id = ANY(%s)").format(self._s), (*queries, chunks)
            )
            return {int(r[0]): list(r[1:]) for r in cur}

    def bm25_many(
        self, queries: Sequence[str | Match], weights: Sequence[float], limit: int, filters: ChunkFilter | None = None
    ) -> list[list[tuple[int, float]]]:
        """Each query's ranking: in turn where the daemon holds the postings (a handful of milliseconds each; on
        the two ranking threads that every search shares, eight clients' queries queued behind each other), else
        side by side on connections of their own (the server ranks them in parallel)."""
        if len(queries) < 2 or (self.postings.ready and not (filters is not None and filters.active)):
            return [self.bm25(q, weights, limit, filters) for q in queries]
        with self._cache_lock:
            if self._ranking is None:
                self._ranking = ThreadPoolExecutor(RANKING_THREADS, thread_name_prefix=f"pg-bm25-{self.namespace}")
            pool = self._ranking
        others = [pool.submit(self.bm25, q, weights, limit, filters) for q in queries[1:]]
        return [self.bm25(queries[0], weights, limit, filters), *(f.result() for f in others)]

    # -- vectors ------------------------------------------------------------------------------------------
    def iter_vectors(self, batch: int = 8_192) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every stored vector, as (ids, float32 matrix) pieces of at most `batch` rows (each piece is read as
        Python objects first, about three times its size: 65,536 rows at a time took a loading daemon to 760 MB)."""
        if not self.dims:
            return
        with self.borrowing():
            conn = self.live_reader(replica=True)
            with conn.transaction(), conn.cursor(name="vectors") as cur:
                cur.itersize = batch
                cur.execute(
                    sql.SQL(
                        "SELECT id, vector_send(embedding) FROM {}.chunks WHERE embedding IS NOT NULL ORDER BY id"
                    ).format(self._s)
                )
                while not self._closed and (rows := cur.fetchmany(batch)):  # a closed store stops here
                    yield (
                        np.array([r[0] for r in rows], dtype=np.int64),
                        np.stack([sent_vector(r[1]) for r in rows]),
                    )

    def vectors_by_ids(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        if not self.dims or not len(ids):
            return {}
        with self.reading(replica=True) as cur:
            return read_vectors(cur, self._s, list(map(int, ids)))

    def window_vectors(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The window vectors of chosen chunks (windows x dims), for those stored with them."""
        if not self.dims or not len(ids):
            return {}
        try:
            with self.reading(replica=True) as cur:
                cur.execute(
                    sql.SQL("SELECT id, windows FROM {}.chunks WHERE id = ANY(%s) AND windows IS NOT NULL").format(
                        self._s
                    ),
                    (list(map(int, ids)),),
                )
                return {r[0]: window_matrix(bytes(r[1]), self.dims) for r in cur}
        except psycopg.errors.UndefinedColumn:  # made by an older memoryd, not yet upgraded by its writer
            return {}

    def languages(self, ids: Sequence[int]) -> dict[int, str]:
        """The language of chosen chunks, for those with a known one."""
        if not len(ids):
            return {}
        try:
            with self.reading(replica=True) as cur:
                cur.execute(
                    sql.SQL("SELECT id, lang FROM {}.chunks WHERE id = ANY(%s) AND lang != ''").format(self._s),
                    (list(map(int, ids)),),
                )
                return {int(r[0]): r[1] for r in cur}
        except psycopg.errors.UndefinedColumn:  # made by an older memoryd, not yet upgraded by its writer
            return {}

    def nearest(
        self,
        query: np.ndarray,
        limit: int,
        allowed: set[int] | None = None,
        language: str | None = None,
        share: float = 1.0,
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the nearest chunks: through the HNSW index, or by an exact scan of `allowed`.
        With `language`, only that language's chunks, `share` of the whole (pgvector filters what the index
        found, so it looks that much further)."""
        if not self.dims or limit <= 0:
            return []
        wanted = math.ceil(2 * limit / max(share, 1e-6))
        if allowed is not None or (language is not None and wanted > EF_SEARCH_MAX):
            return self._scan(query, limit, allowed, language)
        text = vector_text(query)
        among = "lang = %s AND " if language is not None else ""
        with self.reading(replica=True) as cur:
            ef = min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, wanted))
            if self._ef.get(cur.connection) != ef:  # as last set on this connection (a new one has none)
                cur.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(ef)))
                self._ef[cur.connection] = ef  # the one it ran on (a lost connection is replaced)
            cur.execute(
                sql.SQL(
                    f"SELECT id, 1 - (embedding <=> %s::vector) FROM {{}}.chunks WHERE {among}embedding IS NOT NULL"
                    " ORDER BY embedding <=> %s::vector LIMIT %s"
                ).format(self._s),
                (text, *([language] if language is not None else []), text, limit),
            )
            return [(int(r[0]), float(r[1])) for r in cur]

    def exact_nearest(self, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """The same by an exact scan of every vector (the reference for HNSW recall)."""
        return self._scan(query, limit, None)

    def _scan(
        self, query: np.ndarray, limit: int, allowed: set[int] | None, language: str | None = None
    ) -> list[tuple[int, float]]:
        """Nearest chunks by an exact scan (ordering by an expression the HNSW index cannot serve)."""
        among = "id = ANY(%s) AND " if allowed is not None else ""
        among += "lang = %s AND " if language is not None else ""
        params = [*([list(allowed)] if allowed is not None else []), *([language] if language is not None else [])]
        with self.reading(replica=True) as cur:
            cur.execute(
                sql.SQL(
                    f"SELECT id, 1 - (embedding <=> %s::vector) AS sim FROM {{}}.chunks WHERE {among}"
                    "embedding IS NOT NULL ORDER BY sim DESC, id LIMIT %s"
                ).format(self._s),
                (vector_text(query), *params, limit),
            )
            return [(int(r[0]), float(r[1])) for r in cur]

    def sample_vectors(self, size: int) -> tuple[np.ndarray, list[str]]:
        """About `size` stored vectors drawn at random, with their chunks' languages (fusion reads how a query
        scores against them, and search how it scores against each language)."""
        embedded = self.row_counts()["embedded_chunks"]
        if not self.dims or not embedded:
            return np.zeros((0, max(self.dims, 1)), dtype=np.float32), []
        percent = min(100.0, 100.0 * 2 * size / embedded)
        with self.reading(replica=True) as cur:
            cur.execute(
                sql.SQL(
                    "SELECT id, vector_send(embedding) FROM {}.chunks TABLESAMPLE BERNOULLI (%s)"
                    " WHERE embedding IS NOT NULL LIMIT %s"
                ).format(self._s),
                (percent, size),
            )
            rows = cur.fetchall()
        if not rows:
            return np.zeros((0, self.dims), dtype=np.float32), []
        known = self.languages([r[0] for r in rows])
        return np.stack([sent_vector(r[1]) for r in rows]), [known.get(int(r[0]), "") for r in rows]
