"""Vector search over a warm in-memory matrix that follows the store's committed changes."""

from __future__ import annotations

import threading

import numpy as np
import simsimd

from memoryd.store.interface import MemoryStore
from memoryd.store.languages import apply_maps, big_groups, language_maps
from memoryd.store.rows import StoreChange
from memoryd.store.vectors import VectorScan
from memoryd.threads import lasting_pool

UNKNOWN = -1  # language code of a chunk whose language is not known
UNRESOLVED = -2  # not asked of the store yet (added since the last scan)


GROWTH_CAP = 65_536  # rows (and id-map entries) added at most when the matrix grows
# From this many rows a scan runs in two halves side by side (SimSIMD lets go of the GIL). See research.matrix.
PARALLEL_ROWS = 200_000
# The int8 scan quantizes the query too, so the top of its ranking is scored again against the float32 query:
# this many candidates per result asked for, and at least RESCORE_MIN.
RESCORE_FACTOR = 4
RESCORE_MIN = 64
# one helper thread for the whole process, taken by one scan at a time (who holds this): with several searches at
# once each scans on its own thread, which already keeps the cores busy
_SCAN_HELPER_FREE = threading.Lock()


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and a float32 scale per row: vector ≈ codes * scale (max error half a step of 1/127)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    scales = np.abs(vectors).max(axis=1) / 127.0 if len(vectors) else np.zeros(0, dtype=np.float32)
    scales = np.where(scales > 0, scales, 1.0).astype(np.float32)
    codes = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales


