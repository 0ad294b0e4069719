"""One call to the daemon at the least start-up cost, for what runs on every prompt (`memctl recall`, the hooks).

The stub (memoryd.client.stub) is the full client: reconnects, resends, progress notices, precise errors. Its
imports (socket, enum, selectors...) were half of a `memctl recall` here (22 of ~45 ms before the daemon's
part). This path uses the C socket module and msgpack alone; anything short of a plain answer raises QuickFailed,
and the caller falls back to the stub, which tells the user what is wrong."""

from __future__ import annotations

import _socket

import msgpack

from memoryd.protocol.paths import default_socket_path
from memoryd.protocol.wire import NOTIFICATION, RESPONSE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MSGID = 1


class QuickFailed(Exception):
    """No plain answer: not connected, an error reply, a timeout or anything unexpected. `retry`: whether asking
    again through the stub can help (not after a timeout: the time is spent)."""

    def __init__(self, message: str, retry: bool = True) -> None:
        super().__init__(message)
        self.retry = retry


def call(method: str, params: dict[str, Any], socket_path: str | None = None, timeout: float = 5.0) -> Any:
    """The result of one call with named parameters (None values left out)."""
    request = msgpack.packb([0, MSGID, method, [{k: v for k, v in params.items() if v is not None}]])
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(socket_path or default_socket_path())
        sock.sendall(request)
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=64 * 1024 * 1024)
        while True:
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
        raise QuickFailed(f"memoryd did not answer {method} within {timeout} s", retry=False) from None
    except (OSError, ValueError) as exc:
        raise QuickFailed(str(exc)) from None
    finally:
        sock.close()
