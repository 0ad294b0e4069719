"""`memoryd store migrate`: move an agent's index to another store (SQLite to a PostgreSQL namespace, or back).

The Markdown is the truth, so the target is built from it by an ordinary sync; what an index holds that the files
do not is its embedding cache (the model's work) and its access statistics, and those are copied first, so the
sync embeds nothing that the old index had already embedded. Safe while a daemon serves the old store: the source
is only read, and the target is written under the namespace's writer lock (or a file no one else holds)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memoryd.config import AgentConfig
from memoryd.index.interface import MemoryStore
from memoryd.index.lock import index_lock_path
from memoryd.memory import AgentMemory
from memoryd.settings import PostgresStore

Progress = Callable[[str, int, int], None]  # stage ("cache", "sync"), done, total


class MigrationError(RuntimeError):
    """The migration cannot start or finish; nothing of the source was changed."""


@dataclass(frozen=True)
class Migration:
    source: str
    target: str
    cached_embeddings: int  # copied into the target's cache (rows it already held are not counted)
    access_counts: int
    files: int
    chunks: int
    embedded_chunks: int
    newly_embedded: int  # chunks the model had to embed (not in the old cache)
    embedding_error: str | None
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def target_agent(agent: AgentConfig, to: str, namespace: str | None, data_dir: Path) -> AgentConfig:
    """The agent as it will be configured once moved: `to` is a postgresql:// URL or an index file path."""
    if to.startswith(("postgresql://", "postgres://")):
        if agent.postgres is not None and agent.postgres.url == to:
            raise MigrationError(f"agent {agent.id} already uses this PostgreSQL store")
        from memoryd.index.postgres.schema import MAX_NAMESPACE, schema_name  # psycopg only where it is used

        name = namespace or agent.id
        try:
            schema_name(name)  # its characters; the config takes at most MAX_NAMESPACE of them
            if len(name) > MAX_NAMESPACE:
                raise ValueError(f"namespace {name!r}: at most {MAX_NAMESPACE} characters")
        except ValueError as exc:
            raise MigrationError(str(exc)) from None
        store = PostgresStore(to, name, readers=agent.postgres.readers if agent.postgres else ())
        hold = data_dir / "agents" / agent.id / f"migrate-{store.namespace}.hold"  # this run's hold on the agent
        return replace(agent, store=hold, postgres=store)
    path = Path(to).expanduser().resolve()
    if agent.postgres is None and path == agent.store.resolve():
        raise MigrationError(f"agent {agent.id} already uses {path}")
    if path.exists():
        raise MigrationError(f"{path} exists: migrate into a new file, or reindex that one")
    return replace(agent, store=path, postgres=None)


def open_source(agent: AgentConfig) -> MemoryStore:
    """The agent's current store, to read from (never a file that is not there: opening would make it)."""
    if agent.postgres is not None:
        from memoryd.index.postgres import Store as Postgres

        pg = agent.postgres
        return Postgres(pg.url, pg.namespace, read_url=pg.read_url, create=False)
    if not agent.store.exists():
        raise MigrationError(f"agent {agent.id} has no index at {agent.store} to migrate")
    from memoryd.index.sqlite import Store as SQLite

    return SQLite(agent.store)


def migrate(source: MemoryStore, target: AgentConfig, progress: Progress | None = None) -> Migration:
    """Copy the embedding cache and access statistics into the target store, then build it from the Markdown."""
    started = time.monotonic()
    total = source.counts().get("cached_embeddings", 0)
    with AgentMemory(target) as memory:
        if memory.role != "writer":
            who = "another daemon writes" if memory.role == "standby" else "this role may not write"
            raise MigrationError(f"cannot write the target: {who} {memory.store.path}")
        copied = done = 0
        for rows in source.export_cache():
            copied += memory.store.import_cache(rows)
            done += len(rows)
            if progress:
                progress("cache", done, max(total, done))
        access = source.export_access()
        memory.store.import_access(access)
        report = memory.sync(force=True, progress=(lambda d, t: progress("sync", d, t)) if progress else None)
        counts = memory.store.counts()
    if target.postgres is not None:  # this run's hold on the agent is over; a daemon holds its own
        index_lock_path(target.store).unlink(missing_ok=True)
    return Migration(
        source=str(source.path),
        target=str(memory.store.path),
        cached_embeddings=copied,
        access_counts=len(access),
        files=counts["files"],
        chunks=counts["chunks"],
        embedded_chunks=counts["embedded_chunks"],
        newly_embedded=report.embedded,
        embedding_error=report.embedding_error,
        seconds=round(time.monotonic() - started, 2),
    )
