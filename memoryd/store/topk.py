"""bm25_topk, keyword search's ranking function (fts5_topk.c): FTS5's bm25() for the rows that can still reach a
query's k best, NULL for the others, which spares reading their lengths. It is a SQLite extension built with the
package; where it was not built, keyword search ranks with bm25() itself, to the same scores."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import apsw

ENTRY_POINT = "sqlite3_fts5topk_init"


def library() -> Path | None:
    """The built extension, found without importing it (it is no Python module)."""
    spec = find_spec("memoryd.store._fts5_topk")
    return Path(spec.origin) if spec is not None and spec.origin else None


def load(conn: apsw.Connection) -> str | None:
    """Register bm25_topk on a connection; returns why it could not be, or None."""
    path = library()
    if path is None:
        return "bm25_topk was not built with this install (it needs a C compiler and SQLite's headers)"
    try:
        conn.enable_load_extension(True)
        conn.load_extension(str(path), ENTRY_POINT)
    except apsw.Error as exc:
        return f"bm25_topk could not be loaded from {path}: {exc}"
    finally:
        conn.enable_load_extension(False)
    return None


def ranking(weights: str, limit: int, loaded: bool) -> str:
    """The SQL of a row's score (larger is better) for `ORDER BY ... DESC LIMIT limit`; with bm25_topk, it takes
    one parameter: the phrases' hits (see fts5_topk.c), which spare counting them."""
    if loaded:
        return f"bm25_topk(chunks_fts, {int(limit)}, ?, {weights})"
    return f"-bm25(chunks_fts, {weights})"
