"""File watchers: one watchdog observer for every agent, subscribed only to events that can change memory."""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
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
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

from memoryd.config import AgentConfig
from memoryd.ingest.feed import Kind
from memoryd.sources.discovery import IGNORED_DIRS, ROOT_FILES, is_markdown, is_transcript

Notify = Callable[[str, Kind], None]

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
    """The one relevance filter: an event reaches the agent only for a note, a transcript or a folder of its
    sources (not under an ignored folder), with its kind."""

    def __init__(self, agent: AgentConfig, notify: Notify, on_new_dir: Callable[[Path], None]) -> None:
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
            kind: Kind = "folder" if event.is_directory else "transcript" if is_transcript(Path(path)) else "note"
            self.notify(path, kind)


@dataclass
class _Watch:
    root: Path
    recursive: bool
    handle: ObservedWatch | None  # None while the root is missing
    inode: int | None
    failed: bool = False  # could not be watched; tried again only when the folder is replaced


@dataclass
class _AgentWatches:
    agent: AgentConfig
    handler: _Handler
    notify: Notify
    watches: list[_Watch] = field(default_factory=list)


def _schedule(observer: BaseObserver, entry: _AgentWatches, root: Path, recursive: bool) -> ObservedWatch:
    return observer.schedule(entry.handler, str(root), recursive=recursive, event_filter=EVENTS)


def _inode(path: Path) -> int | None:
    try:
        return None if path.is_symlink() else path.stat().st_ino
    except OSError:
        return None


class WatchHub:
    """Owns the observer; falls back to polling when the OS runs out of watches, and says so. `check()` (called
    every few seconds) re-arms a dead observer and roots that were deleted or replaced, and `state()` tells
    the truth about each agent at the moment it is asked."""

    def __init__(self, polling_interval: float = 2.0) -> None:
        self._observer: BaseObserver = Observer()
        self._polling: BaseObserver | None = None
        self._polling_interval = polling_interval
        self._lock = threading.RLock()
        self._agents: dict[str, _AgentWatches] = {}
        self._states: dict[str, str] = {}
        self._observer.start()

    def state(self, agent_id: str) -> str:
        with self._lock:
            return self._states.get(agent_id, "not watched")

    def add(self, agent: AgentConfig, notify: Notify) -> str:
        """Watch an agent's sources; returns the watcher state for status."""
        handler = _Handler(agent, notify, lambda path: self._new_memory_dir(agent.id, path))
        entry = _AgentWatches(agent, handler, notify)
        with self._lock:
            self._agents[agent.id] = entry
            self._states[agent.id] = "watching"
            for root, recursive in watch_roots(agent):
                watch = _Watch(root, recursive, None, None)
                entry.watches.append(watch)
                self._arm(entry, watch)
        return self.state(agent.id)

    def _new_memory_dir(self, agent_id: str, path: Path) -> None:
        with self._lock:
            entry = self._agents.get(agent_id)
            if entry is None:
                return
            for watch in entry.watches:
                if watch.root == path and watch.handle is None:
                    self._arm(entry, watch)
                    return
            watch = _Watch(path, True, None, None)
            entry.watches.append(watch)
            self._arm(entry, watch)

    def _arm(self, entry: _AgentWatches, watch: _Watch) -> None:
        """Schedule one root (when it exists), on inotify or, past the OS limit, on the polling observer."""
        agent_id = entry.agent.id
        watch.inode = _inode(watch.root)
        if watch.inode is None or not watch.root.is_dir():
            watch.handle = None
            return
        watch.failed = False
        try:
            watch.handle = _schedule(self._observer, entry, watch.root, watch.recursive)
        except RecursionError:  # watchdog walks the tree recursively: thousands of folders deep is too deep
            try:
                watch.handle = _schedule(self._observer, entry, watch.root, False)
            except (OSError, RecursionError):
                self._give_up(entry, watch, "its folder tree is too deep to watch")
                return
            reason = "its folder tree is too deep: only its top level is watched"
            log.warning("watching partly; deeper changes wait for the periodic reconcile", path=str(watch.root))
            self._states[agent_id] = f"degraded: {watch.root}: {reason}"
            watch.failed = True
            return
        except OSError as exc:
            if exc.errno not in WATCH_LIMIT_ERRNOS:
                self._give_up(entry, watch, exc.strerror or str(exc))
                return
            if self._polling is None:
                self._polling = PollingObserver(timeout=self._polling_interval)
                self._polling.start()
            watch.handle = _schedule(self._polling, entry, watch.root, watch.recursive)
            self._states[agent_id] = f"polling ({exc.strerror or 'OS watch limit reached'})"
            log.warning("OS watch limit reached, polling instead", path=str(watch.root))

    def _give_up(self, entry: _AgentWatches, watch: _Watch, reason: str) -> None:
        log.warning("cannot watch; changes there wait for the periodic reconcile", path=str(watch.root), reason=reason)
        self._states[entry.agent.id] = f"degraded: cannot watch {watch.root}: {reason}"
        watch.handle = None
        watch.failed = True

    def _alive(self, watch: _Watch) -> bool:
        """Is a thread still reading events for this watch? (watchdog ends it when the folder is deleted, and
        the folder's inode may be reused by the one made in its place.)"""
        if watch.handle is None:
            return False
        for observer in (self._observer, self._polling):
            for emitter in observer.emitters if observer is not None else ():
                if emitter.watch == watch.handle:
                    return emitter.is_alive()
        return False

    def _disarm(self, watch: _Watch) -> None:
        if watch.handle is None:
            return
        for observer in (self._observer, self._polling):
            if observer is None:
                continue
            try:
                observer.unschedule(watch.handle)
            except (KeyError, ValueError, OSError):
                continue
        watch.handle = None

    def check(self) -> None:
        """Re-arm what stopped working: a dead observer thread, and roots deleted, recreated or replaced."""
        with self._lock:
            if not self._observer.is_alive():
                log.error("file observer died; starting a new one")
                self._observer = Observer()
                self._observer.start()
                for entry in self._agents.values():
                    for watch in entry.watches:
                        watch.handle = None
                        self._arm(entry, watch)
                        entry.notify(str(watch.root), "folder")  # what changed while nobody watched
            for agent_id, entry in self._agents.items():
                workspace_gone = False
                for watch in entry.watches:
                    current = _inode(watch.root)
                    replaced = current != watch.inode
                    if replaced or (current is not None and not watch.failed and not self._alive(watch)):
                        self._disarm(watch)
                        self._arm(entry, watch)
                        if watch.handle is not None:
                            log.info("watch re-armed", agent=agent_id, path=str(watch.root))
                            entry.notify(str(watch.root), "folder")
                    workspace_gone = workspace_gone or (watch.handle is None and watch.root == entry.agent.workspace)
                state = self._states.get(agent_id, "")
                if workspace_gone:
                    self._states[agent_id] = f"degraded: {entry.agent.workspace} is missing; waiting for it"
                elif state.startswith("degraded:") and "is missing" in state:
                    self._states[agent_id] = "watching"

    def remove(self, agent_id: str) -> None:
        with self._lock:
            entry = self._agents.pop(agent_id, None)
            for watch in entry.watches if entry else []:
                self._disarm(watch)
            self._states.pop(agent_id, None)

    def close(self) -> None:
        for observer in (self._observer, self._polling):
            if observer is not None:
                observer.stop()
                observer.join(timeout=5)
