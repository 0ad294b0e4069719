"""The SQLite backend: one index file per agent, held by this daemon alone. Healing sets a broken or replaced file
aside and starts a new one; a reindex builds a new file beside the live one and swaps it in by rename."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import apsw
import structlog

from memoryd.store.errors import CORRUPT
from memoryd.store.interface import Filled, MemoryStore
from memoryd.store.lock import index_lock_path
from memoryd.store.rows import one_row
from memoryd.store.sqlite import Store
from memoryd.store.sqlite.matrix import VectorIndex
from memoryd.store.sqlite.reindex import cleanup_interrupted, remove_db, swap, temp_path, verify
from memoryd_client.protocol.paths import pid_alive, read_holder

log = structlog.get_logger("memoryd.store")
REPLACED = "the index file was deleted or replaced while open"
R = TypeVar("R", bound=Filled)


class SQLiteBackend:
    kind = "sqlite"
    watched = False
    role = "writer"
    healthy = True

    def __init__(self, path: Path, *, use_sqlite_vec: bool = True) -> None:
        self.path = path
        self.use_sqlite_vec = use_sqlite_vec
        self.healed: str | None = None
        cleanup_interrupted(path)
        try:
            self._open()
        except CORRUPT as exc:
            self._set_aside(exc)
            self._open()

    def _open(self) -> None:
        self.store: Store = Store(self.path, use_sqlite_vec=self.use_sqlite_vec)
        self.vectors = VectorIndex(self.store)
        self._inode = self._file_inode()

    def _file_inode(self) -> int | None:
        try:
            return self.path.stat().st_ino
        except OSError:
            return None

    def lead(self) -> bool:
        return True

    def still_leads(self) -> bool:
        return True

    def damage(self) -> str | None:
        return REPLACED if self._file_inode() != self._inode else None

    def _set_aside(self, why: BaseException | str) -> None:
        """The index is derived data: keep the broken file for a post-mortem and start a new one, which the next
        sync fills from the Markdown and transcripts."""
        live = self.path
        reason = why if isinstance(why, str) else f"{type(why).__name__}: {why}"
        if live.exists():
            aside = live.with_name(f"{live.name}.corrupt-{int(time.time())}")
            os.replace(live, aside)
            remove_db(live)  # its -wal and -shm belong to the broken file
            what = {"index": str(live), "moved_to": str(aside), "reason": reason}
            log.error("index unreadable; set aside, rebuilding from the sources", **what)
        else:
            log.warning("index file gone; rebuilding from the sources", index=str(live), reason=reason)
        self.healed = f"{time.strftime('%Y-%m-%d %H:%M:%S')}: {reason}"

    def heal(self, why: BaseException | str) -> None:
        self.store.close()
        self._set_aside(self.damage() or why)
        self._open()

    def build(self, fill: Callable[[MemoryStore], R]) -> tuple[Path, R]:
        """Every source indexed into a fresh temporary file, seeded from the live embedding cache, then verified."""
        tmp = temp_path(self.path)
        remove_db(tmp)
        store = Store(tmp, use_sqlite_vec=self.use_sqlite_vec)
        try:
            if self.path.exists():
                with contextlib.suppress(apsw.Error):  # an unreadable live index only means no head start
                    store.copy_cache_from(self.path)
            report = fill(store)
            verify(store, report)
        except BaseException:
            store.close()
            remove_db(tmp)
            raise
        store.close()
        return tmp, report

    def swap(self, staged: Path) -> None:
        self.store.close()
        try:
            swap(staged, self.path)
        finally:
            self._open()

    def discard(self, staged: Path) -> None:
        remove_db(staged)

    def status(self) -> dict[str, Any]:
        return {
            "store": str(self.path),
            "store_kind": self.kind,
            "keyword_ranking": "bm25_topk" if self.store.ranking_error is None else "bm25",
        }

    def close(self) -> None:
        self.store.close()


def offline_check(path: Path, integrity: bool) -> Iterator[tuple[str, str, str]]:
    """The index file read while no daemon serves it: (level, message, fix)."""
    if not path.exists():
        yield "warn", f"{path} does not exist yet", "start the daemon: the first sync builds it"
        return
    holder = read_holder(index_lock_path(path))
    if pid_alive(holder.get("pid")):
        yield "warn", f"held by pid {holder['pid']} ({holder.get('socket', 'a library user')})", ""
    try:
        conn = apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            files = one_row(conn.execute("SELECT count(*) FROM files").fetchone())[0]
            chunks = one_row(conn.execute("SELECT count(*) FROM chunks").fetchone())[0]
            check = one_row(conn.execute("PRAGMA quick_check").fetchone())[0] if integrity else "ok"
        finally:
            conn.close()
    except apsw.Error as exc:
        yield "fail", f"{path} cannot be read: {exc}", "the daemon sets it aside and rebuilds it"
        return
    if check != "ok":
        yield "fail", f"integrity check: {check}", "memctl reindex (or delete it: it is rebuilt from notes)"
    else:
        yield "ok", f"{files} files, {chunks} chunks" + (", integrity ok" if integrity else ""), ""
