"""Reading a namespace's change log (schema.CHANGES): what daemons holding its postings or vectors follow."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, TypeVar

import psycopg
from psycopg import sql

from memoryd.store.rows import one_row

R = TypeVar("R")
# Past this many rows gained (a sync of a whole new folder by another daemon), a follower reads everything again in
# the background rather than apply them under its lock, the server ranking meanwhile.
MAX_GAINED = 20_000
MISSING_RETRY_SECONDS = 60.0  # a namespace without a log is looked at again after this long (its writer upgrades it)
FAILED_RETRY_SECONDS = 10.0  # a load that failed (the server away) is tried again by a search after this long

MARK = (
    "SELECT (SELECT value FROM {s}.meta WHERE key = 'index_generation'),"
    " (SELECT coalesce(max(seq), 0) FROM {s}.changes)"
)
SINCE = (
    "SELECT (SELECT value FROM {s}.meta WHERE key = 'index_generation'),"
    " (SELECT value FROM {s}.meta WHERE key = 'changes_pruned_below'),"
    " array_agg(chunk ORDER BY seq), array_agg(op ORDER BY seq), max(seq) FROM {s}.changes WHERE seq > %s"
)


class LogMissing(Exception):
    """The namespace has no change log: an older memoryd made it and no newer writer has upgraded it yet."""


class Followed(Protocol):
    """What a follower reads of a namespace's store (memoryd.store.postgres.Store)."""

    namespace: str
    _s: sql.Identifier
    _closed: bool

    def reading(self, replica: bool = False) -> AbstractContextManager[psycopg.Cursor]: ...
    def borrowing(self) -> AbstractContextManager[None]: ...
    def live_reader(self, replica: bool = False) -> psycopg.Connection: ...


@dataclass(frozen=True)
class Position:
    """Where a follower is: the index generation it holds (another after a reindex) and the last row applied."""

    generation: str
    seq: int


@dataclass(frozen=True)
class Gained:
    """The log's rows past a position, in order; `lost` when the follower must read everything again (another
    generation, or rows it had not read were pruned)."""

    lost: bool
    chunks: tuple[int, ...] = ()
    ops: tuple[str, ...] = ()
    last: int = 0

    @property
    def large(self) -> bool:
        return len(self.chunks) > MAX_GAINED

    def of(self, *ops: str) -> list[int]:
        return [c for c, op in zip(self.chunks, self.ops, strict=True) if op in ops]

    @property
    def removed(self) -> set[int]:
        return set(self.of("r"))

    def kept(self, *ops: str) -> list[int]:
        """The chunks of `ops` not removed since, each once, in log order."""
        removed = self.removed
        return [c for c in dict.fromkeys(self.of(*ops)) if c not in removed]


def position(conn: psycopg.Connection, schema: sql.Identifier) -> Position | None:
    """The log's end now, on this connection (None where the namespace has no generation yet)."""
    try:
        row = conn.execute(sql.SQL(MARK).format(s=schema)).fetchone()
    except psycopg.errors.UndefinedTable:
        raise LogMissing from None
    if row is None or row[0] is None:
        return None
    return Position(str(row[0]), int(row[1]))


def gained(
    store: Followed, at: Position, rows: Callable[[psycopg.Cursor, Gained], R] | None = None
) -> tuple[Gained, R | None]:
    """The rows past `at`, read where searches read (the replica once it has replayed what was heard of), and
    what `rows` reads of them on the same cursor (the same server: the chunks the log names are there)."""
    with store.reading(replica=True) as cur:
        try:
            cur.execute(sql.SQL(SINCE).format(s=store._s), (at.seq,))
        except psycopg.errors.UndefinedTable:  # dropped since (an older memoryd's tables restored)
            raise LogMissing from None
        generation, floor, chunks, ops, last = one_row(cur.fetchone())
        if generation != at.generation or (floor is not None and int(floor) > at.seq):
            return Gained(lost=True), None
        if not chunks:
            return Gained(lost=False, last=at.seq), None
        found = Gained(False, tuple(int(c) for c in chunks), tuple(ops), int(last))
        return found, rows(cur, found) if rows is not None and len(found.chunks) <= MAX_GAINED else None
