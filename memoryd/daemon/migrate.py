"""`memoryd store migrate`: move an agent's index to another store (SQLite to a PostgreSQL namespace, or back).

The Markdown is the truth, so the target is built from it by an ordinary sync; what an index holds that the files
do not is its embedding cache (the model's work) and its access statistics, and those are copied first, so the
sync embeds nothing that the old index had already embedded. Safe while a daemon serves the old store: the source
is only read, and the target is written under the namespace's writer lock (or a file no one else holds)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.config import AgentConfig
from memoryd.curation.carry import carry
from memoryd.memory import AgentMemory
from memoryd.store.backend import holds_file, retarget
from memoryd.store.backend import open_source as source_store
from memoryd.store.interface import MemoryStore
from memoryd.store.lock import index_lock_path

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
    try:
        return retarget(agent, to, namespace, data_dir)
    except ValueError as exc:
        raise MigrationError(str(exc)) from None


def open_source(agent: AgentConfig) -> MemoryStore:
    """The agent's current store, to read from (never a file that is not there: opening would make it)."""
    try:
        return source_store(agent)
    except FileNotFoundError as exc:
        raise MigrationError(f"{exc} to migrate") from None


def migrate(
    source: MemoryStore, target: AgentConfig, progress: Progress | None = None, *, moving: AgentConfig | None = None
) -> Migration:
    """Copy the embedding cache and access statistics into the target store, then build it from the Markdown;
    `moving` (the agent as configured now) brings its forget record and change log along, before the sync reads
    the record."""
    started = time.monotonic()
    if moving is not None:
        carry(moving, target)
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
    if not holds_file(target):  # this run's hold on the agent is over; a daemon holds its own
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
