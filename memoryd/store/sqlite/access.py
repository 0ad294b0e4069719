"""How often searches returned each chunk (by content), counted in memory and written with the next sync."""

from __future__ import annotations

import time
from collections.abc import Sequence

import apsw

from memoryd.store.rows import add_access
from memoryd.store.sqlite.base import Connections

MAX_PENDING_ACCESS = 100_000  # distinct chunks counted between flushes


class Access(Connections):
    """Search hits per chunk content, for the access factor of ranking."""

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
                add_access(self._access, pending)
            return False

    def export_access(self) -> dict[str, tuple[int, float]]:
        self.flush_access()
        return {h: (hits, last) for h, hits, last in self.reader.execute("SELECT hash, hits, last_at FROM access")}

    def import_access(self, stats: dict[str, tuple[int, float]]) -> None:
        with self._access_lock:
            add_access(self._access, stats)
        self.flush_access()

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
