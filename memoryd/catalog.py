"""What memory holds, file by file: the `notes` method's listing, by folder and by day, and one file's chunks."""

from __future__ import annotations

import functools
import glob
import re
import time
from typing import Any

from memoryd.notes import RequestError
from memoryd.search.filters import Filters
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
    """The indexed files at or under `path`, newest first, with how many there are each day; the folder's own files
    (by name) and its subfolders (with how many files each holds), for browsing it a level at a time; and for one
    file, where its chunks begin and end."""
    folder = path.strip("/") if path else ""
    if day is not None and not DAY.fullmatch(day):
        raise RequestError(f"day {day!r} is not a date (YYYY-MM-DD)")
    one = store.file_row(folder) if folder else None
    if one is not None:
        rows = [one]
    else:
        prefix = f"{folder}/" if folder else ""
        rows = [r for r in store.files().values() if r.path.startswith(prefix)]
        if folder and not rows:
            raise RequestError(f"memory holds no file at or under {path!r}")
    days: dict[str, int] = {}
    order = []
    for row in rows:
        when, on = dated(row.path, row.mtime_ns)
        days[on] = days.get(on, 0) + 1
        if day is None or on == day:
            order.append((-when, row.path, row))
    order.sort(key=lambda item: (item[0], item[1]))
    start = len(folder) + 1 if folder and one is None else 0
    folders: dict[str, int] = {}
    here = []
    for row in rows if one is None else []:
        rest = row.path[start:]
        if "/" in rest:
            name = rest.split("/", 1)[0]
            folders[name] = folders.get(name, 0) + 1
        else:
            here.append(row)
    here.sort(key=lambda r: r.path)
    chunks = None
    if one is not None:
        exact = glob.escape(folder) if glob.has_magic(folder) else folder  # `[` in a name is not a pattern here
        ids = sorted(store.chunk_ids(Filters(path=exact)))
        found = [c for c in store.chunks_by_ids(ids).values() if c.path == folder]
        chunks = [
            {"start_line": c.start_line, "end_line": c.end_line, "heading": c.heading}
            for c in sorted(found, key=lambda c: (c.start_line, c.end_line))
        ]
    return {
        "notes": [_entry(r) for _, _, r in order[:limit]],
        "total": len(order),
        "days": days,
        "folders": dict(sorted(folders.items())),
        "files": [_entry(r) for r in here[:limit]],
        "chunks": chunks,
    }
