"""Atomic full reindex: build a new index file beside the live one, verify it, swap it in by rename."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import apsw

from memoryd.config import AgentConfig
from memoryd.durable import fsync_dir
from memoryd.embeddings.base import Embedder
from memoryd.index.batch import Progress, SyncReport
from memoryd.index.sqlite import Store
from memoryd.index.sync import Syncer
from memoryd.sources.discovery import discover

TEMP_MARK = ".reindex-"
SIDE_FILES = ("-wal", "-shm", "-journal")


class ReindexError(RuntimeError):
    """The new index failed verification; the live one was left untouched."""


def temp_path(live: Path) -> Path:
    return live.with_name(f"{live.name}{TEMP_MARK}{os.getpid()}.tmp")


def remove_db(path: Path) -> None:
    for candidate in (path, *(Path(f"{path}{suffix}") for suffix in SIDE_FILES)):
        candidate.unlink(missing_ok=True)


def cleanup_interrupted(live: Path) -> list[Path]:
    """Delete what an interrupted reindex left beside the live index; returns what was removed."""
    removed = []
    if live.parent.is_dir():
        for leftover in live.parent.glob(f"{live.name}{TEMP_MARK}*"):
            leftover.unlink(missing_ok=True)
            removed.append(leftover)
    return removed


def build(
    agent: AgentConfig, embedder: Embedder | None, progress: Progress | None = None, use_sqlite_vec: bool = True
) -> tuple[Path, SyncReport]:
    """Index every file into a fresh temporary database, seeded from the live embedding cache."""
    live = agent.store
    tmp = temp_path(live)
    remove_db(tmp)
    store = Store(tmp, use_sqlite_vec=use_sqlite_vec)
    try:
        if live.exists():
            with contextlib.suppress(apsw.Error):  # an unreadable live index only means no head start
                store.copy_cache_from(live)
        report = Syncer(store, agent, embedder).sync(force=True, progress=progress)
        _verify(store, agent, report)
    except BaseException:
        store.close()
        remove_db(tmp)
        raise
    store.close()
    return tmp, report


def _verify(store: Store, agent: AgentConfig, report: SyncReport) -> None:
    check = store.conn.execute("PRAGMA integrity_check").fetchone()[0]
    if check != "ok":
        raise ReindexError(f"integrity check failed: {check}")
    counts = store.counts()
    expected = len(discover(agent))
    if counts["files"] < expected - len(report.skipped):
        raise ReindexError(f"new index has {counts['files']} files, expected {expected}")
    if report.embedding_error is None and store.get_meta("embedding") and counts["embedded_chunks"] != counts["chunks"]:
        raise ReindexError("new index has chunks without vectors")


def swap(tmp: Path, live: Path) -> None:
    """Replace the live index by the new one. The caller has closed every connection to the live file."""
    for suffix in SIDE_FILES:
        Path(f"{live}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, live)
    for suffix in SIDE_FILES:
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    fsync_dir(live.parent)
