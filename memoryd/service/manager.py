"""The daemon's state: one runtime per agent, the shared watchers, periodic reconcile, config reloads."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import structlog

from memoryd import __version__
from memoryd.config import Config, ConfigError, load_config
from memoryd.service.runtime import AgentRuntime
from memoryd.service.watchers import WatchHub

log = structlog.get_logger("memoryd.manager")


class Manager:
    def __init__(self, config: Config, *, watch: bool = True) -> None:
        self.config = config
        self.started_at = time.time()
        self.runtimes: dict[str, AgentRuntime] = {}
        self.hub = WatchHub() if watch else None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> None:
        for agent in self.config.agents:
            self._open(agent.id)
        self._ticker = threading.Thread(target=self._tick, name="reconcile", daemon=True)
        self._ticker.start()

    def _open(self, agent_id: str) -> AgentRuntime:
        agent = self.config.agent(agent_id)
        runtime = AgentRuntime(agent, self.config)
        self.runtimes[agent.id] = runtime
        if self.hub is not None:
            runtime.watcher_state = self.hub.add(agent, runtime.file_changed)
        reason = runtime.memory.needs_reindex()
        if reason:
            log.info("index out of date, reindexing", agent=agent.id, reason=reason)
            runtime.start_reindex()
        else:
            runtime.request_sync()
        log.info(
            "agent ready",
            agent=agent.id,
            workspace=str(agent.workspace),
            store=str(agent.store),
            provider=runtime.memory.embedder.provider if runtime.memory.embedder else None,
            watcher=runtime.watcher_state,
        )
        return runtime

    def _close(self, agent_id: str) -> None:
        runtime = self.runtimes.pop(agent_id)
        if self.hub is not None:
            self.hub.remove(agent_id)
        runtime.close()

    def begin_stop(self) -> None:
        """SIGTERM: every job stops at its next step and every waiting client is answered `stopping`."""
        self._stop.set()
        for runtime in list(self.runtimes.values()):
            runtime.begin_stop()

    def close(self) -> None:
        self.begin_stop()
        with self._lock:
            for agent_id in list(self.runtimes):
                self._close(agent_id)
        if self.hub is not None:
            self.hub.close()

    def reload(self, path: str | None = None) -> list[str]:
        """Re-read the config file (SIGHUP): reopen changed agents, open new ones, close removed ones."""
        source = path or (str(self.config.source_path) if self.config.source_path else None)
        if source is None:
            log.info("reload: no config file, nothing to do")
            return []
        try:
            new = load_config(source, data_dir=self.config.data_dir, socket=self.config.socket)
        except ConfigError as exc:
            log.error("reload failed, keeping the running config", error=str(exc))
            return []
        changed = []
        with self._lock:
            old_agents = {a.id: a for a in self.config.agents}
            self.config = new
            for agent in new.agents:
                if old_agents.get(agent.id) != agent:
                    if agent.id in self.runtimes:
                        self._close(agent.id)
                    self._open(agent.id)
                    changed.append(agent.id)
            for agent_id in set(old_agents) - {a.id for a in new.agents}:
                self._close(agent_id)
                changed.append(agent_id)
        log.info("config reloaded", changed=changed)
        return changed

    def _tick(self) -> None:
        """Periodic reconcile (catches what watchers missed) and the optional sync interval."""
        last_reconcile = time.monotonic()
        last_interval = time.monotonic()
        while not self._stop.wait(1.0):
            now = time.monotonic()
            cfg = self.config
            due = cfg.reconcile_seconds > 0 and now - last_reconcile >= cfg.reconcile_seconds
            due = due or (cfg.sync_interval_seconds > 0 and now - last_interval >= cfg.sync_interval_seconds)
            if due:
                last_reconcile = last_interval = now
                with self._lock:
                    for runtime in self.runtimes.values():
                        runtime.request_sync()

    # -- lookups -------------------------------------------------------------------------------------

    def runtime(self, agent_id: str | None) -> AgentRuntime:
        with self._lock:
            agent = self.config.agent(agent_id)
            return self.runtimes[agent.id]

    def info(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "pid": os.getpid(),
            "uptime_s": round(time.time() - self.started_at, 1),
            "agents": list(self.runtimes),
            "default_agent": self.config.default_agent.id,
            "socket": str(self.config.socket),
        }
