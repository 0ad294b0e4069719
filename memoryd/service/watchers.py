"""File watchers: one watchdog observer for every agent, subscribed only to events that can change memory."""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from pathlib import Path

import structlog
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from memoryd.config import AgentConfig
from memoryd.sources.discovery import IGNORED_DIRS, ROOT_FILES, is_markdown, is_transcript

log = structlog.get_logger("memoryd.watchers")

# No opened / closed-without-write events: on big trees they flood the inotify queue for nothing.
EVENTS = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
WATCH_LIMIT_ERRNOS = {errno.ENOSPC, errno.EMFILE, errno.ENFILE}


def watch_roots(agent: AgentConfig) -> list[tuple[Path, bool]]:
    """(folder, recursive) pairs covering the agent's sources; the workspace itself only shallowly."""
    roots: list[tuple[Path, bool]] = []
    if "memory" in agent.sources:
        roots.append((agent.workspace, False))
        roots.append((agent.workspace / "memory", True))
        for extra in agent.extra_paths:
            roots.append((extra, True) if extra.is_dir() else (extra.parent, False))
    for sessions in agent.sessions_dirs:
        roots.append((sessions, True))
    seen: set[tuple[Path, bool]] = set()
    unique = []
    for root in roots:
        if root not in seen:
            seen.add(root)
            unique.append(root)
    return unique


class _Handler(FileSystemEventHandler):
    def __init__(self, agent: AgentConfig, notify: Callable[[str], None], on_new_dir: Callable[[Path], None]) -> None:
        self.agent = agent
        self.notify = notify
        self.on_new_dir = on_new_dir

    def _relevant(self, path: str, is_directory: bool) -> bool:
        p = Path(path)
        roots = [self.agent.workspace, *self.agent.extra_paths, *self.agent.sessions_dirs]
        inside = [p.relative_to(root).parts for root in roots if p.is_relative_to(root)]
        if any(part in IGNORED_DIRS for parts in inside for part in parts):
            return False  # only folders below a watched root count: the workspace itself may live in ~/.cache
        if is_directory:
            return True
        if p.parent == self.agent.workspace and p.name not in ROOT_FILES and p.name != "memory":
            return False
        return is_markdown(p) or is_transcript(p)

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        relevant = [str(p) for p in paths if p and self._relevant(str(p), event.is_directory)]
        if not relevant:
            return
        if isinstance(event, DirCreatedEvent | DirMovedEvent):
            target = Path(str(getattr(event, "dest_path", "") or event.src_path))
            if target == self.agent.workspace / "memory":
                self.on_new_dir(target)
        for path in relevant:
            self.notify(path)


class WatchHub:
    """Owns the observer; falls back to polling when the OS runs out of watches, and says so."""

    def __init__(self, polling_interval: float = 2.0) -> None:
        self._observer: BaseObserver = Observer()
        self._polling: BaseObserver | None = None
        self._polling_interval = polling_interval
        self._lock = threading.Lock()
        self._watches: dict[str, list[object]] = {}
        self._states: dict[str, str] = {}
        self._observer.start()

    def state(self, agent_id: str) -> str:
        return self._states.get(agent_id, "not watched")

    def add(self, agent: AgentConfig, notify: Callable[[str], None]) -> str:
        """Watch an agent's sources; returns the watcher state for status."""
        with self._lock:
            self._watches[agent.id] = []
            self._states[agent.id] = "watching"
        handler = _Handler(agent, notify, lambda path: self._schedule(agent, handler, path, True))
        for root, recursive in watch_roots(agent):
            if root.is_dir() and not root.is_symlink():
                self._schedule(agent, handler, root, recursive)
        return self.state(agent.id)

    def _schedule(self, agent: AgentConfig, handler: _Handler, root: Path, recursive: bool) -> None:
        with self._lock:
            try:
                watch = self._observer.schedule(handler, str(root), recursive=recursive, event_filter=EVENTS)
            except OSError as exc:
                if exc.errno not in WATCH_LIMIT_ERRNOS:
                    log.warning("cannot watch", path=str(root), error=str(exc))
                    self._states[agent.id] = f"degraded: cannot watch {root}: {exc.strerror or exc}"
                    return
                if self._polling is None:
                    self._polling = PollingObserver(timeout=self._polling_interval)
                    self._polling.start()
                watch = self._polling.schedule(handler, str(root), recursive=recursive, event_filter=EVENTS)
                self._states[agent.id] = f"polling ({exc.strerror or 'OS watch limit reached'})"
                log.warning("OS watch limit reached, polling instead", path=str(root))
            self._watches.setdefault(agent.id, []).append(watch)

    def remove(self, agent_id: str) -> None:
        with self._lock:
            for watch in self._watches.pop(agent_id, []):
                for observer in (self._observer, self._polling):
                    if observer is None:
                        continue
                    try:
                        observer.unschedule(watch)  # type: ignore[arg-type]
                    except (KeyError, ValueError):
                        continue
            self._states.pop(agent_id, None)

    def close(self) -> None:
        for observer in (self._observer, self._polling):
            if observer is not None:
                observer.stop()
                observer.join(timeout=5)
