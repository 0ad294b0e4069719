"""A namespace's two background threads: the listener that hears every daemon's commits, and the beat that keeps
this daemon's write session alive (and notices when the server ended it)."""

from __future__ import annotations

import threading
import time

import psycopg
import structlog
from psycopg import sql

from memoryd.store.postgres.liveness import BEAT_SECONDS, answers, connect
from memoryd.store.postgres.replica import CURRENT_LSN, ReplicaGate
from memoryd.store.postgres.schema import CHANNEL
from memoryd.store.rows import one_row

log = structlog.get_logger("memoryd.postgres")
RETRY_SECONDS = (0.5, 1, 2, 4, 8, 15)  # backoff between connection attempts after a failure


class Background:
    """Mixed into Connections, whose state these threads read."""

    url: str
    namespace: str
    replica: ReplicaGate | None
    writable: bool
    _closed: bool
    _writer: psycopg.Connection | None
    _write_lock: threading.RLock

    def _invalidate(self) -> None:
        raise NotImplementedError

    def _heard(self) -> None:
        raise NotImplementedError

    def _start_background(self) -> None:
        threading.Thread(target=self._listen, name=f"pg-listen-{self.namespace}", daemon=True).start()
        threading.Thread(target=self._beat, name=f"pg-beat-{self.namespace}", daemon=True).start()

    def _listen(self) -> None:
        """LISTEN for commits to this namespace (from any daemon, through the primary) and forget what they
        changed; reconnects with backoff while the server is away."""
        attempt = 0
        while not self._closed:
            try:
                with connect(self.url) as conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                    attempt = 0
                    if self.replica is not None:  # and what was committed meanwhile, the replica must replay too
                        self.replica.heard(int(one_row(conn.execute(CURRENT_LSN).fetchone())[0]))
                    self._invalidate()  # whatever happened while away
                    while not self._closed:
                        # the first notification ends the wait: the connection is free for the query below
                        notes = conn.notifies(timeout=1.0, stop_after=1)
                        if any(note.payload == self.namespace for note in list(notes)):
                            if self.replica is not None:  # the replica serves reads once it has replayed this
                                self.replica.heard(int(one_row(conn.execute(CURRENT_LSN).fetchone())[0]))
                            self._heard()
            except psycopg.Error:
                if self._closed:
                    return
                time.sleep(RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)])
                attempt += 1

    def _beat(self) -> None:
        """Keep the write session busy enough that the server does not end it (hold_for_life), and notice when it
        has: a write transaction under way is busy enough, and is not waited for."""
        while not self._closed:
            time.sleep(BEAT_SECONDS)
            if self._writer is not None and self._write_lock.acquire(blocking=False):
                try:
                    if self._writer is not None and not answers(self._writer):
                        self._writer = None
                        self.writable = False
                        log.warning("lost the namespace's write session", namespace=self.namespace)
                finally:
                    self._write_lock.release()
