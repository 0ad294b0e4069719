"""A namespace's keyword postings held in the daemon, so that BM25 is ranked here, as FTS5 ranks in the SQLite
store, and not row by row in SQL (where it cost about 5 µs a matching chunk, a heap page each, and most of a
search at 100k chunks).

Each token maps to the chunks holding it and their packed per-column counts (terms.pack), read once from the
chunks' `tf` maps, then kept in step through the namespace's change log (schema.CHANGES): every chunk a writer adds
or removes is a row there, in commit order. A search first reads what the log gained since (only after this daemon
heard of a commit, or made one), so it ranks what the store holds. A reindex makes the namespace anew (another
`index_generation`), and the postings are read again; until they are, and where the log is missing (a namespace
an older memoryd made), searches rank in SQL as before.

Scores are the SQL ranking's (terms.score_sql), term for term; phrases of several tokens are matched by position in
SQL, for the chunks holding all their tokens only."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import psycopg
import structlog
from psycopg import sql

from memoryd.store.postgres import changelog
from memoryd.store.postgres.liveness import answers
from memoryd.store.postgres.terms import COUNT_BITS, K1, MAX_COUNT, B, phrase_query, phrase_tokens
from memoryd.store.rows import Match

log = structlog.get_logger("memoryd.postgres")

LOAD_BATCH = 20_000  # chunks read at a time while loading
RELOAD_DEAD_SHARE = 0.25  # removed chunks (their postings still held, skipped) past this share: read them all again
EMPTY = np.zeros(0, dtype=np.int64)


@dataclass
class _Postings:
    """Everything held: token -> (chunk ids, packed counts), each chunk's token count, which chunks are live."""

    at: changelog.Position  # the change log's last row applied
    ids: dict[str, np.ndarray] = field(default_factory=dict)
    counts: dict[str, np.ndarray] = field(default_factory=dict)
    doc_len: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    postings: int = 0
    chunks: int = 0  # live ones
    dead: int = 0  # removed chunks, whose postings are still in the arrays (skipped)

    def grow(self, top: int) -> None:
        if top >= len(self.live):
            size = max(top + 1, len(self.live) * 5 // 4 + 1024)
            self.live = np.concatenate([self.live, np.zeros(size - len(self.live), dtype=bool)])
            self.doc_len = np.concatenate([self.doc_len, np.zeros(size - len(self.doc_len), dtype=np.int32)])

    def add(self, rows: Sequence[tuple[int, int, dict[str, int]]]) -> None:
        """Chunks (id, token count, token -> packed counts) added to the store."""
        if not rows:
            return
        self.grow(max(r[0] for r in rows))
        by_token: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for chunk, length, tf in rows:
            if self.live[chunk]:
                continue  # already held (read while loading, then found in the log)
            self.live[chunk] = True
            self.chunks += 1
            self.doc_len[chunk] = length
            for token, packed in tf.items():
                if isinstance(packed, int):
                    by_token[token].append((chunk, packed))
                else:  # an older memoryd's array of four counts
                    by_token[token].append((chunk, sum(int(c) << (COUNT_BITS * i) for i, c in enumerate(packed))))
        for token, pairs in by_token.items():
            new = np.array(pairs, dtype=np.int64)
            held = self.ids.get(token)
            if held is None:
                self.ids[token], self.counts[token] = new[:, 0].copy(), new[:, 1].copy()
            else:
                self.ids[token] = np.concatenate([held, new[:, 0]])
                self.counts[token] = np.concatenate([self.counts[token], new[:, 1]])
            self.postings += len(pairs)

    def remove(self, chunks: Sequence[int]) -> None:
        for chunk in chunks:
            if 0 <= chunk < len(self.live) and self.live[chunk]:
                self.live[chunk] = False
                self.chunks -= 1
                self.dead += 1

    def lists(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The live chunks holding a token, and its counts there."""
        ids = self.ids.get(token)
        if ids is None:
            return EMPTY, EMPTY
        counts = self.counts[token]
        if self.dead:
            keep = self.live[ids]
            return ids[keep], counts[keep]
        return ids, counts


class KeywordPostings:
    """The postings of one namespace (a Store's), loaded in the background and kept in step with its change log."""

    def __init__(self, store: changelog.Followed) -> None:
        self._store = store
        self._lock = threading.Lock()  # held while applying the log; searches read under it too (numpy releases it)
        self._held: _Postings | None = None
        self._loading = False
        self._behind = True  # a commit may have been made since the log was last read
        self._missing_until = 0.0  # monotonic: the namespace has no change log (an older memoryd's) until then

    @property
    def ready(self) -> bool:
        return self._held is not None

    @property
    def nbytes(self) -> int:
        held = self._held
        if held is None:
            return 0
        return int(
            sum(a.nbytes for a in held.ids.values())
            + sum(a.nbytes for a in held.counts.values())
            + held.live.nbytes
            + held.doc_len.nbytes
        )

    def stale(self) -> None:
        """A commit was made or heard of: the next search reads the log first."""
        self._behind = True

    def drop(self) -> None:
        with self._lock:
            self._held = None
            self._behind = True

    def start(self) -> None:
        """Load the postings in the background, unless held, loading, or known to be impossible."""
        with self._lock:
            if self._held is not None or self._loading or time.monotonic() < self._missing_until:
                return
            self._loading = True
        threading.Thread(target=self._load, name=f"pg-postings-{self._store.namespace}", daemon=True).start()

    def _load(self) -> None:
        try:
            held = self._read_all()
            with self._lock:
                self._held = held
            if held is not None:
                log.info(
                    "keyword postings held in the daemon",
                    namespace=self._store.namespace,
                    chunks=int(held.live.sum()),
                    postings=held.postings,
                    mb=round(self.nbytes / 1e6, 1),
                )
        except Exception as exc:  # a store whose postings cannot be held still searches, in SQL
            if not self._store._closed:
                log.warning("keyword postings not held", namespace=self._store.namespace, error=f"{exc}")
        finally:
            self._loading = False

    def _read_all(self) -> _Postings | None:
        """Every chunk's counts, with the log position they are as of (one snapshot)."""
        with self._store.borrowing():
            conn = self._store.reader(replica=True)
            if not answers(conn):  # dropped by a server restart while idle: the next one taken is new
                conn = self._store.reader(replica=True)
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                try:
                    at = changelog.position(conn, self._store._s)
                except psycopg.errors.UndefinedTable:  # an older memoryd's namespace, until its writer upgrades it
                    self._missing_until = time.monotonic() + changelog.MISSING_RETRY_SECONDS
                    return None
                if at is None:
                    return None
                held = _Postings(at)
                last = 0
                with conn.cursor() as cur:
                    while True:
                        cur.execute(
                            sql.SQL("SELECT id, doc_len, tf FROM {}.chunks WHERE id > %s ORDER BY id LIMIT %s").format(
                                self._store._s
                            ),
                            (last, LOAD_BATCH),
                        )
                        rows = cur.fetchall()
                        if not rows:
                            break
                        held.add(rows)
                        last = rows[-1][0]
        return held

    def catch_up(self) -> _Postings | None:
        """The postings as the store holds them now (reading the log if a commit was made), None when not held."""
        held = self._held
        if held is None:
            self.start()
            return None
        if not self._behind:
            return held
        with self._lock:
            held = self._held
            if held is None or not self._behind:
                return held
            self._behind = False
            try:
                self._apply_log(held)
            except psycopg.errors.UndefinedTable:  # the log was dropped (an older memoryd's tables restored)
                self._held = None
                self._missing_until = time.monotonic() + changelog.MISSING_RETRY_SECONDS
            except Exception:
                self._behind = True
                raise
            held = self._held
        if held is None:  # read anew in the background; ranked in SQL meanwhile
            self.start()
        return held

    def _apply_log(self, held: _Postings) -> None:
        log_rows = changelog.gained(self._store, held.at)
        if log_rows.lost:
            self._held = None  # another index (a reindex), or the log no longer reaches back this far
            return
        removed = set(log_rows.of("r"))
        added = [c for c in log_rows.of("a") if c not in removed]
        if added:
            with self._store.reading(replica=True) as cur:
                cur.execute(
                    sql.SQL("SELECT id, doc_len, tf FROM {}.chunks WHERE id = ANY(%s)").format(self._store._s), (added,)
                )
                held.add(cur.fetchall())
        held.remove(sorted(removed))
        held.at = changelog.Position(held.at.generation, log_rows.last)
        if held.dead > RELOAD_DEAD_SHARE * max(held.chunks, 1):
            self._held = None

    def rank(
        self,
        match: Match,
        idfs: Sequence[float],
        weights: Sequence[float],
        avg_length: float,
        limit: int,
        verify: Callable[[list[str], list[int]], dict[int, list[bool]]],
    ) -> list[tuple[int, float]] | None:
        """(chunk id, BM25) of the chunks matching every group of `match`, best first, as the SQL ranking scores
        them; None when the postings are not held."""
        held = self.catch_up()
        if held is None:
            return None
        return _ranked(held, match, idfs, weights, avg_length, limit, verify)


def _column_counts(packed: np.ndarray, column: int) -> np.ndarray:
    return (packed >> (COUNT_BITS * column)) & MAX_COUNT


def _ranked(
    held: _Postings,
    match: Match,
    idfs: Sequence[float],
    weights: Sequence[float],
    avg_length: float,
    limit: int,
    verify: Callable[[list[str], list[int]], dict[int, list[bool]]],
) -> list[tuple[int, float]]:
    """BM25 of the chunks matching every group of `match`, summed phrase by phrase in the order terms.score_sql sums
    them (so that scores are the SQL ranking's to the last bit). Each phrase of one token is scored over the chunks
    holding that token only; phrases of several tokens over every candidate."""
    phrases = [p for group in match.groups for p in group]
    group_of = [g for g, group in enumerate(match.groups) for _ in group]
    tokens_of = [phrase_tokens(p) for p in phrases]
    lists = {t: held.lists(t) for t in dict.fromkeys(t for tokens in tokens_of for t in tokens)}
    if limit <= 0 or not any(len(ids) for ids, _ in lists.values()):
        return []
    # candidates: every chunk holding a token, in id order; `slot` maps a chunk id to its place among them
    marked = np.zeros(len(held.live), dtype=bool)
    for token_ids, _ in lists.values():
        marked[token_ids] = True
    ids = np.flatnonzero(marked)
    n = len(ids)
    slot = np.empty(len(held.live), dtype=np.int32)
    slot[ids] = np.arange(n, dtype=np.int32)
    places = {t: slot[token_ids] for t, (token_ids, _) in lists.items()}
    norm = K1 * (1 - B + B * held.doc_len[ids].astype(np.float64) / max(avg_length, 1e-9))
    matched = np.zeros((len(match.groups), n), dtype=bool)
    dense: dict[int, np.ndarray] = {}  # phrases of several tokens: frequency over every candidate
    positional: list[int] = []
    for index, (phrase, tokens) in enumerate(zip(phrases, tokens_of, strict=True)):
        if len(tokens) < 2:
            continue
        frequency = np.zeros(n, dtype=np.float64)
        present = np.zeros(n, dtype=bool)
        spread = []
        for t in tokens:
            values = np.zeros(n, dtype=np.int64)
            values[places[t]] = lists[t][1]
            spread.append(values)
        for column in phrase.columns or range(4):
            least = np.minimum.reduce([_column_counts(c, column) for c in spread])
            present |= least > 0
            if weights[column]:
                frequency += float(weights[column]) * least
        dense[index] = frequency
        positional.append(index)
        matched[group_of[index]] |= present  # for now: which chunks could hold it (verified below)
    single = [i for i, tokens in enumerate(tokens_of) if len(tokens) == 1]
    for index in single:
        packed = lists[tokens_of[index][0]][1]
        held_any = np.zeros(len(packed), dtype=bool)
        for column in phrases[index].columns or range(4):
            held_any |= _column_counts(packed, column) > 0
        matched[group_of[index], places[tokens_of[index][0]][held_any]] = True
    if positional:
        possible = np.logical_and.reduce(matched)
        candidates = ids[possible & np.logical_or.reduce([dense[i] > 0 for i in positional])].tolist()
        answers = verify([phrase_query(phrases[i]) for i in positional], candidates) if candidates else {}
        holds = np.zeros((len(positional), n), dtype=bool)
        if answers:
            at = slot[np.fromiter(answers, dtype=np.int64, count=len(answers))]
            holds[:, at] = np.array(list(answers.values()), dtype=bool).T
        matched[:] = False  # again, with the phrases of several tokens where they hold
        for index in single:
            packed = lists[tokens_of[index][0]][1]
            held_any = np.zeros(len(packed), dtype=bool)
            for column in phrases[index].columns or range(4):
                held_any |= _column_counts(packed, column) > 0
            matched[group_of[index], places[tokens_of[index][0]][held_any]] = True
        for row, index in enumerate(positional):
            dense[index] = np.where(holds[row], dense[index], 0.0)
            matched[group_of[index]] |= holds[row]
    keep = np.logical_and.reduce(matched)
    if not keep.any():
        return []
    score = np.zeros(n, dtype=np.float64)
    for index, tokens in enumerate(tokens_of):
        if index in dense:
            frequency = dense[index]
            score += float(idfs[index]) * frequency * (K1 + 1) / (frequency + norm)
        elif tokens:
            packed = lists[tokens[0]][1]
            frequency = np.zeros(len(packed), dtype=np.float64)
            for column in phrases[index].columns or range(4):
                if weights[column]:
                    frequency += float(weights[column]) * _column_counts(packed, column)
            at = places[tokens[0]]
            score[at] += float(idfs[index]) * frequency * (K1 + 1) / (frequency + norm[at])
    kept = np.flatnonzero(keep)
    kept_scores = score[kept]
    if len(kept) > limit:
        top = np.argpartition(-kept_scores, limit - 1)[:limit]
        top = np.flatnonzero(kept_scores >= kept_scores[top].min())  # ties at the cut, for the order by id below
    else:
        top = np.arange(len(kept))
    order = sorted(top.tolist(), key=lambda j: (-kept_scores[j], ids[kept[j]]))[:limit]
    return [(int(ids[kept[j]]), float(kept_scores[j])) for j in order]
