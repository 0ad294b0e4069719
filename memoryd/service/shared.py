"""A shared store's standby and writer: who writes the namespace, and catching up after the server was away."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from memoryd.service.runtime import AgentRuntime

log = structlog.get_logger("memoryd.shared")
WATCH_SECONDS = 1.0  # how often a standby tries to take over, and the writer checks that its lock still holds


def watch_shared_store(runtime: AgentRuntime) -> None:
    """Stand by until no other daemon writes the namespace, then write it (a sync takes the workspace's changes
    since); after the server was away, sync what could not be written meanwhile. Runs until the runtime stops."""
    memory = runtime.memory
    while not runtime.stopping:
        time.sleep(WATCH_SECONDS)
        was = memory.role
        try:
            leading = memory.lead() and memory.store.check_writer()
        except Exception:  # a watcher that died would leave a standby standing by forever
            log.exception("store watch failed", agent=runtime.agent.id)
            continue
        if leading and was != "writer":
            log.info("took over writing the shared namespace", agent=runtime.agent.id)
            runtime.request_sync()
        elif leading and (runtime.sync_error or runtime.unindexed) and memory.store.health["ok"]:
            runtime.unindexed = False
            runtime.request_sync()