class VectorIndex:
    """Cosine search (vectors are L2-normalised) over every chunk vector of one store.

    The warm matrix is int8 with a scale per row: a quarter of float32's memory, scanned with SimSIMD's int8
    products (1M rows in 25 ms against 146 ms for float32 and 84 ms for numpy turning int8 back into float32),
    finding 0.986 of the float32 top 24 (`python -m research.matrix`). Reported scores are the int8 rows against
    the float32 query: within half a step per component of the exact cosine (multilingual-e5-small on SciFact:
    2e-4 on average, 1.3e-3 at most). Rescoring from the stored float32 vectors was dropped: a sqlite-vec row
    read costs 0.15 ms at 100k vectors and 3-4 ms at 1M (each reads into a 1.5 MB chunk blob), so it took most
    of a search's time at scale (hybrid p50 at 100k chunks: 63 ms with it, 25 without, in-process). MMR still
    compares results by their stored vectors."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._released = False  # dropped by `release`, not loaded since
        self._clear()
        store.subscribe(self._apply)

    def _clear(self, dims: int = 1) -> None:
        """No matrix held: loaded again from the store at the next use."""
        self._loaded = False
        self._ids = np.zeros(0, dtype=np.int64)
        self._codes = np.zeros((0, dims), dtype=np.int8)
        self._scales = np.zeros(0, dtype=np.float32)
        self._lang = np.zeros(0, dtype=np.int16)  # each row's language code (UNKNOWN, UNRESOLVED)
        self._names: list[str] = []  # language code -> name
        self._codes_of: dict[str, int] = {}
        self._groups: list[int] | None = None  # languages with enough chunks to map; None: count again
        self._unresolved = False  # some rows are UNRESOLVED
        self._count = 0  # rows in use (some may be holes, id -1)
        self._live = 0  # rows that hold a chunk
        # chunk id -> row, -1 for none: 4 bytes per id up to the largest, where a dict of a million ids took
        # about 100 MB
        self._slot_of = np.full(0, -1, dtype=np.int32)

    @property
    def nbytes(self) -> int:
        """Memory held by the warm matrix, its scales and ids (0 until first used)."""
        held = self._codes.nbytes + self._scales.nbytes + self._ids.nbytes + self._slot_of.nbytes + self._lang.nbytes
        return int(held) if self._loaded else 0

    @property
    def dims(self) -> int:
        return int(self._codes.shape[1])

    def _load(self) -> None:
        """Read the store's vectors piece by piece, so loading never holds the float32 matrix whole."""
        self._clear(max(self._store.dims, 1))
        for ids, matrix in self._store.iter_vectors():
            if self._codes.shape[1] != matrix.shape[1]:
                self._codes = np.zeros((0, matrix.shape[1]), dtype=np.int8)
            self._append(ids, matrix)
            self._label(ids, self._store.languages(ids.tolist()))
        self._compact()  # a fresh load (at start, after a reindex) keeps no spare room
        self._loaded = True
        self._released = False

    def load_unlocked(self) -> None:
        """Load a matrix no search uses yet, without its lock (so that writes meanwhile are not held up): a change
        it hears while loading is skipped, and the caller applies what the store gained since it began."""
        self._load()

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._load()

    def _reserve(self, needed: int) -> None:
        """Room for `needed` rows, grown in bounded steps; holes left by removals are dropped on the way."""
        if needed <= len(self._ids):
            return
        capacity = _grown(needed)
        self._compact()
        extra = capacity - self._count
        self._ids = np.concatenate([self._ids, np.full(extra, -1, dtype=np.int64)])
        self._codes = np.concatenate([self._codes, np.zeros((extra, self._codes.shape[1]), dtype=np.int8)])
        self._scales = np.concatenate([self._scales, np.zeros(extra, dtype=np.float32)])
        self._lang = np.concatenate([self._lang, np.full(extra, UNRESOLVED, dtype=np.int16)])

    def _slots(self, ids: np.ndarray) -> np.ndarray:
        """The row of each chunk id, -1 where it has none."""
        ids = np.asarray(ids, dtype=np.int64)
        inside = (ids >= 0) & (ids < len(self._slot_of))
        out = np.full(len(ids), -1, dtype=np.int64)
        out[inside] = self._slot_of[ids[inside]]
        return out

    def _index(self, ids: np.ndarray, rows: np.ndarray) -> None:
        """Record where these chunk ids live, growing the id map in bounded steps."""
        if not len(ids):
            return
        top = int(ids.max())
        if top >= len(self._slot_of):
            extra = _grown(top + 1) - len(self._slot_of)
            self._slot_of = np.concatenate([self._slot_of, np.full(extra, -1, dtype=np.int32)])
        self._slot_of[ids] = rows

    def _append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        codes, scales = quantize(vectors)
        slots = self._slots(ids)
        known = slots >= 0
        self._codes[slots[known]], self._scales[slots[known]] = codes[known], scales[known]
        self._lang[slots[known]] = UNRESOLVED
        self._groups = None
        self._unresolved = True
        fresh = np.flatnonzero(~known)
        if not len(fresh):
            return
        self._reserve(self._count + len(fresh))
        start = self._count
        end = start + len(fresh)
        self._ids[start:end] = ids[fresh]
        self._codes[start:end] = codes[fresh]
        self._scales[start:end] = scales[fresh]
        self._lang[start:end] = UNRESOLVED
        self._index(ids[fresh], np.arange(start, end))
        self._count = end
        self._live += len(fresh)

    def _label(self, ids: np.ndarray, languages: dict[int, str]) -> None:
        """Record the languages of these chunks (those not in `languages` have none known)."""
        slots = self._slots(ids)
        held = slots >= 0
        codes = np.array([self._code(languages.get(int(cid), "")) for cid in ids[held]], dtype=np.int16)
        self._lang[slots[held]] = codes
        self._groups = None

    def _code(self, language: str) -> int:
        if not language:
            return UNKNOWN
        code = self._codes_of.get(language)
        if code is None:
            code = self._codes_of[language] = len(self._names)
            self._names.append(language)
        return code

    def _resolve_languages(self) -> None:
        """Ask the store the languages of the chunks added since the last scan (one query after a sync)."""
        with self._lock:
            if not self._loaded or not self._unresolved:
                return
            self._unresolved = False  # rows added from here on set it again
            pending = np.flatnonzero(self._lang[: self._count] == UNRESOLVED)
            if not len(pending):
                return
            ids = self._ids[pending]
            self._lang[pending[ids < 0]] = UNKNOWN
            ids = ids[ids >= 0]
        try:
            languages = self._store.languages(ids.tolist()) if len(ids) else {}
        except BaseException:
            with self._lock:
                self._unresolved = True  # asked again by the next scan
            raise
        with self._lock:
            if self._loaded:
                slots = self._slots(ids)
                still = ids[(slots >= 0) & (self._lang[np.maximum(slots, 0)] == UNRESOLVED)]
                self._label(still, languages)

    def _language_groups(self) -> list[int]:
        """The languages with enough live chunks to be mapped (under the lock)."""
        if self._groups is None:
            live = self._ids[: self._count] >= 0
            self._groups = big_groups(self._lang[: self._count][live])
        return self._groups

    def _apply(self, change: StoreChange) -> None:
        with self._lock:
            if not self._loaded:
                return  # loaded lazily from the store, which already has the change
            if change.removed:
                removed = np.unique(np.asarray(list(change.removed), dtype=np.int64))
                slots = self._slots(removed)
                held = slots >= 0
                self._ids[slots[held]] = -1
                self._codes[slots[held]] = 0
                self._lang[slots[held]] = UNKNOWN
                self._groups = None
                self._slot_of[removed[held]] = -1
                self._live -= int(held.sum())
            if change.vectors is None or not change.added:
                return
            if self.dims != change.vectors.shape[1]:
                self._loaded = False
                return
            self._append(np.asarray(change.added, dtype=np.int64), change.vectors)

    def release(self) -> bool:
        """Drop the warm matrix (the daemon does when the model unloads after idle time); the next search loads
        it again from the store. Returns whether anything was held."""
        with self._lock:
            held = self._loaded
            self._clear()
            self._released = True
        return held

    def compact(self) -> None:
        """Drop the holes removals left and give back the spare room (after a large deletion)."""
        with self._lock:
            if self._loaded:
                self._compact()

    def _compact(self) -> None:
        live = self._ids[: self._count] >= 0
        self._ids = self._ids[: self._count][live].copy()
        self._codes = self._codes[: self._count][live].copy()
        self._scales = self._scales[: self._count][live].copy()
        self._lang = self._lang[: self._count][live].copy()
        self._count = self._live = len(self._ids)
        self._slot_of = np.full(int(self._ids.max()) + 1 if self._count else 0, -1, dtype=np.int32)
        self._slot_of[self._ids] = np.arange(self._count)

    def empty(self) -> bool:
        """No vector to search. Without the matrix in memory (not loaded yet, or released when idle) this asks the
        store instead of loading it: a `status` call must neither undo the idle release nor wait for a million rows
        to load (17 s)."""
        with self._lock:
            if not self._loaded:
                return not self._store.has_vectors()
            self._ensure_loaded()
            return self._live == 0

    def __len__(self) -> int:
        with self._lock:
            self._ensure_loaded()
            return self._live

    def languages(self) -> dict[str, int] | None:
        """Embedded chunks per known language, or None while the matrix is not in memory (never loads it)."""
        self._resolve_languages()
        with self._lock:
            if not self._loaded:
                return None
            codes = self._lang[: self._count][(self._ids[: self._count] >= 0) & (self._lang[: self._count] >= 0)]
            return {self._names[c]: int(n) for c, n in enumerate(np.bincount(codes, minlength=len(self._names))) if n}

    def search(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        """The `limit` nearest chunks as (chunk id, cosine similarity), best first."""
        return self.scan(query, limit, allowed).hits

    def scan(self, query: np.ndarray, limit: int, allowed: set[int] | None = None) -> VectorScan:
        """The nearest chunks, and how the query's similarity is spread over all of them (fusion uses it to
        tell a model that recognises the query from one that scores everything alike)."""
        query = query.astype(np.float32)
        self._resolve_languages()
        with self._lock:
            self._ensure_loaded()
            if not self._live or query.shape[-1] != self.dims:
                return VectorScan()
            codes, scales, ids, count = self._codes, self._scales, self._ids, self._count
            languages, groups, names = self._lang[:count], self._language_groups(), list(self._names)
        # Scanned outside the lock, so concurrent searches scan side by side: rows are only rewritten in place
        # or appended past `count`, and a compaction builds new arrays, so a change made meanwhile costs at
        # most a stale score for that row (a removed chunk reads as id -1 and is left out).
        scores = _approximate(codes, scales, count, query)
        ids = ids[:count]
        left_out = ids < 0
        if allowed is not None:
            left_out |= ~np.isin(ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
        if left_out.any():  # a copy only then: eight concurrent scans of a million rows add up
            scores[left_out] = -np.inf
        maps = language_maps(scores, languages, groups) if len(groups) > 1 else {}
        apply_maps(scores, languages, maps)
        finite = scores[~left_out] if left_out.any() else scores
        top = _best(scores, max(limit * RESCORE_FACTOR, RESCORE_MIN))
        top = top[np.isfinite(scores[top])]
        exact = (codes[top].astype(np.float32) @ query) * scales[top]
        apply_maps(exact, languages[top], maps)
        hits = sorted(((int(ids[top[j]]), float(exact[j])) for j in _best(exact, limit)), key=lambda h: (-h[1], h[0]))
        scan = VectorScan(
            hits, float(finite.mean()) if len(finite) else 0.0, float(finite.std()) if len(finite) else 0.0, len(finite)
        )
        if maps:
            scan.scales = {names[code]: value for code, value in maps.items()}
            scan.language = {int(ids[row]): names[languages[row]] for row in top if int(languages[row]) in maps}
        return scan

    def similarity(self, query: np.ndarray, chunk_ids: list[int], scan: VectorScan | None = None) -> dict[int, float]:
        """Cosine for chosen chunks, from the warm matrix (its precision: class notes), on `scan`'s scale."""
        with self._lock:
            self._ensure_loaded()
            if query.shape[-1] != self.dims:
                return {}
            ids = np.asarray(chunk_ids, dtype=np.int64)
            slots = self._slots(ids)
            held = slots >= 0
            ids, slots = ids[held], slots[held]
            values = (self._codes[slots].astype(np.float32) @ query.astype(np.float32)) * self._scales[slots]
            codes, names = self._lang[slots], list(self._names)
        found = {int(cid): float(v) for cid, v in zip(ids, values, strict=True)}
        if scan is None or not scan.scales:
            return found
        return scan.mapped(found, {int(cid): names[c] for cid, c in zip(ids, codes, strict=True) if c >= 0})

    def vectors_of(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        """Stored float32 vectors of chosen chunks (MMR compares results with each other)."""
        with self._lock:
            self._ensure_loaded()
            ids = np.asarray(chunk_ids, dtype=np.int64)
            known = [int(cid) for cid in ids[self._slots(ids) >= 0]]
        return self._store.vectors_by_ids(known)


def _grown(needed: int) -> int:
    """Room for `needed` entries and a bounded step more (a quarter, at least 1,024, at most GROWTH_CAP)."""
    return needed + min(max(needed // 4, 1024), GROWTH_CAP)


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the `k` highest scores, in no order."""
    if k >= len(scores):
        return np.arange(len(scores))
    return np.argpartition(scores, len(scores) - k)[len(scores) - k :]


def _approximate(codes: np.ndarray, scales: np.ndarray, count: int, query: np.ndarray) -> np.ndarray:
    """Cosine of the query with the first `count` rows, from int8 products of the rows and the query (quantized
    like a row): a large matrix in two halves side by side when the helper thread is free."""
    query_codes, query_scale = quantize(query[None, :])
    out = np.empty(count, dtype=np.float32)
    if count < PARALLEL_ROWS or not _SCAN_HELPER_FREE.acquire(blocking=False):
        _scan_rows(codes, scales, query_codes, out, 0, count)
    else:
        try:
            middle = count // 2
            second = lasting_pool("vector-scan", 1).submit(_scan_rows, codes, scales, query_codes, out, middle, count)
            _scan_rows(codes, scales, query_codes, out, 0, middle)
            second.result()
        finally:
            _SCAN_HELPER_FREE.release()
    out *= query_scale[0]
    return out


def _scan_rows(
    codes: np.ndarray, scales: np.ndarray, query_codes: np.ndarray, out: np.ndarray, start: int, end: int
) -> None:
    if end > start:
        # not simsimd's out=: with it, cdist returns None without a reference (6.5.16), and every scan took one
        # from None until a long-running daemon died of it ("none_dealloc"); the copy costs 4 bytes a row
        products = simsimd.cdist(query_codes, codes[start:end], metric="dot", dtype="int8", out_dtype="float32")
        np.multiply(np.asarray(products)[0], scales[start:end], out=out[start:end])
