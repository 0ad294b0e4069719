"""What each agent session was already shown, so a memory is put before it once."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

MAX_SESSIONS = 2048
MAX_PER_SESSION = 4096
IDLE_SECONDS = 7 * 86400.0


class ShownMemories:
    """Per (agent, session): the keys of memories already injected. Bounded: the least recently used sessions,
    and those idle for a week, are forgotten first. Held by the daemon only; it starts empty."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: OrderedDict[tuple[str, str], tuple[float, set[str]]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_sessions

    def shown(self, agent: str, session: str) -> frozenset[str]:
        with self._lock:
            entry = self._sessions.get((agent, session))
            return frozenset(entry[1]) if entry else frozenset()

    def add(self, agent: str, session: str, keys: list[str]) -> None:
        now = time.monotonic()
        with self._lock:
            _, seen = self._sessions.pop((agent, session), (now, set()))
            if len(seen) + len(keys) <= MAX_PER_SESSION:
                seen.update(keys)
            self._sessions[(agent, session)] = (now, seen)
            while self._sessions and (
                len(self._sessions) > self._max or now - next(iter(self._sessions.values()))[0] > IDLE_SECONDS
            ):
                self._sessions.popitem(last=False)

    def forget(self, agent: str, session: str) -> None:
        with self._lock:
            self._sessions.pop((agent, session), None)

    def __len__(self) -> int:
        return len(self._sessions)
