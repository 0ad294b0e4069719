"""Who may call `memctl mcp --http`: the user it runs as, holding the token in a file only that user can read.

The daemon's socket admits its own user only (a 0700 folder, a 0600 socket, the peer's uid checked). A TCP port on
loopback admits every local user, so the HTTP transport asks each request for `Authorization: Bearer <token>` and,
where the OS says who owns the other end of a loopback connection (Linux's /proc/net/tcp), refuses another uid
even with the token."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import secrets
import socket
import stat
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any

TOKEN_FILE = "mcp-http.token"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def token_path(data_dir: str) -> str:
    return os.path.join(data_dir, TOKEN_FILE)


def load_token(path: str) -> str:
    """The token in `path`, made on first use (0600, in a folder made 0700). A token file another user could
    have read, or that is not a plain file of this user's, is replaced."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return _new_token(path)
    except OSError as exc:
        raise OSError(f"cannot read the MCP token file {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, encoding="utf-8") as fh:
        found = os.fstat(fh.fileno())
        token = fh.read().strip()
    if not stat.S_ISREG(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077 or len(token) < 32:
        os.unlink(path)
        return _new_token(path)
    return token


def _new_token(path: str) -> str:
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token


HEADER_SECONDS = 10.0  # a connection must send a whole request's headers this soon after it opens or its last answer
BODY_SECONDS = 5.0  # a refused request's body is read this long at most


async def _discard_body(receive: Receive, limit: int = 1 << 20) -> None:
    """Read a refused request's body (up to `limit`, for BODY_SECONDS) before answering: a connection closed over
    unread bytes is reset, and the client sees that instead of the answer."""

    async def drain() -> None:
        read = 0
        while read <= limit:
            message = await receive()
            read += len(message.get("body", b""))
            if message.get("type") != "http.request" or not message.get("more_body"):
                return

    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(drain(), BODY_SECONDS)


def guarded_protocol(port: int) -> type:
    """uvicorn's HTTP/1.1 protocol, closing a connection from another user's process as it opens (before it can
    hold a descriptor: a flood of half-sent requests locked the owner out), and one that has not sent a whole
    request's headers within HEADER_SECONDS."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Guarded(H11Protocol):
        _slow: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = transport.get_extra_info("peername")
            if peer and other_user((str(peer[0]), int(peer[1])), port):
                transport.abort()
                return
            self._arm()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete and self._slow is not None:
                self._slow.cancel()
                self._slow = None

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._slow is not None:
                self._slow.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._slow is not None:
                self._slow.cancel()
            self._slow = self.loop.call_later(HEADER_SECONDS, self._too_slow)

        def _too_slow(self) -> None:
            self._slow = None
            if self.cycle is None or self.cycle.response_complete:
                self.transport.abort()

    return Guarded


def loopback_peer_uid(client: tuple[str, int], server_port: int, server_host: str = "127.0.0.1") -> int | None:
    """The uid owning the client end of a loopback TCP connection (Linux), or None where the OS does not say. The
    client's socket may be IPv6 even when the server's is IPv4 (`::ffff:127.0.0.1`): both tables are read. Only
    the row of this very connection counts: established, from the client's address and port to the server's
    (a closed socket's TIME_WAIT row, owned by uid 0, or one to another address on the same ports, would lend
    another user's connection root's uid)."""
    ends = []
    for host, port in (client, (server_host, server_port)):
        try:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            packed = socket.inet_pton(family, host)
        except (OSError, ValueError):
            return None
        forms = {f"{_hex6(packed) if family == socket.AF_INET6 else _hex4(packed)}:{port:04X}"}
        if family == socket.AF_INET:
            mapped = bytes(10) + bytes((0xFF, 0xFF)) + packed  # the same end, seen from an IPv6 socket
            forms.add(f"{_hex6(mapped)}:{port:04X}")
        ends.append(forms)
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                next(fh, None)
                for line in fh:
                    fields = line.split()
                    if len(fields) > 7 and fields[3] == ESTABLISHED and fields[1] in ends[0] and fields[2] in ends[1]:
                        return int(fields[7])
        except (OSError, ValueError):
            continue
    return None


ESTABLISHED = "01"  # /proc/net/tcp's `st` column


def _hex4(packed: bytes) -> str:
    return "".join(f"{b:02X}" for b in reversed(packed))


def _hex6(packed: bytes) -> str:
    return "".join(_hex4(packed[i : i + 4]) for i in range(0, 16, 4))


def other_user(client: tuple[str, int], server_port: int, allowed: Collection[int] = ()) -> bool:
    """Whether a loopback connection comes from another user's process (than this one's and the `allowed` uids).
    Where the OS keeps the table (Linux), a connection it does not list is refused too: an owner that cannot be
    told is not taken to be ours."""
    uid = loopback_peer_uid(client, server_port)
    if uid is None:
        return os.access("/proc/net/tcp", os.R_OK)
    return uid != os.getuid() and uid not in allowed


class TokenGate:
    """ASGI middleware: a request without this user's bearer token (or, where it can be told, from another uid)
    is answered 401/403 and never reaches the MCP server."""

    def __init__(self, app: ASGIApp, token: str, port: int) -> None:
        self.app, self.port = app, port
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message = refusal
        await _discard_body(receive)
        body = message.encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="memoryd"'))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        client = scope.get("client")
        if client is not None and other_user((str(client[0]), int(client[1])), self.port):
            return 403, "memoryd serves only the user it runs as\n"
        sent = dict(scope.get("headers") or []).get(b"authorization", b"")
        if not hmac.compare_digest(sent, self._expected):
            return (
                401,
                "memoryd's MCP endpoint needs 'Authorization: Bearer <token>' (memctl mcp --http prints where)\n",
            )
        return None
