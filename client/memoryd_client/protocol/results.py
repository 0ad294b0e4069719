"""What the daemon's methods answer, as typed objects both sides hand out: the stub builds them from a reply, the
library (memoryd.Memory) from its own answer, so a program gets the same types with or without the daemon.

Plain classes (no dataclasses, no typing at run time): memctl imports this on every call."""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, TypedDict


class SearchHit(
    namedtuple(
        "SearchHit",
        "path start_line end_line score vector_score text_score snippet source citation chunk_start_line "
        "chunk_end_line date superseded extra",
        defaults=(0, 0, None, None, None),
    )
):
    """One result: `path`, `start_line`/`end_line` and `citation` (`path#Lstart-Lend`) of its `snippet`, `score`
    (with `vector_score` and `text_score`, None for a side that did not see it), `source` (memory or sessions),
    `chunk_start_line`/`chunk_end_line` (the whole matching region; 0 from a daemon that does not say), `date`
    (when it happened, ISO), `superseded` ("2026-11-27 by path#L5-L5" when its note marks the lines so), and
    `extra`: what else the daemon said of it (`explain`, fields added later)."""

    __slots__ = ()


class SearchResults:
    """The hits (iterate it, or `results`), and how the search ran; `raw` is the daemon's whole answer."""

    __slots__ = ("mode", "model", "provider", "raw", "results", "took_ms")

    def __init__(
        self,
        results: list[SearchHit],
        mode: str,
        provider: str | None,
        model: str | None,
        took_ms: float,
        raw: dict[str, Any],
    ) -> None:
        self.results = results
        self.mode = mode
        self.provider = provider
        self.model = model
        self.took_ms = took_ms
        self.raw = raw

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        return f"SearchResults(mode={self.mode!r}, took_ms={self.took_ms}, results={self.results!r})"


if TYPE_CHECKING:
    GetResult = TypedDict(
        "GetResult",
        {"path": str, "from": int, "text": str, "lines": int, "total_lines": int, "truncated": bool, "hash": str},
    )

    class WriteOutcome(TypedDict, total=False):
        written: bool  # False: memory held it already (duplicate_of names it)
        duplicate_of: str
        superseded: str | None  # where the lines `supersedes` named are now, marked

    class WriteResult(WriteOutcome):
        path: str
        start_line: int
        end_line: int
        citation: str
        indexed: bool
        index_error: str | None

else:  # what the daemon answers; the TypedDicts above only describe them
    GetResult = WriteResult = dict

_HIT_FIELDS = frozenset(SearchHit._fields) - {"extra"}


def search_results(raw: dict[str, Any]) -> SearchResults:
    """A `search` answer (as the daemon sends it) as typed results; fields it does not know stay in `extra`/`raw`."""
    hits = []
    for found in raw.get("results", []):
        known = {k: found.get(k) for k in _HIT_FIELDS}
        hits.append(SearchHit(**known, extra={k: v for k, v in found.items() if k not in _HIT_FIELDS}))
    return SearchResults(
        results=hits,
        mode=raw.get("mode", ""),
        provider=raw.get("provider"),
        model=raw.get("model"),
        took_ms=float(raw.get("took_ms", 0.0)),
        raw=raw,
    )
