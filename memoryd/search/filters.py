"""Search filters (source, path prefix or glob, date range, memory type), parsed and checked; the store turns
them into SQL (Store.filter_sql)."""

from __future__ import annotations

import datetime as dt
import glob
import math
from collections.abc import Sequence
from dataclasses import dataclass

from memoryd.store.rows import is_glob
from memoryd_client.protocol.schema import SOURCES


class FilterError(ValueError):
    """A filter value cannot be understood."""


def parse_time(value: object, name: str, end_of_day: bool = False) -> float | None:
    """An epoch number, or an ISO date/datetime (a bare date means that whole day, in UTC)."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if math.isfinite(value):
            return float(value)
    elif isinstance(value, str):
        try:
            if len(value) == 10:
                day = dt.datetime.fromisoformat(value).replace(tzinfo=dt.timezone.utc)
                return (day + dt.timedelta(days=1 if end_of_day else 0)).timestamp()
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return (moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)).timestamp()
        except (ValueError, OverflowError):
            pass
    raise FilterError(f"'{name}' must be a date (YYYY-MM-DD), an ISO datetime or epoch seconds")


@dataclass(frozen=True)
class Filters:
    sources: tuple[str, ...] = ()
    path: str | None = None  # a prefix, or a glob when it has * ? or [
    after: float | None = None
    before: float | None = None
    kinds: tuple[str, ...] = ()

    @classmethod
    def parse(
        cls,
        sources: Sequence[str] | None = None,
        path: str | None = None,
        after: object = None,
        before: object = None,
        kind: str | Sequence[str] | None = None,
    ) -> Filters:
        """Filters from a search request the schema already checked (memoryd_client.protocol.schema.Search)."""
        if path is not None and not path:
            raise FilterError("'path' must be a non-empty string (a prefix or a glob)")
        kinds = (kind,) if isinstance(kind, str) else tuple(kind or ())
        # repeats mean nothing more (and 100,000 of them overflowed SQLite's variables)
        unique_sources, kinds = tuple(dict.fromkeys(sources or ())), tuple(dict.fromkeys(kinds))
        return cls(unique_sources, path, parse_time(after, "after"), parse_time(before, "before", True), kinds)

    @classmethod
    def of_file(cls, path: str) -> Filters:
        """Filters that hold one file's chunks (and those of the files its path begins, for the caller to leave
        out): its path as a prefix, or, where it holds a glob's characters ("zoo [1].md"), as a glob that matches
        it alone."""
        return cls(path=glob.escape(path) if is_glob(path) else path)

    @property
    def active(self) -> bool:
        return bool(
            (self.sources and set(self.sources) != set(SOURCES))
            or self.path
            or self.after is not None
            or self.before is not None
            or self.kinds
        )
