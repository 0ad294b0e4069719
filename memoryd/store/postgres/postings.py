"""A namespace's keyword postings held in the daemon, so that BM25 is ranked here, as FTS5 ranks in the SQLite
store, and not row by row in SQL (where it cost about 5 µs a matching chunk, a heap page each, and most of a
search at 100k chunks).

Each token maps to the chunks holding it and their packed per-column counts (terms.pack), read once from the
chunks' `tf` maps, then kept in step through the namespace's change log (schema.CHANGES): every chunk a writer adds
or removes is a row there, in commit order. A search first reads what the log gained since (only after this daemon
heard of a commit, or made one), so it ranks what the store holds. A reindex makes the namespace anew (another
`index_generation`), and the postings are read again; until they are, and where the log is missing (a namespace
an older memoryd made), searches rank in SQL as before.

Scores are the SQL ranking's (ranking.py)."""

from __future__ import annotations

import sys
import threading
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import psycopg
import structlog
from psycopg import sql

from memoryd.store.postgres import changelog
from memoryd.store.postgres.ranking import ranked
from memoryd.store.postgres.terms import COUNT_BITS
from memoryd.store.rows import Match
from memoryd.threads import cpu_turn, turn_given_up

log = structlog.get_logger("memoryd.postgres")

LOAD_BATCH = 20_000  # chunks read at a time while loading
REBUILD_SHARE = 0.25  # postings added, or chunks removed, since the load past this share: read everything again
EMPTY = np.zeros(0, dtype=np.int64)


def _packed(value: int | list[int]) -> int:
    """A token's packed counts from a `tf` entry: an integer, or an older memoryd's array of four counts."""
    packed = value if isinstance(value, int) else sum(int(c) << (COUNT_BITS * i) for i, c in enumerate(value))
    return packed - (1 << 64) if packed >= 1 << 63 else packed  # as a bigint holds it (the last column's top bit)


