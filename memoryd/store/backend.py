"""Where a store kind is chosen: the backend of an agent's configured store (memoryd.store.interface.Backend), and
what the daemon's commands ask of a store they do not serve (migrate, doctor, the process's memory cap). Nothing
outside memoryd.store asks which kind a store is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memoryd.settings import AgentConfig
from memoryd.store.interface import Backend, MemoryStore


def open_backend(agent: AgentConfig, *, use_sqlite_vec: bool = True) -> Backend[Any]:
    """The backend of the agent's configured store, opened (a standby or reader of a shared store included)."""
    if agent.postgres is not None:
        from memoryd.store.postgres.backend import PostgresBackend  # psycopg only where PostgreSQL is used

        return PostgresBackend(agent.postgres)
    from memoryd.store.sqlite.backend import SQLiteBackend

    return SQLiteBackend(agent.store, use_sqlite_vec=use_sqlite_vec)


def unwritten_here(role: str, healthy: bool = True) -> str | None:
    """Why a `write` on a daemon that does not write the shared store is saved in this host's note only (None when
    the server is away: that, not another daemon, keeps this one from writing)."""
    if not healthy:
        return None
    if role == "reader":
        return (
            "saved in this host's note; this role only reads the shared store: the namespace's writer indexes the"
            " note once it reaches the writer's folder"
        )
    if role == "standby":
        return (
            "saved in this host's note; the writer indexes it once it reaches its folder (or this daemon, if it leads)"
        )
    return None


def kind_of(agent: AgentConfig) -> str:
    return "postgresql" if agent.postgres is not None else "sqlite"


def describe(agent: AgentConfig) -> str:
    """The agent's store as logs and errors name it, without a password."""
    if agent.postgres is not None:
        from memoryd.postgres_urls import mask_password

        return f"{mask_password(agent.postgres.url)}#{agent.postgres.namespace}"
    return str(agent.store)


def open_source(agent: AgentConfig) -> MemoryStore:
    """The agent's current store, to read from; never made where it is not (FileNotFoundError)."""
    if agent.postgres is not None:
        from memoryd.store.postgres import Store as Postgres

        pg = agent.postgres
        return Postgres(pg.url, pg.namespace, read_url=pg.read_url, create=False)
    if not agent.store.exists():
        raise FileNotFoundError(f"agent {agent.id} has no index at {agent.store}")
    from memoryd.store.sqlite import Store as SQLite

    return SQLite(agent.store)


def retarget(agent: AgentConfig, to: str, namespace: str | None, data_dir: Path) -> AgentConfig:
    """The agent as it will be configured once its store is `to`: a postgresql:// URL or a new index file.
    ValueError when `to` is where it is already, or cannot be a target."""
    from dataclasses import replace

    from memoryd.config import is_postgres_url
    from memoryd.settings import PostgresStore

    if is_postgres_url(to):
        if agent.postgres is not None and agent.postgres.url == to:
            raise ValueError(f"agent {agent.id} already uses this PostgreSQL store")
        from memoryd.store.postgres.schema import MAX_NAMESPACE, schema_name  # psycopg only where it is used

        name = namespace or agent.id
        schema_name(name)  # its characters; the config takes at most MAX_NAMESPACE of them
        if len(name) > MAX_NAMESPACE:
            raise ValueError(f"namespace {name!r}: at most {MAX_NAMESPACE} characters")
        store = PostgresStore(to, name, readers=agent.postgres.readers if agent.postgres else ())
        hold = data_dir / "agents" / agent.id / f"migrate-{store.namespace}.hold"  # this run's hold on the agent
        return replace(agent, store=hold, postgres=store)
    path = Path(to).expanduser().resolve()
    if agent.postgres is None and path == agent.store.resolve():
        raise ValueError(f"agent {agent.id} already uses {path}")
    if path.exists():
        raise ValueError(f"{path} exists: migrate into a new file, or reindex that one")
    return replace(agent, store=path, postgres=None)


def config_changes(moving: AgentConfig, target: AgentConfig) -> list[tuple[str, str, str]]:
    """What to change in the agent's [[agents]] table once its index moved: (set|remove|note, key, value or why). The
    store's URL is given without its password, which the daemon gets from PGPASSWORD or ~/.pgpass."""
    from memoryd.postgres_urls import without_password

    changes: list[tuple[str, str, str]] = []
    if target.postgres is not None:
        pg = target.postgres
        changes += [("set", "store", f'"{without_password(pg.url)}"'), ("set", "namespace", f'"{pg.namespace}"')]
        if moving.postgres is not None and moving.postgres.read_url:
            changes.append(("remove", "read_url", "a replica of the old server; set one of the new server's"))
        changes.append(("note", "", "the password: PGPASSWORD or ~/.pgpass for the daemon, or ${VAR} in the URL"))
    else:
        changes.append(("set", "store", f'"{target.store}"'))
        if moving.postgres is not None:
            for key, why in (
                ("namespace", "SQLite has none"),
                ("read_url", "SQLite has none"),
                ("readers", "SQLite has no roles"),
                ("max_connections", "SQLite has no server"),
            ):
                changes.append(("remove", key, why))
    return changes


def holds_file(agent: AgentConfig) -> bool:
    """The store is a file of this machine's (a shared store's hold file is only this daemon's claim on it)."""
    return agent.postgres is None


def offline_check(agent: AgentConfig, integrity: bool) -> Iterator[tuple[str, str, str]]:
    """What `doctor` can say of the store while no daemon serves it: (level, message, fix)."""
    if agent.postgres is not None:
        from memoryd.store.postgres.checks import offline_check as shared

        yield from shared(agent.postgres)
    else:
        from memoryd.store.sqlite.backend import offline_check as local

        yield from local(agent.store, integrity)


def live_check(agent: AgentConfig, state: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """What `doctor` can say of the store from its running daemon's status: (level, message, fix)."""
    if agent.postgres is not None:
        from memoryd.store.postgres.checks import live_check as shared

        yield from shared(state)


def index_error_fix(agent: AgentConfig, error: str) -> str:
    """What to do about an agent's `index_error`."""
    if agent.postgres is not None:
        from memoryd.store.postgres.checks import index_error_fix as shared

        return shared(error)
    return "it is rebuilt from the notes; wait, then check again"


def limit_process_memory(megabytes: float) -> None:
    """A soft cap on what the embedded store allocates in the whole process (every index's page caches): past it
    SQLite reuses cache pages instead of growing, and reads what it dropped from the OS's file cache. 0: no cap."""
    import apsw

    apsw.soft_heap_limit(int(megabytes * 2**20))


def process_memory_limit() -> int:
    """The cap in force, in bytes, as SQLite reports it."""
    import apsw

    return int(apsw.soft_heap_limit(-1))
