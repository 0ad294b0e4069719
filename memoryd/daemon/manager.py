"""The daemon's state: one runtime per agent, the shared watchers, periodic reconcile, config reloads."""

from __future__ import annotations

import gc
import os
import threading
import time
from typing import Any

import structlog

from memoryd import __version__, heap
from memoryd.config import AgentConfig, Config, ConfigError, load_config
from memoryd.daemon.runtime import AgentRuntime
from memoryd.daemon.watchers import WatchHub
from memoryd.recall.answer import Recaller
from memoryd.sources.language import release_if_idle as release_language_model
from memoryd.store.backend import describe, process_memory_limit

log = structlog.get_logger("memoryd.manager")


CONTEXT_IDLE_SECONDS = 60.0  # a model context (documents', queries') is closed after this long unused
HEAP_TRIM_SECONDS = 60.0  # how often, when nothing is indexing, freed heap is handed back to the OS
WATCH_CHECK_SECONDS = 3.0  # how often dead observers and deleted or replaced roots are looked for


class Manager:
    def __init__(self, config: Config, *, watch: bool = True) -> None:
        self.config = config
        self.started_at = time.time()
        self.runtimes: dict[str, AgentRuntime] = {}
        self.hub = WatchHub() if watch else None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self.reload_error: str | None = None  # why the last SIGHUP reload was refused
        self.recaller = Recaller.create(config.data_dir)
        self.integrations: dict[str, dict[str, Any]] = {}  # client name -> {last_seen, calls}, since start
        self.ui: dict[str, Any] = {"url": None, "error": "starting"}  # the web page: where, or why not
        self.metrics: dict[str, Any] = {"url": None, "error": "starting"}  # the metrics endpoint: where, or why not

    # -- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Open every agent; if one cannot be opened (its index is locked by another daemon, say), close those
        already open and raise."""
        try:
            for agent in self.config.agents:
                self.runtimes[agent.id] = self._open(agent)
        except BaseException:
            self.close()
            raise
        self._ticker = threading.Thread(target=self._tick, name="reconcile", daemon=True)
        self._ticker.start()

    def _open(self, agent: AgentConfig) -> AgentRuntime:
        """Open an agent's runtime and start its first sync or reindex (not yet visible to requests)."""
        runtime = AgentRuntime(agent, self.config)
        if self.hub is not None:
            self.hub.add(agent, runtime.file_changed)
            hub = self.hub
            runtime.watcher_source = lambda: hub.state(agent.id)
        if not runtime.reindexer.begin_if_stale():  # a stale index is rebuilt rather than synced
            runtime.request_sync()
        log.info(
            "agent ready",
            agent=agent.id,
            workspace=str(agent.workspace),
            store=describe(agent),
            role=runtime.memory.role,
            provider=runtime.memory.embedder.provider if runtime.memory.embedder else None,
            watcher=runtime.watcher_state,
        )
        return runtime

    def _close(self, runtime: AgentRuntime) -> None:
        if self.hub is not None:
            self.hub.remove(runtime.agent.id)
        runtime.close()

    def begin_stop(self) -> None:
        """SIGTERM: every job stops at its next step and every waiting client is answered `stopping`."""
        self._stop.set()
        for runtime in list(self.runtimes.values()):
            runtime.begin_stop()

    def close(self) -> None:
        self.begin_stop()
        with self._lock:
            runtimes, self.runtimes = list(self.runtimes.values()), {}
        for runtime in runtimes:
            self._close(runtime)
        if self.hub is not None:
            self.hub.close()
        self.recaller.close()  # what it logged last is written

    def reload(self, path: str | None = None) -> list[str]:
        """Re-read the config file and the integration markers (SIGHUP). Changed and new agents are opened first,
        beside the running ones; only when every one opened are they swapped in. Otherwise the old config keeps
        serving, and the reason is logged and shown in `status` (`reload_error`)."""
        source = path or (str(self.config.source_path) if self.config.source_path else None)
        workspace = self.config.workspace_option if source is None else None
        try:  # with no config file, the defaults and --workspace again (integration markers may have changed)
            new = load_config(source, workspace=workspace, data_dir=self.config.data_dir, socket=self.config.socket)
        except ConfigError as exc:
            return self._reload_failed(f"config: {exc}")
        old_agents = {a.id: a for a in self.config.agents}
        changed = [a for a in new.agents if old_agents.get(a.id) != a]
        removed = [i for i in old_agents if i not in {a.id for a in new.agents}]
        for agent in changed:  # an agent whose store stays the same must let go of it before the new one opens
            if agent.id in self.runtimes and old_agents[agent.id].store == agent.store:
                self._retire(agent.id)
        opened: dict[str, AgentRuntime] = {}
        try:
            for agent in changed:
                opened[agent.id] = self._open(agent)
        except Exception as exc:  # keep what runs; undo what was opened
            for runtime in opened.values():
                self._close(runtime)
            for agent in changed:
                if agent.id not in self.runtimes and agent.id in old_agents:
                    self.runtimes[agent.id] = self._open(old_agents[agent.id])
            return self._reload_failed(f"agent could not be opened: {type(exc).__name__}: {exc}")
        with self._lock:
            retired = [self.runtimes.pop(i) for i in [*opened, *removed] if i in self.runtimes]
            self.runtimes.update(opened)
            self.config = new
            self.reload_error = None
        for runtime in retired:
            self._close(runtime)
        names = [*opened, *removed]
        log.info("config reloaded", changed=names)
        return names

    def _retire(self, agent_id: str) -> None:
        with self._lock:
            runtime = self.runtimes.pop(agent_id)
        self._close(runtime)

    def _reload_failed(self, reason: str) -> list[str]:
        self.reload_error = f"{time.strftime('%Y-%m-%d %H:%M:%S')}: {reason}"
        log.error("reload failed, keeping the running config", error=reason)
        return []

    def _tick(self) -> None:
        """Periodic reconcile (catches what watchers missed) and the optional sync interval."""
        last_reconcile = time.monotonic()
        last_interval = time.monotonic()
        last_check = last_trim = time.monotonic()
        while not self._stop.wait(1.0):
            now = time.monotonic()
            if now - last_trim >= HEAP_TRIM_SECONDS and self._idle():
                last_trim = now
                heap.give_back()
            if self.hub is not None and now - last_check >= WATCH_CHECK_SECONDS:
                last_check = now
                try:
                    self.hub.check()
                except Exception:  # a watcher problem must never stop the reconcile loop
                    log.exception("watcher check failed")
            cfg = self.config
            due = cfg.reconcile_seconds > 0 and now - last_reconcile >= cfg.reconcile_seconds
            due = due or (cfg.sync_interval_seconds > 0 and now - last_interval >= cfg.sync_interval_seconds)
            self._trim_idle_models(cfg.model_idle_minutes * 60)
            if due:
                last_reconcile = last_interval = now
                with self._lock:
                    for runtime in self.runtimes.values():
                        runtime.request_sync()

    def _idle(self) -> bool:
        return not any(r.busy for r in list(self.runtimes.values()))

    def _trim_idle_models(self, unload_after_seconds: float) -> None:
        """Close model contexts, drop the language identifier and hand back SQLite's page caches after a minute
        unused and, when configured, unload models idle for longer (with the warm vector matrix: a search after that
        long can wait for both)."""
        if release_language_model(CONTEXT_IDLE_SECONDS):
            gc.collect()
            heap.give_back()
        for runtime in list(self.runtimes.values()):
            embedder = runtime.memory.embedder
            if embedder is not None:
                embedder.release_idle_contexts(CONTEXT_IDLE_SECONDS)
            if not runtime.busy and runtime.memory.release_idle_caches(CONTEXT_IDLE_SECONDS):
                # once per idle spell: what a burst of searches left in reference cycles, then the heap behind it
                gc.collect()
                heap.give_back()
            if unload_after_seconds > 0 and embedder is not None and embedder.unload_if_idle(unload_after_seconds):
                runtime.memory.vectors.release()  # loaded again with the model, at the next search
                runtime.memory.store.release_memory()
                heap.give_back()
                log.info("local model unloaded after idle time", agent=runtime.agent.id, idle_s=unload_after_seconds)

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
            "reload_error": self.reload_error,
            "rss_mb": round(rss, 1) if (rss := heap.rss_mb()) is not None else None,
            "index_nice": self.config.index_nice,
            "sqlite_memory_limit_mb": round(process_memory_limit() / 2**20, 1),
            "integrations": {name: dict(seen) for name, seen in list(self.integrations.items())},
            "ui": self.ui,
            "metrics": self.metrics,
        }

    def heard_from(self, client: str | None) -> None:
        """An integration's hook reached the daemon (status and `memoryd doctor` say when each last did)."""
        if client:
            seen = self.integrations.setdefault(client, {"calls": 0})  # one of a few names (Param.known)
            seen["calls"] += 1
            seen["last_seen"] = round(time.time(), 3)
