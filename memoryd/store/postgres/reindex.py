"""Atomic full reindex in PostgreSQL: build the namespace anew in a staging schema while the live one serves,
then swap the schemas by name in one transaction. A reindex that dies leaves only its staging schema, which the
namespace's writer drops when it next starts."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import psycopg
from psycopg import sql

from memoryd.store.interface import Filled, MemoryStore
from memoryd.store.postgres import Store
from memoryd.store.postgres.leadership import GENERATION
from memoryd.store.postgres.liveness import connect
from memoryd.store.postgres.schema import RETIRED_MARK, STAGING_MARK, schema_name
from memoryd.store.rows import one_row

R = TypeVar("R", bound=Filled)


def staging_namespace(namespace: str) -> str:
    return f"{namespace}{STAGING_MARK}{os.getpid()}"


def build(live: Store, fill: Callable[[MemoryStore], R]) -> tuple[Store, R]:
    """A staging namespace filled by a forced sync, its ids past the live ones, its embedding cache seeded from
    the live namespace."""
    staging = Store(
        live.url, staging_namespace(live.namespace), readers=live.readers_granted, max_connections=live.max_connections
    )
    try:
        with live.reading() as cur:
            cur.execute(
                sql.SQL(
                    "SELECT coalesce(max(id), 0) + 1000, (SELECT coalesce(max(id), 0) + 1 FROM {s}.files)"
                    " FROM {s}.chunks"
                ).format(s=live._s)
            )
            next_chunk, next_file = one_row(cur.fetchone())
        with staging.writing() as cur:
            # a search that read ids from the old schema and rows from the new finds nothing, never another chunk
            cur.execute(
                sql.SQL("ALTER TABLE {}.chunks ALTER COLUMN id RESTART WITH {}").format(
                    staging._s, sql.Literal(int(next_chunk))
                )
            )
            cur.execute(
                sql.SQL("ALTER TABLE {}.files ALTER COLUMN id RESTART WITH {}").format(
                    staging._s, sql.Literal(int(next_file))
                )
            )
        staging.copy_cache_from(live.schema)
        report = fill(staging)
        if report.skipped and not staging.row_counts()["files"] and live.row_counts()["files"]:
            raise RuntimeError(f"the new index holds no file ({len(report.skipped)} skipped); the live one is kept")
    except BaseException:
        discard(staging)
        raise
    return staging, report


def discard(staging: Store) -> None:
    name = staging.schema
    staging.close()
    with _admin(staging.url) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def swap(live: Store, staging: Store) -> None:
    """Put the staging schema in the live one's place in one transaction (through the live writer connection,
    which holds the namespace's lock); searches that began on the old schema finish on it."""
    built = staging.schema
    staging.close()
    retired = schema_name(f"{live.namespace}{RETIRED_MARK}{os.getpid()}")
    with live.writing() as cur:
        cur.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(live._s, sql.Identifier(retired)))
        cur.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(sql.Identifier(built), live._s))
        cur.execute(  # the writer generation goes on with the namespace (leadership)
            sql.SQL(
                "INSERT INTO {s}.meta SELECT key, value FROM {r}.meta WHERE key = %s"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ).format(s=live._s, r=sql.Identifier(retired)),
            (GENERATION,),
        )
        cur.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(retired)))
        live._grant(cur)
    live._dims = 0


def _admin(url: str) -> psycopg.Connection:
    return connect(url)