class _Chunks:
    """Each chunk's token count and whether it is live, by chunk id."""

    def __init__(self) -> None:
        self.doc_len = np.zeros(0, dtype=np.int32)
        self.live = np.zeros(0, dtype=bool)
        self.count = 0  # live ones
        self.dead = 0  # removed since loaded, whose postings are still held (skipped)

    def admit(self, chunk: int, length: int) -> bool:
        """Record a chunk; False when it is already held (read while loading, then found in the log)."""
        if chunk >= len(self.live):
            size = max(chunk + 1, len(self.live) * 5 // 4 + 1024)
            self.live = np.concatenate([self.live, np.zeros(size - len(self.live), dtype=bool)])
            self.doc_len = np.concatenate([self.doc_len, np.zeros(size - len(self.doc_len), dtype=np.int32)])
        if self.live[chunk]:
            return False
        self.live[chunk] = True
        self.doc_len[chunk] = length
        self.count += 1
        return True


class _Builder:
    """The postings of chunks read in id order, gathered as flat arrays and sorted by token once."""

    def __init__(self) -> None:
        self.chunks = _Chunks()
        self.index: dict[str, int] = {}
        self.tokens = array("i")
        self.ids = array("q")
        self.counts = array("q")

    def add(self, rows: Sequence[tuple[int, int, dict[str, int | list[int]]]]) -> None:
        index, tokens, ids, counts = self.index, self.tokens, self.ids, self.counts
        for chunk, length, tf in rows:
            if not self.chunks.admit(chunk, length):
                continue
            for token, value in tf.items():
                at = index.get(token)
                if at is None:
                    at = index[token] = len(index)
                tokens.append(at)
                ids.append(chunk)
                counts.append(_packed(value))

    def built(self, at: changelog.Position) -> _Postings:
        tokens = np.frombuffer(self.tokens, dtype=np.int32) if len(self.tokens) else np.zeros(0, dtype=np.int32)
        order = np.argsort(tokens, kind="stable")  # each token's chunks stay in id order
        offsets = np.zeros(len(self.index) + 1, dtype=np.int64)
        np.cumsum(np.bincount(tokens, minlength=len(self.index)), out=offsets[1:])
        ids = np.frombuffer(self.ids, dtype=np.int64)[order] if len(self.ids) else EMPTY
        counts = np.frombuffer(self.counts, dtype=np.int64)[order] if len(self.counts) else EMPTY
        return _Postings(at, self.chunks, self.index, offsets, ids, counts)


@dataclass
class _Postings:
    """Everything held: each token's chunk ids and packed counts (read at load: `index` and `offsets` into `ids` and
    `counts`; added since: `extra`), and the chunks' sizes and liveness."""

    at: changelog.Position  # the change log's last row applied
    chunks: _Chunks
    index: dict[str, int]
    offsets: np.ndarray
    ids: np.ndarray
    counts: np.ndarray
    extra: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    added: int = 0  # postings in `extra`

    @property
    def postings(self) -> int:
        return len(self.ids) + self.added

    @property
    def nbytes(self) -> int:
        """About what is held: the arrays, and the token index (a dict entry and a string a token)."""
        arrays = self.ids.nbytes + self.counts.nbytes + self.offsets.nbytes
        arrays += self.chunks.live.nbytes + self.chunks.doc_len.nbytes
        return int(
            arrays + sys.getsizeof(self.index) + sum(map(len, self.index)) + 49 * len(self.index) + 64 * self.added
        )

    @property
    def worn(self) -> bool:
        """Enough added or removed since the load that reading everything again is worth it."""
        return self.added > REBUILD_SHARE * max(len(self.ids), 1) or self.chunks.dead > REBUILD_SHARE * max(
            self.chunks.count, 1
        )

    def add(self, rows: Sequence[tuple[int, int, dict[str, int | list[int]]]]) -> None:
        """Chunks (id, token count, token -> packed counts) added to the store since the load."""
        gathered: dict[str, tuple[list[int], list[int]]] = {}
        for chunk, length, tf in rows:
            if not self.chunks.admit(chunk, length):
                continue
            for token, value in tf.items():
                ids, counts = gathered.setdefault(token, ([], []))
                ids.append(chunk)
                counts.append(_packed(value))
        # each token's arrays replaced whole: searches read them meanwhile
        for token, (ids, counts) in gathered.items():
            held = self.extra.get(token, (EMPTY, EMPTY))
            self.extra[token] = (
                np.concatenate([held[0], np.array(ids, dtype=np.int64)]),
                np.concatenate([held[1], np.array(counts, dtype=np.int64)]),
            )
            self.added += len(ids)

    def remove(self, chunks: Sequence[int]) -> None:
        live = self.chunks.live
        for chunk in chunks:
            if 0 <= chunk < len(live) and live[chunk]:
                live[chunk] = False
                self.chunks.count -= 1
                self.chunks.dead += 1

    def _all(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        at = self.index.get(token)
        ids, counts = EMPTY, EMPTY
        if at is not None:
            begin, end = self.offsets[at], self.offsets[at + 1]
            ids, counts = self.ids[begin:end], self.counts[begin:end]
        more = self.extra.get(token)
        if more is not None:
            ids, counts = np.concatenate([ids, more[0]]), np.concatenate([counts, more[1]])
        return ids, counts

    def frequency(self, token: str) -> int:
        """How many live chunks hold a token (the vocabulary table's count)."""
        ids, _ = self._all(token)
        return int(self.chunks.live[ids].sum()) if self.chunks.dead else len(ids)

    def lists(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The live chunks holding a token, and its counts there."""
        ids, counts = self._all(token)
        if self.chunks.dead and len(ids):
            keep = self.chunks.live[ids]
            return ids[keep], counts[keep]
        return ids, counts


class KeywordPostings:
    """The postings of one namespace (a Store's), loaded in the background and kept in step with its change log."""

    def __init__(self, store: changelog.Followed) -> None:
        self._store = store
        self._lock = threading.Lock()  # held while applying the log; searches read under it too (numpy releases it)
        self._held: _Postings | None = None
        self._loading = False
        self._wanted = 1  # commits made or heard of (counted), and how many of them the log was read after
        self._applied = 0
        self._missing_until = 0.0  # monotonic: not tried again until then (no change log, or the load failed)

    @property
    def ready(self) -> bool:
        return self._held is not None

    @property
    def nbytes(self) -> int:
        held = self._held
        if held is None:
            return 0
        return held.nbytes

    def stale(self) -> None:
        """A commit was made or heard of: the next search reads the log first."""
        self._wanted += 1

    def drop(self) -> None:
        with self._lock:
            self._held = None

    def start(self, refresh: bool = False) -> None:
        """Load the postings in the background, unless held (or `refresh`: read again while the held ones serve),
        loading, or known to be impossible."""
        with self._lock:
            if (self._held is not None and not refresh) or self._loading or time.monotonic() < self._missing_until:
                return
            self._loading = True
        threading.Thread(target=self._load, name=f"pg-postings-{self._store.namespace}", daemon=True).start()

    def _load(self) -> None:
        try:
            held = self._read_all()
            with self._lock:
                self._held = held
                self._wanted += 1  # a commit heard of while loading may be past the snapshot read
            if held is not None:
                log.info(
                    "keyword postings held in the daemon",
                    namespace=self._store.namespace,
                    chunks=held.chunks.count,
                    postings=held.postings,
                    mb=round(self.nbytes / 1e6, 1),
                )
        except Exception as exc:  # a store whose postings cannot be held still searches, in SQL
            self._missing_until = time.monotonic() + changelog.FAILED_RETRY_SECONDS
            if not self._store._closed:
                log.warning("keyword postings not held", namespace=self._store.namespace, error=f"{exc}")
        finally:
            self._loading = False

    def _read_all(self) -> _Postings | None:
        """Every chunk's counts, with the log position they are as of (one snapshot)."""
        with self._store.borrowing():
            conn = self._store.live_reader(replica=True)
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                try:
                    at = changelog.position(conn, self._store._s)
                except changelog.LogMissing:  # an older memoryd's namespace, until its writer upgrades it
                    self._missing_until = time.monotonic() + changelog.MISSING_RETRY_SECONDS
                    return None
                if at is None:  # made a moment ago: looked at again shortly
                    self._missing_until = time.monotonic() + changelog.FAILED_RETRY_SECONDS
                    return None
                builder = _Builder()
                last = 0
                with conn.cursor() as cur:
                    while not self._store._closed:  # a closed store's load stops at the next batch
                        cur.execute(
                            sql.SQL("SELECT id, doc_len, tf FROM {}.chunks WHERE id > %s ORDER BY id LIMIT %s").format(
                                self._store._s
                            ),
                            (last, LOAD_BATCH),
                        )
                        rows = cur.fetchall()
                        if not rows:
                            break
                        builder.add(rows)
                        last = rows[-1][0]
        return None if self._store._closed else builder.built(at)

    def catch_up(self) -> _Postings | None:
        """The postings as the store holds them now (reading the log if a commit was made or heard of), None when
        not held: the server ranks then. A search waits for a catch-up under way rather than rank what it is
        still changing."""
        held = self._held
        if held is None:
            self.start()
            return None
        if self._applied == self._wanted:
            return held
        with self._lock:
            held = self._held
            wanted = self._wanted
            if held is None or self._applied == wanted:
                return held
            try:
                self._apply_log(held)
                self._applied = wanted
            except changelog.LogMissing:  # the log was dropped (an older memoryd's tables restored)
                self._held = None
                self._missing_until = time.monotonic() + changelog.MISSING_RETRY_SECONDS
            except Exception as exc:  # the server busy or away: ranked there, or failing there, as before
                log.warning("change log not read", namespace=self._store.namespace, error=f"{exc}")
                return None
            held = self._held
        if held is None:  # read anew in the background; ranked in SQL meanwhile
            self.start()
        return held

    def _apply_log(self, held: _Postings) -> None:
        def added_rows(cur: psycopg.Cursor, gained: changelog.Gained) -> list[tuple[int, int, dict]]:
            added = gained.kept("a")
            if not added:
                return []
            cur.execute(
                sql.SQL("SELECT id, doc_len, tf FROM {}.chunks WHERE id = ANY(%s)").format(self._store._s), (added,)
            )
            return cur.fetchall()

        gained, rows = changelog.gained(self._store, held.at, added_rows)
        if gained.lost or gained.large:
            self._held = None  # another index (a reindex), the log pruned past it, or too much: read everything
            return
        held.add(rows or [])
        held.remove(sorted(gained.removed))
        held.at = changelog.Position(held.at.generation, gained.last)
        if held.worn:
            threading.Thread(target=self.start, args=(True,), daemon=True).start()  # not under this lock

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

        def verified(phrases: list[str], chunks: list[int]) -> dict[int, list[bool]]:
            with turn_given_up():
                return verify(phrases, chunks)

        with cpu_turn():
            return ranked(held, match, idfs, weights, avg_length, limit, verified)
