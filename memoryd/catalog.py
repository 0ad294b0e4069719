"""What memory holds, file by file: the `notes` method's listing, by folder and by day, and one file's chunks."""

from __future__ import annotations

import functools
import re
import time
from typing import Any

from memoryd.notes import RequestError, file_chunks
from memoryd.sources.metadata import note_date
from memoryd.store.interface import MemoryStore
from memoryd.store.rows import FileRow

DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@functools.lru_cache(maxsize=262_144)
def dated(path: str, mtime_ns: int) -> tuple[float, str]:
    """When a file was written and its day: a dated note's own date (UTC), any other file's modification (local)."""
    written = note_date(path)
    if written is not None:
        return written, time.strftime("%Y-%m-%d", time.gmtime(written))
    when = mtime_ns / 1e9
    return when, time.strftime("%Y-%m-%d", time.localtime(when))


def _entry(row: FileRow) -> dict[str, Any]:
    return {
        "path": row.path,
        "source": row.source,
        "date": dated(row.path, row.mtime_ns)[1],
        "modified": round(row.mtime_ns / 1e9, 3),
        "size": row.size,
    }


def list_notes(store: MemoryStore, path: str | None, day: str | None, limit: int) -> dict[str, Any]:
    """The indexed files at or under `path`, newest first (of `day` only, when given), with how many there are each
    day; the folder's own files (by name) and its subfolders (with how many files each holds), to browse it a level
    at a time; and for one file, where its chunks begin and end."""
    folder = path.strip("/") if path else ""
    if day is not None and not DAY.fullmatch(day):
        raise RequestError(f"day {day!r} is not a date (YYYY-MM-DD)")
    one = store.file_row(folder) if folder else None
    rows = [one] if one is not None else _under(store, folder)
    if folder and not rows:
        raise RequestError(f"memory holds no file at or under {path!r}")
    days: dict[str, int] = {}
    newest = []
    for row in rows:
        when, on = dated(row.path, row.mtime_ns)
        days[on] = days.get(on, 0) + 1
        if day is None or on == day:
            newest.append((-when, row.path, row))
    newest.sort(key=lambda item: (item[0], item[1]))
    folders, here = _level(rows, folder) if one is None else ({}, [])
    return {
        "notes": [_entry(r) for _, _, r in newest[:limit]],
        "total": len(newest),
        "days": days,
        "folders": folders,
        "files": [_entry(r) for r in here[:limit]],
        "files_total": len(here),
        "chunks": _chunks_of(store, folder) if one is not None else None,
    }


def _under(store: MemoryStore, folder: str) -> list[FileRow]:
    prefix = f"{folder}/" if folder else ""
    return [r for r in store.files().values() if r.path.startswith(prefix)]


def _level(rows: list[FileRow], folder: str) -> tuple[dict[str, int], list[FileRow]]:
    """A folder's subfolders, with how many files each holds at any depth, and its own files, by name."""
    skip = len(folder) + 1 if folder else 0
    folders: dict[str, int] = {}
    here = []
    for row in rows:
        name, nested, _ = row.path[skip:].partition("/")
        if nested:
            folders[name] = folders.get(name, 0) + 1
        else:
            here.append(row)
    return dict(sorted(folders.items())), sorted(here, key=lambda r: r.path)


def _chunks_of(store: MemoryStore, path: str) -> list[dict[str, Any]]:
    found = file_chunks(store, path)
    return [
        {"start_line": c.start_line, "end_line": c.end_line, "heading": c.heading}
        for c in sorted(found, key=lambda c: (c.start_line, c.end_line))
    ]
