"""An HTTP server on loopback for the daemon's own user: the web page's and the metrics endpoint's. Where the OS
tells who owns the other end of a loopback connection (Linux, /proc/net/tcp and tcp6), another user's is closed as
it is accepted, before it holds a thread; at most `max_connections` are open at once; a request must arrive whole
within the handler's `timeout` (a byte every few seconds would otherwise hold a thread for ever); a client that
leaves early is no error."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Collection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog

from memoryd_client.http_gate import other_user

log = structlog.get_logger("memoryd.web")


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64  # socketserver's 5 let a flood of connects lock the owner out
    port = 0

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        max_connections: int | None = None,
        uids: Collection[int] = (),
    ) -> None:
        self.uids = frozenset(uids)  # other users whose processes are let in
        self.open_connections = threading.BoundedSemaphore(max_connections) if max_connections else None
        self._held: set[Any] = set()
        self._held_lock = threading.Lock()
        super().__init__(address, handler)
        self.port = int(self.server_address[1])

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Another user's connection, or one past max_connections, is closed as it is accepted, before it holds a
        thread."""
        if other_user((str(client_address[0]), int(client_address[1])), self.port, self.uids):
            return False
        if self.open_connections is None:
            return True
        if not self.open_connections.acquire(blocking=False):
            return False
        with self._held_lock:
            self._held.add(request)
        return True

    def shutdown_request(self, request: Any) -> None:
        try:
            super().shutdown_request(request)
        finally:
            with self._held_lock:
                held = request in self._held
                self._held.discard(request)
            if held and self.open_connections is not None:
                self.open_connections.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away is no error; anything else is logged once, without the request."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError, socket.timeout)):
            return
        log.warning("loopback request failed", server=type(self).__name__, error=f"{type(error).__name__}: {error}")

    def server_bind(self) -> None:
        with contextlib.suppress(OSError):
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        super().server_bind()


class DeadlineHandler(BaseHTTPRequestHandler):
    """Each request must arrive whole within `timeout` seconds, whatever the timeout of each read; nothing of a
    request goes to the log (its line may hold what the user typed)."""

    server_version = "memoryd"
    sys_version = ""
    timeout = 15.0
    _deadline: threading.Timer | None = None

    def handle_one_request(self) -> None:
        self._deadline = threading.Timer(self.timeout, self._too_slow)
        self._deadline.daemon = True
        self._deadline.start()
        try:
            super().handle_one_request()
        finally:
            self._arrived()

    def _arrived(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def log_message(self, format: str, *args: Any) -> None:
        pass
