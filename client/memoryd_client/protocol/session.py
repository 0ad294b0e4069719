"""The msgpack-rpc session both sides share, above the byte stream and below the methods: one message read into
what it is (a call, a reply, a notice, or something malformed), messages packed, errors as maps, msgids, the
frame limit, and the rule of when a request may be sent again.

The daemon (memoryd.daemon.rpc) serves calls through it and the stub (memoryd_client.stub) makes them; neither
spells out a message's shape itself. Imports msgpack and memoryd_client.protocol only."""

from __future__ import annotations

import msgpack

from memoryd_client.protocol.schema import IDEMPOTENT
from memoryd_client.protocol.wire import (
    ERROR_NOTIFICATION,
    MAX_MESSAGE_BYTES,
    MAX_MSGID,
    NOTIFICATION,
    REQUEST,
    RESPONSE,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class _Message:
    """A message read: plain classes, not namedtuples (each of those costs a client's start-up a tenth of a ms)."""

    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


class Call(_Message):
    """[0, msgid, method, params]"""

    __slots__ = ("method", "msgid", "params")

    def __init__(self, msgid: int, method: Any, params: Any) -> None:
        self.msgid, self.method, self.params = msgid, method, params


class Reply(_Message):
    """[1, msgid, error, result]"""

    __slots__ = ("error", "msgid", "result")

    def __init__(self, msgid: int, error: Any, result: Any) -> None:
        self.msgid, self.error, self.result = msgid, error, result


class Notice(_Message):
    """[2, method, params]"""

    __slots__ = ("method", "params")

    def __init__(self, method: Any, params: Any) -> None:
        self.method, self.params = method, params


class Malformed(_Message):
    """Anything else; `msgid` when one can be answered."""

    __slots__ = ("msgid", "reason")

    def __init__(self, msgid: int | None, reason: str) -> None:
        self.msgid, self.reason = msgid, reason


Message = Call | Reply | Notice | Malformed
EXPECTED = "expected [0, msgid, method, params] with a msgid from 0 to 2**32-1"


class FrameError(Exception):
    """The stream cannot be read on (too large, not msgpack): the connection ends, with this code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def is_msgid(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_MSGID


def read(message: Any) -> Message:
    """What one decoded message is."""
    if not isinstance(message, list) or not message:
        return Malformed(None, "a message is an array")
    kind, size = message[0], len(message)
    if kind == REQUEST and size >= 2 and is_msgid(message[1]):
        if size == 4:
            return Call(message[1], message[2], message[3])
        return Malformed(message[1], "a request is [0, msgid, method, params]")
    if kind == RESPONSE and size == 4 and is_msgid(message[1]):
        return Reply(message[1], message[2], message[3])
    if kind == NOTIFICATION and size == 3:
        return Notice(message[1], message[2])
    return Malformed(None, EXPECTED)


def pack(message: list[Any]) -> bytes:
    """A message as bytes; what msgpack has no type for is sent as its text."""
    packed: bytes = msgpack.packb(message, use_bin_type=True, default=str)
    return packed


def request(msgid: int, method: str, params: list[Any]) -> bytes:
    """A request's bytes, strictly (nothing turned into text); TypeError, ValueError or OverflowError (what
    msgpack cannot carry, UnicodeEncodeError among them) or FrameError (too large) before anything is sent."""
    payload: bytes = msgpack.packb([REQUEST, msgid, method, params], use_bin_type=True)
    if len(payload) > MAX_MESSAGE_BYTES:
        raise FrameError("too_large", f"the request is {len(payload)} bytes; memoryd accepts {MAX_MESSAGE_BYTES}")
    return payload


def reply(msgid: int, result: Any) -> bytes:
    return pack([RESPONSE, msgid, None, result])


def error_reply(msgid: int, code: str, message: str) -> bytes:
    return pack([RESPONSE, msgid, {"code": code, "message": message}, None])


def fatal(code: str, message: str) -> bytes:
    """The notice a connection gets before it is closed: why."""
    return pack([NOTIFICATION, ERROR_NOTIFICATION, [{"code": code, "message": message}]])


def fatal_error(message: Notice) -> tuple[str, str, Any] | None:
    """The error a `fatal` notice carries, else None."""
    if message.method != ERROR_NOTIFICATION:
        return None
    params = message.params
    return error_fields(params[0] if isinstance(params, list) and params else None)


def error_fields(error: Any) -> tuple[str, str, Any]:
    """(code, message, data) of an error as the daemon sends it ({code, message}), or as other msgpack-rpc
    servers do ([code, message], a string)."""
    if isinstance(error, dict):
        return str(error.get("code", "error")), str(error.get("message", error)), error.get("data")
    if isinstance(error, (list, tuple)) and len(error) >= 2:
        return str(error[0]), str(error[1]), None
    return "error", str(error), None


def may_resend(method: str, sent: bool, fresh: bool) -> bool:
    """After a lost connection: a request goes again only when it surely never reached a daemon (its send failed
    on a connection that had carried earlier requests: one left from before a restart), or when it only reads."""
    return (not sent and not fresh) or method in IDEMPOTENT


class Framer:
    """Bytes in, whole messages out, at most MAX_MESSAGE_BYTES each (msgpack's streaming Unpacker)."""

    def __init__(self, read_size: int = 1 << 16) -> None:
        self._unpacker = msgpack.Unpacker(
            raw=False, max_buffer_size=MAX_MESSAGE_BYTES, strict_map_key=False, read_size=read_size
        )

    def feed(self, data: bytes) -> None:
        try:
            self._unpacker.feed(data)
        except msgpack.BufferFull:
            raise FrameError("too_large", f"message larger than {MAX_MESSAGE_BYTES} bytes") from None

    def __iter__(self) -> Iterator[Message]:
        while True:
            try:
                message = self._unpacker.unpack()
            except msgpack.OutOfData:
                return
            except (msgpack.FormatError, msgpack.StackError, ValueError, TypeError) as exc:
                raise FrameError("parse_error", f"malformed msgpack: {exc}") from None
            yield read(message)
