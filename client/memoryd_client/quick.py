"""One call to the daemon at the least start-up cost, for what runs on every prompt (`memctl recall`, the hooks).

The stub (memoryd_client.stub) is the full client: reconnects, resends, progress notices, precise errors. Its
imports (socket, enum, selectors...) were half of a `memctl recall` here (22 of ~45 ms before the daemon's
part). This path uses the C socket module and msgpack alone; anything short of a plain answer raises QuickFailed,
and the caller falls back to the stub, which tells the user what is wrong.

Everything here works to one deadline (time.monotonic()): reading stdin, and a call's connect, send and every
receive, so neither a writer that never closes stdin nor a daemon that dribbles bytes or sends notices without end
holds the caller past it."""

from __future__ import annotations

import _socket
import os
import select
import sys
import time

import msgpack

from memoryd_client.protocol.connect import queue_connect
from memoryd_client.protocol.paths import default_socket_path
from memoryd_client.protocol.wire import NOTIFICATION, RESPONSE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MSGID = 1


class QuickFailed(Exception):
    """No plain answer: not connected, an error reply, a timeout or anything unexpected. `retry`: whether asking
    again through the stub can help (not after a timeout: the time is spent). `absent`: nothing listens at the socket
    path (no such file, or refused), so the stub could only say that memoryd is not running."""

    def __init__(self, message: str, retry: bool = True, absent: bool = False) -> None:
        super().__init__(message)
        self.retry = retry
        self.absent = absent


def _left(deadline: float) -> float:
    """The seconds left before the deadline; TimeoutError when there are none."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def read_stdin(deadline: float, limit: int) -> bytes:
    """Standard input up to its end, or `limit` + 1 bytes (the caller sees it is over); TimeoutError at the
    deadline, and b"" from a terminal or no stdin at all."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    if os.isatty(fd):
        return b""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        ready, _, _ = select.select([fd], [], [], _left(deadline))
        if not ready:
            continue
        try:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
        except BlockingIOError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def call(method: str, params: dict[str, Any], socket_path: str | None, deadline: float) -> Any:
    """The result of one call with named parameters (None values left out), by `deadline` (time.monotonic())."""
    started = time.monotonic()
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        request = msgpack.packb([0, MSGID, method, [{k: v for k, v in params.items() if v is not None}]])
        sock.settimeout(_left(deadline))
        path = socket_path or default_socket_path()
        try:
            queue_connect(sock, path, _left(deadline))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise QuickFailed(f"no daemon at {path}: {exc.strerror}", absent=True) from None
        sock.settimeout(_left(deadline))
        sock.sendall(request)
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=64 * 1024 * 1024)
        while True:
            sock.settimeout(_left(deadline))
            data = sock.recv(65536)
            if not data:
                raise QuickFailed("the daemon closed the connection")
            unpacker.feed(data)
            for message in unpacker:
                if isinstance(message, list) and message and message[0] == NOTIFICATION:
                    continue
                if not (isinstance(message, list) and len(message) == 4 and message[:2] == [RESPONSE, MSGID]):
                    raise QuickFailed(f"unexpected message {str(message)[:80]}")
                if message[2] is not None:
                    raise QuickFailed(str(message[2])[:200])
                return message[3]
    except TimeoutError:
        spent = time.monotonic() - started
        raise QuickFailed(f"memoryd did not answer {method} in time ({spent:.1f} s)", retry=False) from None
    except (OSError, ValueError, msgpack.UnpackException) as exc:
        raise QuickFailed(str(exc)) from None
    finally:
        sock.close()
