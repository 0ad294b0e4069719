"""Who may hold a connection to the socket: the peer's pid and uid, how fast one process may open connections, and a
warning about refusals that is said at most once in a while."""

from __future__ import annotations

import contextlib
import socket
import struct
import sys
import time
from typing import Any

import structlog

log = structlog.get_logger("memoryd.rpc")

NEW_PER_PROCESS_BURST = 512  # new connections one process may open at once...
NEW_PER_PROCESS_RATE = 1000.0  # ...and per second after that; past it, one is told why and closed on the spot


def peer_credentials(sock: socket.socket) -> tuple[int | None, int | None]:
    """The pid and uid of the process at the other end of a Unix socket, where the OS tells them. A pid of 0 is a
    process in another PID namespace (a daemon in a container): unknown, not one process that all of them share."""
    if hasattr(socket, "SO_PEERCRED"):
        pid, uid, _gid = struct.unpack(
            "3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        )
        return pid or None, uid
    if sys.platform == "darwin":  # getpeereid() through LOCAL_PEERCRED (struct xucred), and LOCAL_PEERPID
        local_peercred, local_peerpid = 0x001, 0x002
        uid = struct.unpack("2i16i", sock.getsockopt(0, local_peercred, struct.calcsize("2i16i")))[1]
        with contextlib.suppress(OSError):
            return struct.unpack("i", sock.getsockopt(0, local_peerpid, struct.calcsize("i")))[0] or None, uid
        return None, uid
    return None, None


class ConnectRate:
    """New connections per client process, as token buckets: one process that connects in a loop is refused at the
    cost of an accept and a close, before it costs the event loop a transport and a task."""

    def __init__(self, burst: float = NEW_PER_PROCESS_BURST, rate: float = NEW_PER_PROCESS_RATE) -> None:
        self.burst, self.rate = burst, rate
        self._buckets: dict[int, tuple[float, float]] = {}

    def admit(self, pid: int, now: float) -> bool:
        tokens, then = self._buckets.get(pid, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        if len(self._buckets) > 4096:  # processes that stopped connecting long ago: full again, forget them
            self._buckets = {p: b for p, b in self._buckets.items() if b[0] + (now - b[1]) * self.rate < self.burst}
        if tokens < 1:
            self._buckets[pid] = (tokens, now)
            return False
        self._buckets[pid] = (tokens - 1, now)
        return True


class Throttled:
    """A warning logged at most once per `seconds` for each event, with how many were left out since: a client
    that connects and is refused thousands of times a second must not fill the log."""

    def __init__(self, seconds: float = 10.0) -> None:
        self.seconds = seconds
        self._last: dict[str, float] = {}
        self._skipped: dict[str, int] = {}

    def warning(self, event: str, **fields: Any) -> None:
        now = time.monotonic()
        if now - self._last.get(event, -self.seconds) < self.seconds:
            self._skipped[event] = self._skipped.get(event, 0) + 1
            return
        self._last[event] = now
        skipped = self._skipped.pop(event, 0)
        log.warning(event, **fields, **({"alike_since_last": skipped} if skipped else {}))
