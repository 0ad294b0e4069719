"""The PostgreSQL backend: a namespace that several daemons share, one writing (whoever holds the namespace's lock),
the others standing by or reading, on the primary or a streaming replica. A reindex builds a staging schema and
swaps it in by name (memoryd.store.postgres.reindex)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import structlog

from memoryd.settings import PostgresStore
from memoryd.store.interface import Filled, MemoryStore
from memoryd.store.postgres import Store, redact_url
from memoryd.store.postgres import reindex as staged
from memoryd.store.postgres.followed import FollowedVectors

log = structlog.get_logger("memoryd.store")
R = TypeVar("R", bound=Filled)


class PostgresBackend:
    kind = "postgresql"
    watched = True  # other daemons may write the namespace, or leave it to this one

    def __init__(self, settings: PostgresStore) -> None:
        self.settings = settings
        self.healed: str | None = None
        self._open()
        try:
            self.lead()
        except BaseException:  # a store left open would keep its write session, and the lock, for the process's life
            self.store.close()
            raise
        self._warm()

    def _open(self) -> None:
        pg = self.settings
        self.store: Store = Store(
            pg.url, pg.namespace, read_url=pg.read_url, readers=pg.readers, max_connections=pg.max_connections
        )
        self.vectors = FollowedVectors(self.store)

    def _warm(self) -> None:
        """Read the postings and the vectors in the background (after the lead: a writer may first add the change
        log they follow); the server ranks until they are held."""
        self.store.postings.start()
        self.vectors.start()

    @property
    def role(self) -> str:
        if self.store.writable:
            return "writer"
        return "standby" if self.store.may_write else "reader"

    def lead(self) -> bool:
        if self.store.writable:
            return True
        if not self.store.try_lead():
            return False
        log.info("writing the shared namespace", namespace=self.settings.namespace)
        return True

    def still_leads(self) -> bool:
        return self.store.check_writer()

    @property
    def healthy(self) -> bool:
        return bool(self.store.health["ok"])

    def damage(self) -> str | None:
        return None  # the server keeps its own data sound; a dropped connection is found and replaced on use

    def heal(self, why: BaseException | str) -> None:
        """Reconnect from scratch (the namespace itself is the server's to keep)."""
        self.store.close()
        self._open()
        self.lead()
        self._warm()
        self.healed = str(why)

    def build(self, fill: Callable[[MemoryStore], R]) -> tuple[Store, R]:
        return staged.build(self.store, fill)

    def swap(self, staged_store: Store) -> None:
        staged.swap(self.store, staged_store)

    def discard(self, staged_store: Store) -> None:
        staged.discard(staged_store)

    def status(self) -> dict[str, Any]:
        pg = self.settings
        return {
            "store": redact_url(pg.url),
            "store_kind": self.kind,
            "namespace": pg.namespace,
            "role": self.role,
            "store_health": dict(self.store.health),
            "read_from": redact_url(pg.read_url) if pg.read_url else "primary",
            "replica_lag_s": self.store.replica_lag() if pg.read_url else None,
            "replica": self.store.replica_state(),
            "writer": self.store.writer_lock(),
            "readers_granted": list(pg.readers),
            "read_connections": self.store.connection_counts(),
            "sessions": dict(self.store.sessions),
            "incompatible": self.store.incompatible,
            "keyword_ranking": "bm25 (in the daemon)" if self.store.postings.ready else "bm25 (postgresql)",
            "keyword_postings_mb": round(self.store.postings.nbytes / 2**20, 3),
            "vectors_searched": "in the daemon" if self.vectors.held else "by the server (hnsw)",
        }

    def close(self) -> None:
        self.store.close()
