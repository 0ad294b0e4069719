"""Atomic full reindex of an index file: a new file beside the live one (memoryd.store.sqlite.backend builds it),
verified, then swapped in by rename."""

from __future__ import annotations

import os
from pathlib import Path

from memoryd.durable import fsync_dir
from memoryd.store.interface import Filled
from memoryd.store.rows import one_row
from memoryd.store.sqlite import Store

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


def verify(store: Store, report: Filled) -> None:
    """The new index is whole: SQLite finds it sound, it holds every file the fill saw but those it skipped, and
    every chunk has its vector unless embedding failed."""
    check = one_row(store.conn.execute("PRAGMA integrity_check").fetchone())[0]
    if check != "ok":
        raise ReindexError(f"integrity check failed: {check}")
    counts = store.counts()
    if counts["files"] < report.files_seen - len(report.skipped):
        raise ReindexError(f"new index has {counts['files']} files, expected {report.files_seen}")
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
