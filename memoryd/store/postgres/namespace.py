"""Who may hold a namespace: the checks and grants made on its schema when a daemon first reaches it."""

from __future__ import annotations

import psycopg

from memoryd.store.postgres.schema import grant_read


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
