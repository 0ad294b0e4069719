"""A small, dependency-light MessagePack-RPC client for the memoryd daemon.

It imports neither typing nor pathlib nor dataclasses at run time: on a slow machine they were a third of a
`memctl search` (python -X importtime)."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import socket
import threading
import time

import msgpack

from memoryd.protocol.paths import default_socket_path
from memoryd.protocol.results import GetResult, SearchResults, WriteResult, search_results
from memoryd.protocol.wire import ERROR_NOTIFICATION, IDEMPOTENT, MAX_MESSAGE_BYTES, NOTIFICATION, REQUEST, RESPONSE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ClientError(Exception):
    """Base class of client errors."""


class DaemonNotRunning(ClientError):
    """Nothing answers on the socket."""

    def __init__(self, path: str, reason: str) -> None:
        from memoryd.protocol.paths import running_daemon

        elsewhere = running_daemon()
        if elsewhere and os.path.abspath(str(elsewhere["socket"])) != os.path.abspath(path):
            hint = f"memoryd (pid {elsewhere['pid']}) runs on {elsewhere['socket']}: use --socket or MEMORYD_SOCKET"
            super().__init__(f"no daemon answers at {path} ({reason}); {hint}")
        else:
            super().__init__(f"memoryd is not running (no daemon at {path}: {reason}). Start it with: memoryd run")
        self.path = path
        self.elsewhere = elsewhere


class RemoteError(ClientError):
    """The daemon answered with an error."""

    def __init__(self, code: str, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class RPCTimeout(ClientError):
    """No answer within the timeout."""


class ConnectionLost(ClientError):
    """The daemon closed the connection after the request was sent, before it answered."""


class RequestTooLarge(ClientError):
    """The request is larger than the daemon accepts; it was not sent."""


class UnencodableRequest(ClientError):
    """The request holds something MessagePack cannot carry (text that is not valid UTF-8, such as a command-line
    argument in another encoding, or an object of no MessagePack type); it was not sent."""


class ConnectError(ClientError):
    """The socket exists but cannot be connected to (permissions, not a socket, ...)."""


MAX_REQUEST_BYTES = MAX_MESSAGE_BYTES
CONNECT_BUSY_SECONDS = 3.0  # how long a full listen queue (EAGAIN) is retried before giving up


def _remote_error(error: Any) -> RemoteError:
    """An error as the daemon sends it ({code, message}), or as other msgpack-rpc servers do ([code, message])."""
    if isinstance(error, dict):
        return RemoteError(str(error.get("code", "error")), str(error.get("message", error)), error.get("data"))
    if isinstance(error, (list, tuple)) and len(error) >= 2:
        return RemoteError(str(error[0]), str(error[1]))
    return RemoteError("error", str(error))


def _is_error_notification(message: Any) -> bool:
    return isinstance(message, list) and len(message) == 3 and message[:2] == [NOTIFICATION, ERROR_NOTIFICATION]


class MemoryClient:
    """One connection to the daemon; thread-safe (one request at a time); reconnects once if the daemon restarted."""

    def __init__(self, socket_path: str | os.PathLike[str] | None = None, timeout: float = 30.0) -> None:
        self.socket_path = os.fspath(socket_path) if socket_path else default_socket_path()
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._unpacker: msgpack.Unpacker | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._fresh = False  # connected and nothing sent yet: a failure cannot mean a restarted daemon

    # -- connection ----------------------------------------------------------------------------------

    def connect(self) -> MemoryClient:
        if self._sock is None:
            self._sock = self._open_socket()
            self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
            self._fresh = True
        return self

    def _open_socket(self) -> socket.socket:
        """Connect, retrying briefly while the daemon's listen queue is full (EAGAIN is busy, not absent)."""
        deadline = time.monotonic() + CONNECT_BUSY_SECONDS
        delay = 0.01
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self.socket_path)
                return sock
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                sock.close()
                raise DaemonNotRunning(self.socket_path, exc.strerror or str(exc)) from None
            except OSError as exc:
                sock.close()
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK) and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.2)
                    continue
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    raise ConnectError(f"memoryd at {self.socket_path} is too busy to accept a connection") from None
                raise ConnectError(f"cannot connect to {self.socket_path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._unpacker = None

    def __enter__(self) -> MemoryClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- protocol ------------------------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | list[Any] | None = None, timeout: float | None = None) -> Any:
        """Send one request and wait for its response; named params go as a single map.

        A request is sent again only when it surely never reached the daemon (a connection left from before a
        daemon restart fails on send), or when the method only reads. A `write` is never sent twice."""
        args = [params] if isinstance(params, dict) else list(params or [])
        with self._lock:
            msgid = next(self._ids) & 0xFFFFFFFF
            try:
                payload = msgpack.packb([REQUEST, msgid, method, args], use_bin_type=True)
            except UnicodeEncodeError as exc:
                raise UnencodableRequest(
                    f"the {method} request holds text that is not valid UTF-8 ({exc.reason})"
                ) from None
            except (TypeError, ValueError, OverflowError) as exc:
                raise UnencodableRequest(f"the {method} request cannot be sent: {exc}") from None
            if len(payload) > MAX_REQUEST_BYTES:
                raise RequestTooLarge(f"the request is {len(payload)} bytes; memoryd accepts {MAX_REQUEST_BYTES}")
            for attempt in (1, 2):
                sent = False
                try:
                    self.connect()
                    fresh = self._fresh
                    self._send(payload)
                    sent = True
                    return self._receive(method, msgid, timeout)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, EOFError):
                    notice = self._waiting_notice()
                    self.close()
                    if notice is not None:  # the daemon said why it closed (too many connections, ...)
                        raise notice from None
                    retry = (not sent and not fresh) or method in IDEMPOTENT
                    if attempt == 1 and retry:
                        continue
                    if not sent:
                        raise DaemonNotRunning(self.socket_path, "the connection was closed") from None
                    raise ConnectionLost(
                        f"memoryd closed the connection before answering {method!r}"
                        + ("" if method in IDEMPOTENT else "; it may or may not have been applied")
                    ) from None
        raise AssertionError("unreachable")

    def _waiting_notice(self) -> RemoteError | None:
        """An error notice the daemon sent before it closed, read from what already arrived."""
        if self._sock is None or self._unpacker is None:
            return None
        with contextlib.suppress(OSError):
            while data := self._sock.recv(1 << 16, socket.MSG_DONTWAIT):
                self._unpacker.feed(data)
        with contextlib.suppress(ValueError, msgpack.UnpackException):
            for message in self._unpacker:
                if _is_error_notification(message):
                    return _remote_error(message[2][0] if isinstance(message[2], list) and message[2] else None)
        return None

    def _send(self, payload: bytes) -> None:
        assert self._sock is not None
        self._fresh = False
        self._sock.settimeout(self.timeout)
        self._sock.sendall(payload)

    def _receive(self, method: str, msgid: int, timeout: float | None) -> Any:
        assert self._sock is not None and self._unpacker is not None
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for message in self._unpacker:
                if isinstance(message, list) and len(message) == 4 and message[0] == RESPONSE and message[1] == msgid:
                    if message[2] is not None:
                        raise _remote_error(message[2])
                    return message[3]
                if _is_error_notification(message):  # the daemon gave up on this connection and says why
                    self.close()
                    raise _remote_error(message[2][0] if isinstance(message[2], list) and message[2] else None)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise RPCTimeout(f"no answer to {method!r} within {timeout or self.timeout:.0f}s")
            self._sock.settimeout(remaining)
            try:
                data = self._sock.recv(1 << 16)
            except TimeoutError:
                self.close()
                raise RPCTimeout(f"no answer to {method!r} within {timeout or self.timeout:.0f}s") from None
            if not data:
                raise EOFError
            self._unpacker.feed(data)

    # -- methods -------------------------------------------------------------------------------------

    @staticmethod
    def _named(**kwargs: Any) -> dict[str, Any]:
        return {k: v for k, v in kwargs.items() if v is not None}

    def ping(self) -> dict[str, Any]:
        return self.call("ping")

    def search(
        self,
        query: str,
        *,
        agent: str | None = None,
        max_results: int | None = None,
        min_score: float | None = None,
        mode: str | None = None,
        sources: list[str] | None = None,
        **filters: Any,
    ) -> SearchResults:
        raw = self.call(
            "search",
            self._named(
                query=query,
                agent=agent,
                max_results=max_results,
                min_score=min_score,
                mode=mode,
                sources=sources,
                **filters,
            ),
        )
        return search_results(raw)

    def get(
        self, path: str, from_line: int | None = None, lines: int | None = None, *, agent: str | None = None
    ) -> GetResult:
        return self.call("get", self._named(path=path, agent=agent, lines=lines, **{"from": from_line}))

    def write(self, text: str, path: str | None = None, *, agent: str | None = None, **extra: Any) -> WriteResult:
        return self.call("write", self._named(text=text, path=path, agent=agent, **extra))

    def status(self, agent: str | None = None) -> dict[str, Any]:
        return self.call("status", self._named(agent=agent))

    def sync(self, agent: str | None = None, force: bool = False, timeout: float = 600) -> dict[str, Any]:
        """Sync and wait at most `timeout` seconds; the answer's `done` says whether it finished."""
        named = self._named(agent=agent, force=force or None, timeout=timeout)
        return self.call("sync", named, timeout=max(self.timeout, timeout + 5))

    def reindex(self, agent: str | None = None, wait: bool = False, timeout: float = 3600) -> dict[str, Any]:
        named = self._named(agent=agent, wait=wait or None, timeout=timeout if wait else None)
        return self.call("reindex", named, timeout=max(self.timeout, timeout + 5) if wait else None)

    def agents(self) -> list[dict[str, Any]]:
        return self.call("agents")
