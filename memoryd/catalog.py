"""What memory holds, file by file: the `notes` method's listing, by folder and by day, and one file's chunks."""

from __future__ import annotations

import re
import time
from typing import Any

from memoryd.notes import RequestError
from memoryd.search.filters import Filters
from memoryd.sources.metadata import note_date
from memoryd.store.interface import MemoryStore


def list_notes(store: MemoryStore, path: str | None, day: str | None, limit: int) -> dict[str, Any]:
    """The indexed files under `path`, newest first, each with its day (a dated note's own date, any other file's
    modification, local time), how many there are per day, and for one file where its chunks begin and end."""
    folder = path.strip("/") if path else ""
    if day is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        raise RequestError(f"day {day!r} is not a date (YYYY-MM-DD)")
    rows = [r for r in store.files().values() if not folder or r.path == folder or r.path.startswith(f"{folder}/")]
    if folder and not rows:
        raise RequestError(f"memory holds no file at or under {path!r}")
    chunks = None
    if folder and len(rows) == 1 and rows[0].path == folder:
        found = [
            c for c in store.chunks_by_ids(sorted(store.chunk_ids(Filters(path=folder)))).values() if c.path == folder
        ]
        chunks = [
            {"start_line": c.start_line, "end_line": c.end_line, "heading": c.heading}
            for c in sorted(found, key=lambda c: (c.start_line, c.end_line))
        ]
    dated = []
    for row in rows:
        written = note_date(row.path)
        when = written if written is not None else row.mtime_ns / 1e9
        stamp = time.gmtime(when) if written is not None else time.localtime(when)
        dated.append((when, time.strftime("%Y-%m-%d", stamp), row))
    dated.sort(key=lambda item: (-item[0], item[2].path))
    days: dict[str, int] = {}
    for _, on, _ in dated:
        days[on] = days.get(on, 0) + 1
    shown = [item for item in dated if day is None or item[1] == day]
    notes = [
        {"path": r.path, "source": r.source, "date": on, "modified": round(r.mtime_ns / 1e9, 3), "size": r.size}
        for _, on, r in shown[:limit]
    ]
    return {"notes": notes, "total": len(shown), "days": days, "chunks": chunks}
