"""Who may hold a namespace: the checks and grants made on its schema when a daemon first reaches it."""

from __future__ import annotations

import contextlib

import psycopg
from psycopg import sql

from memoryd.store.postgres.schema import GENERATION_ROW, SCHEMA_VERSION, create_tables, grant_read


def create_namespace(conn: psycopg.Connection, cur: psycopg.Cursor, schema: str) -> None:
    """Make the namespace's schema and tables if they are missing (the first daemon with the right to does)."""
    cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
    if cur.fetchone() is not None:
        return
    cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
    if cur.fetchone() is None:  # a superuser's step, once per database (docs/postgresql.md)
        cur.execute("CREATE EXTENSION vector")
    with contextlib.suppress(psycopg.errors.DuplicateSchema), conn.transaction():
        cur.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        cur.execute(create_tables(schema))
        cur.execute(  # the writer generation's row is there from the start, so that writes can hold it (leadership)
            sql.SQL("INSERT INTO {}.meta VALUES ('schema_version', %s), ('writer_generation', '0')").format(
                sql.Identifier(schema)
            ),
            (str(SCHEMA_VERSION),),
        )
        cur.execute(sql.SQL(GENERATION_ROW).format(s=sql.Identifier(schema)))


def foreign_owner(cur: psycopg.Cursor, namespace: str, schema: str) -> str | None:
    """Why a namespace this role may write, but whose schema another role owns, is refused; None when it is not.
    Any role with CREATE on the database can make `memoryd_<name>` first, grant a writer's role writing there, and
    read what that daemon writes. A namespace's writers own its schema, themselves or through a group role."""
    cur.execute(
        "SELECT pg_get_userbyid(n.nspowner), current_user, pg_has_role(current_user, n.nspowner, 'MEMBER'),"
        " EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid"
        " AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE'))"
        " FROM pg_namespace n WHERE n.nspname = %s",
        (schema,),
    )
    row = cur.fetchone()
    if row is None or row[2] or not row[3]:
        return None
    return (
        f"the namespace {namespace!r} (schema {schema}) is owned by role {row[0]!r}, which this role ({row[1]}) is"
        f" not a member of, yet it may write there: another role made it, and would read what this daemon writes."
        f" memoryd neither reads nor writes it; drop the schema, or make its owner a group role of this namespace's"
        f" writers (docs/postgresql.md)"
    )


def grant_readers(cur: psycopg.Cursor, schema: str, readers: tuple[str, ...]) -> None:
    """Read grants for the configured roles (the schema's owner only may give them)."""
    if not readers:
        return
    # its owner, or a member of the group role that owns it (both may grant)
    cur.execute("SELECT pg_has_role(current_user, nspowner, 'USAGE') FROM pg_namespace WHERE nspname = %s", (schema,))
    row = cur.fetchone()
    if row and row[0]:
        for statement in grant_read(schema, list(readers)):
            cur.execute(statement)


def too_new(conn: psycopg.Connection, schema: str) -> str | None:
    """Why this memoryd must not write a namespace a newer one made (its tables may hold what this one would
    break); None when it may."""
    row = conn.execute(
        sql.SQL("SELECT value FROM {}.meta WHERE key = 'schema_version'").format(sql.Identifier(schema))
    ).fetchone()
    found = int(row[0]) if row and str(row[0]).isdigit() else SCHEMA_VERSION
    if found <= SCHEMA_VERSION:
        return None
    return (
        f"the namespace's tables are schema {found}, made by a newer memoryd (this one knows {SCHEMA_VERSION}):"
        " it reads them and stands by, and never writes them; upgrade this daemon"
    )


def may_write(conn: psycopg.Connection, schema: str) -> bool:
    """Whether this role may change the namespace's chunks (a writer or standby), or only read them."""
    row = conn.execute(
        "SELECT has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE') FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = 'chunks'",
        (schema,),
    ).fetchone()
    return bool(row and row[0])
