"""The MessagePack-RPC client of the memoryd daemon: every Python client calls through it (memctl's commands,
`memctl recall`, the agent hooks, the MCP bridge, programs), on the session protocol.session defines.

memctl and the hooks start a process for one call, so this module stays light: the C socket module (`_socket`, not
`socket`, which brings enum and selectors), `_thread`'s lock, and no typing at run time."""

from __future__ import annotations

import _socket
import _thread
import errno
import itertools
import os
import time

from memoryd_client.protocol import session
from memoryd_client.protocol.connect import queue_connect
from memoryd_client.protocol.paths import default_socket_path
from memoryd_client.protocol.schema import IDEMPOTENT, METHODS
from memoryd_client.protocol.wire import MAX_MSGID

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a fifth of a hook's start-up
    from collections.abc import Iterator
    from typing import Any

    from memoryd_client.protocol.results import GetResult, SearchResults, WriteResult


class ClientError(Exception):
    """Base class of client errors."""


class DaemonNotRunning(ClientError):
    """Nothing answers on the socket."""

    def __init__(self, path: str, reason: str) -> None:
        from memoryd_client.protocol.paths import running_daemon

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


CONNECT_BUSY_SECONDS = 3.0  # how long a full listen queue (EAGAIN) is retried before giving up


class Connection:
    """The transport: one Unix socket to the daemon, bytes out, whole messages in (session.Framer)."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.sock = self._connect(timeout)
        self.framer = session.Framer()
        self.used = False  # whether a request went out on it: a failure then may mean a restarted daemon

    def _connect(self, timeout: float) -> _socket.socket:
        """Connect, retrying briefly (never past `timeout`) while the daemon's listen queue is full (EAGAIN is busy,
        not absent)."""
        deadline = time.monotonic() + min(CONNECT_BUSY_SECONDS, timeout)
        delay = 0.01
        while True:
            sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                queue_connect(sock, self.path, max(0.0, deadline - time.monotonic()))
                return sock
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                sock.close()
                raise DaemonNotRunning(self.path, exc.strerror or str(exc)) from None
            except OSError as exc:
                sock.close()
                busy = exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK)
                if busy and time.monotonic() < deadline:
                    time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
                    delay = min(delay * 2, 0.2)
                    continue
                if busy:
                    raise ConnectError(f"memoryd at {self.path} is too busy to accept a connection") from None
                raise ConnectError(f"cannot connect to {self.path}: {exc.strerror or exc}") from None

    def send(self, payload: bytes, timeout: float) -> None:
        self.used = True
        self.sock.settimeout(timeout)
        self.sock.sendall(payload)

    def messages(self, deadline: float) -> Iterator[session.Message]:
        """Messages as they arrive, until the deadline (TimeoutError) or the daemon closes (EOFError)."""
        while True:
            yield from self.framer
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self.sock.settimeout(remaining)
            data = self.sock.recv(1 << 16)
            if not data:
                raise EOFError
            self.framer.feed(data)

    def waiting_notice(self) -> RemoteError | None:
        """An error notice the daemon sent before it closed, read from what already arrived."""
        try:
            while data := self.sock.recv(1 << 16, _socket.MSG_DONTWAIT):
                self.framer.feed(data)
        except (OSError, session.FrameError):
            pass
        try:
            for message in self.framer:
                fatal = session.fatal_error(message) if isinstance(message, session.Notice) else None
                if fatal is not None:
                    return RemoteError(*fatal)
        except session.FrameError:
            pass
        return None

    def close(self) -> None:
        self.sock.close()


class MemoryClient:
    """The daemon's methods as Python calls, on one connection (thread-safe: one request at a time). A
    connection lost is made again once, and the request resent when the session's rule allows it.

    `timeout` bounds each step (connecting, sending, waiting for one answer); `deadline` (time.monotonic()), when
    given, bounds them all together: past it every call raises RPCTimeout, whatever is left of its timeout."""

    def __init__(
        self, socket_path: str | os.PathLike[str] | None = None, timeout: float = 30.0, deadline: float | None = None
    ) -> None:
        self.socket_path = os.fspath(socket_path) if socket_path else default_socket_path()
        self.timeout = timeout
        self.deadline = deadline
        self._conn: Connection | None = None
        self._ids = itertools.count(1)
        self._lock = _thread.allocate_lock()

    def connect(self) -> MemoryClient:
        if self._conn is None:
            self._conn = Connection(self.socket_path, self._seconds(self.timeout))
        return self

    def _seconds(self, seconds: float, method: str | None = None) -> float:
        """`seconds`, or what is left before the deadline when that is less; RPCTimeout when nothing is left (to
        connect, or to ask `method`)."""
        if self.deadline is None:
            return seconds
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.close()
            raise RPCTimeout(f"memoryd did not answer {method} in time" if method else "no time was left to connect")
        return min(seconds, left)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def __enter__(self) -> MemoryClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, params: dict[str, Any] | list[Any] | None = None, timeout: float | None = None) -> Any:
        """Send one request and wait for its response; named params go as a single map. A `write` is never sent
        twice (session.may_resend). A connection the daemon refused as one too many (it read nothing on it) is
        tried again for a few seconds, as a full listen queue is: a client that opens connections quickly is
        slowed down, not failed."""
        args = [params] if isinstance(params, dict) else list(params or [])
        busy_until = time.monotonic() + min(CONNECT_BUSY_SECONDS, self.timeout)
        delay = 0.005
        while True:
            try:
                return self._call_once(method, args, timeout)
            except RemoteError as exc:
                if exc.code != "too_many_connections" or time.monotonic() + delay >= busy_until:
                    raise
            if self.deadline is not None and time.monotonic() + delay >= self.deadline:
                raise RPCTimeout(f"memoryd was too busy to take {method} in time")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _call_once(self, method: str, args: list[Any], timeout: float | None) -> Any:
        with self._lock:
            msgid = next(self._ids) & MAX_MSGID
            payload = self._encode(msgid, method, args)
            for attempt in (1, 2):
                sent = False
                conn = self.connect()._conn
                assert conn is not None
                fresh = not conn.used
                try:
                    conn.send(payload, self._seconds(self.timeout, method))
                    sent = True
                    return self._receive(conn, method, msgid, self._seconds(timeout or self.timeout, method))
                except TimeoutError:  # the daemon reads nothing: its socket's buffer is full
                    self.close()
                    raise RPCTimeout(f"memoryd did not read the {method} request in time") from None
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, EOFError):
                    notice = conn.waiting_notice()
                    self.close()
                    if notice is not None:  # the daemon said why it closed (too many connections, ...)
                        raise notice from None
                    if attempt == 1 and session.may_resend(method, sent, fresh):
                        continue
                    if not sent:
                        raise DaemonNotRunning(self.socket_path, "the connection was closed") from None
                    raise ConnectionLost(
                        f"memoryd closed the connection before answering {method!r}"
                        + ("" if method in IDEMPOTENT else "; it may or may not have been applied")
                    ) from None
        raise AssertionError("unreachable")

    @staticmethod
    def _encode(msgid: int, method: str, args: list[Any]) -> bytes:
        try:
            return session.request(msgid, method, args)
        except UnicodeEncodeError as exc:
            raise UnencodableRequest(
                f"the {method} request holds text that is not valid UTF-8 ({exc.reason})"
            ) from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise UnencodableRequest(f"the {method} request cannot be sent: {exc}") from None
        except session.FrameError as exc:
            raise RequestTooLarge(exc.message) from None

    def _receive(self, conn: Connection, method: str, msgid: int, timeout: float) -> Any:
        try:
            for message in conn.messages(time.monotonic() + timeout):
                if isinstance(message, session.Reply) and message.msgid == msgid:
                    if message.error is not None:
                        raise RemoteError(*session.error_fields(message.error))
                    return message.result
                fatal = session.fatal_error(message) if isinstance(message, session.Notice) else None
                if fatal is not None:  # the daemon gave up on this connection and says why
                    self.close()
                    raise RemoteError(*fatal)
        except TimeoutError:
            self.close()
            raise RPCTimeout(f"memoryd did not answer {method} within {timeout:.1f} s") from None
        except session.FrameError as exc:
            self.close()
            raise ConnectionLost(f"memoryd's answer to {method!r} cannot be read: {exc.message}") from None
        raise AssertionError("unreachable")

    # -- methods -------------------------------------------------------------------------------------

    def request(self, method: str, **values: Any) -> Any:
        """Call a method by the Python names of its parameters (memoryd_client.protocol.schema); unknown names are a
        TypeError here, before anything is sent. Values are checked by the daemon."""
        return self.call(method, METHODS[method](**values).wire_params())

    def ping(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.call("ping")
        return answer

    def search(self, query: str, **options: Any) -> SearchResults:
        """Options as memoryd_client.protocol.schema.Search declares them: agent, max_results, min_score, mode, sources,
        path, after, before, type, ..."""
        from memoryd_client.protocol.results import search_results  # only a search needs them: not the hooks

        return search_results(self.request("search", query=query, **options))

    def recall(self, prompt: str, **options: Any) -> dict[str, Any]:
        """Options as protocol.schema.Recall declares them: session, transcript, budget, sources, agent."""
        answer: dict[str, Any] = self.request("recall", prompt=prompt, **options)
        return answer

    def get(
        self, path: str, from_line: int | None = None, lines: int | None = None, *, agent: str | None = None
    ) -> GetResult:
        got: GetResult = self.request("get", path=path, from_=from_line, lines=lines, agent=agent)
        return got

    def write(self, text: str, path: str | None = None, **options: Any) -> WriteResult:
        """Options: agent, type, importance, supersedes, force."""
        done: WriteResult = self.request("write", text=text, path=path, **options)
        return done

    def forget(self, citation: str | None = None, **options: Any) -> dict[str, Any]:
        """Options: query, confirm, expect, purge, agent (memoryd_client.protocol.schema.Forget)."""
        done: dict[str, Any] = self.request("forget", citation=citation, **options)
        return done

    def update(self, citation: str, text: str, expect: str, *, agent: str | None = None) -> dict[str, Any]:
        done: dict[str, Any] = self.request("update", citation=citation, text=text, expect=expect, agent=agent)
        return done

    def undo(self, count: int = 1, *, change: int | None = None, agent: str | None = None) -> dict[str, Any]:
        done: dict[str, Any] = self.request("undo", count=count, change=change, agent=agent)
        return done

    def changes(self, limit: int = 20, *, agent: str | None = None) -> dict[str, Any]:
        found: dict[str, Any] = self.request("changes", limit=limit, agent=agent)
        return found

    def status(self, agent: str | None = None) -> dict[str, Any]:
        state: dict[str, Any] = self.request("status", agent=agent)
        return state

    def notes(self, path: str | None = None, **options: Any) -> dict[str, Any]:
        """The files memory holds, newest first (options: day, limit, agent; see schema.Notes)."""
        listed: dict[str, Any] = self.request("notes", path=path, **options)
        return listed

    def recall_log(self, **options: Any) -> dict[str, Any]:
        """What automatic recall put before which prompt (options: agent, session, limit, skipped)."""
        logged: dict[str, Any] = self.request("recall_log", **options)
        return logged

    def sync(self, agent: str | None = None, force: bool = False, timeout: float = 600) -> dict[str, Any]:
        """Sync and wait at most `timeout` seconds; the answer's `done` says whether it finished."""
        named = METHODS["sync"](agent=agent, force=force, timeout=timeout).wire_params()
        done: dict[str, Any] = self.call("sync", named, timeout=max(self.timeout, timeout + 5))
        return done

    def reindex(self, agent: str | None = None, wait: bool = False, timeout: float = 3600) -> dict[str, Any]:
        named = METHODS["reindex"](agent=agent, wait=wait, timeout=timeout if wait else None).wire_params()
        job: dict[str, Any] = self.call("reindex", named, timeout=max(self.timeout, timeout + 5) if wait else None)
        return job

    def agents(self) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = self.call("agents")
        return listed
