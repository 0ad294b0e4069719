"""The PostgreSQL store: a namespace (one agent's memory) that several daemons share, one writing, any number
reading, on the primary or a streaming replica. Keyword ranking is BM25 over memoryd's analyzer terms
(`terms.py`), ranked in the daemon once it holds the postings (`postings.py`); vectors are searched in a matrix
in the daemon (`followed.py`), through pgvector's HNSW index until it is loaded."""

import structlog
from psycopg import sql

from memoryd.store.interface import StoreUnavailable
from memoryd.store.postgres.cache import Cache
from memoryd.store.postgres.connections import NotGranted, NotWriter, redact_url
from memoryd.store.postgres.schema import LAYOUT_TARGET, RETIRED_MARK, STAGING_MARK, UP_TO_DATE, upgrade

log = structlog.get_logger("memoryd.postgres")


class Store(Cache):
    """One namespace in PostgreSQL (memoryd.store.interface.MemoryStore)."""

    @property
    def ranking_cost(self) -> float:
        """Ranked in the daemon's postings about as dearly as FTS5 ranks; in SQL, from each matching row's jsonb
        counts, about 40 times (see memoryd.search.keyword.RECRUIT_SHARE for what it changes)."""
        return 1.0 if self.postings.ready else 40.0

    def try_lead(self) -> bool:
        """Become the namespace's writer if no other daemon is; on becoming it, drop what interrupted reindexes
        left (holding the namespace's lock, this daemon knows no reindex of it runs anywhere)."""
        was = self.writable
        if not super().try_lead():
            return False
        if not was:
            self._upgrade()
            try:
                dropped = self.drop_leftovers()
            except StoreUnavailable as exc:  # busy too: a killed reindex's session may still hold them a while
                log.warning(
                    "what interrupted reindexes left is dropped at the next start instead",
                    namespace=self.namespace,
                    error=str(exc),
                )
                dropped = []
            if dropped:
                log.warning("dropped what interrupted reindexes left", namespace=self.namespace, schemas=dropped)
        return True

    def _upgrade(self) -> None:
        """Add what a namespace made by an older memoryd lacks; checked first, as ALTER TABLE would take the
        table's exclusive lock (and hold up other daemons' searches) even when there is nothing to add."""
        with self.reading() as cur:
            cur.execute(UP_TO_DATE, (self.schema, LAYOUT_TARGET))
            if cur.fetchone() is not None:
                return
        try:
            with self.writing() as cur:
                cur.execute(upgrade(self.schema))
                self._grant(cur)  # the readers' grants cover the tables there were: the new ones too
        except NotGranted as exc:  # a writer that does not own the tables
            log.warning("cannot upgrade the namespace's tables", namespace=self.namespace, error=str(exc))

    def leftovers(self) -> list[str]:
        """Staging and retired schemas of this namespace."""
        prefixes = [f"{self.schema}{STAGING_MARK}", f"{self.schema}{RETIRED_MARK}"]
        with self.reading() as cur:
            cur.execute(
                "SELECT nspname FROM pg_namespace WHERE left(nspname, %s) = %s OR left(nspname, %s) = %s",
                (len(prefixes[0]), prefixes[0], len(prefixes[1]), prefixes[1]),
            )
            return [r[0] for r in cur]

    def drop_leftovers(self) -> list[str]:
        found = self.leftovers()
        if found:
            with self.writing() as cur:
                for name in found:
                    cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
        return found


__all__ = ["NotGranted", "NotWriter", "Store", "redact_url"]
