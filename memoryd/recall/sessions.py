"""What each agent session was already shown, so a memory is put before it once."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

MAX_SESSIONS = 2048
MAX_PER_SESSION = 4096
MAX_BYTES = 16 * 2**20  # all sessions' ids and keys together, as `size` counts them
MAX_SESSION_BYTES = 2**20  # one session's
IDLE_SECONDS = 7 * 86400.0
ENTRY_BYTES = 64  # what Python spends on a string, a set slot or a map entry beyond its characters


def size(text: str) -> int:
    """A string's share of the table: its characters (up to four bytes each) and its overhead."""
    return ENTRY_BYTES + (len(text) if text.isascii() else 4 * len(text))


@dataclass
class _Session:
    used: float
    keys: set[str] = field(default_factory=set)
    bytes: int = 0


class ShownMemories:
    """Per (agent, session): the keys of memories already injected. Bounded in sessions, keys per session and
    bytes in all: the least recently used sessions, and those idle for a week, are forgotten first. Held by the
    daemon only; it starts empty."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, max_bytes: int = MAX_BYTES) -> None:
        self._sessions: OrderedDict[tuple[str, str], _Session] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_sessions
        self._max_bytes = max_bytes
        self._bytes = 0

    def shown(self, agent: str, session: str) -> frozenset[str]:
        with self._lock:
            entry = self._sessions.get((agent, session))
            return frozenset(entry.keys) if entry else frozenset()

    def add(self, agent: str, session: str, keys: list[str]) -> None:
        now = time.monotonic()
        with self._lock:
            entry = self._sessions.pop((agent, session), None)
            if entry is None:
                entry = _Session(now, bytes=size(agent) + size(session))
                self._bytes += entry.bytes
            entry.used = now
            new = [k for k in dict.fromkeys(keys) if k not in entry.keys]
            added = sum(map(size, new))
            if len(entry.keys) + len(new) <= MAX_PER_SESSION and entry.bytes + added <= MAX_SESSION_BYTES:
                entry.keys.update(new)
                entry.bytes += added
                self._bytes += added
            self._sessions[(agent, session)] = entry
            while len(self._sessions) > 1 and (
                len(self._sessions) > self._max
                or self._bytes > self._max_bytes
                or now - next(iter(self._sessions.values())).used > IDLE_SECONDS
            ):
                self._drop_oldest()

    def _drop_oldest(self) -> None:
        _, entry = self._sessions.popitem(last=False)
        self._bytes -= entry.bytes

    def forget(self, agent: str, session: str) -> None:
        with self._lock:
            entry = self._sessions.pop((agent, session), None)
            if entry is not None:
                self._bytes -= entry.bytes

    @property
    def bytes(self) -> int:
        """What the sessions take, as `size` counts it: at most the cap, or one session's ids alone when larger."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._sessions)
