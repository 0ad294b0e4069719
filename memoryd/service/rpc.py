"""MessagePack-RPC over a Unix socket: a stream of msgpack arrays, requests served concurrently.

Request `[0, msgid, method, params]` -> response `[1, msgid, error, result]`; notification
`[2, method, params]` (no response). Errors are maps `{code, message}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import socket
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import structlog

from memoryd.protocol.wire import (
    ERROR_NOTIFICATION,
    MAX_MESSAGE_BYTES,
    MAX_MSGID,
    NOTIFICATION,
    REQUEST,
    RESPONSE,
)
from memoryd.service.fairpool import FairPool

log = structlog.get_logger("memoryd.rpc")

MAX_IN_FLIGHT = 16  # per connection; reading pauses beyond this, and while its unread replies pile up
WRITE_HIGH_WATER = 1 << 20  # reply bytes a client may leave unread before its requests are no longer read
READ_CHUNK = 1 << 16
MAX_CONNECTIONS = 256  # open at once; one more is told why and closed
LISTEN_BACKLOG = 1024  # connects queued before accept (the kernel caps it at somaxconn)
LONG_METHODS = frozenset({"sync", "reindex", "write"})  # run on their own threads, so ping and search never queue
INLINE_METHODS = frozenset({"ping"})  # answered on the event loop itself: it always answers
CONTROL_METHODS = frozenset({"status", "agents"})  # their own threads: answered behind no search, get or write
BULK_METHODS = frozenset({"get"})  # Python-heavy reads of whole files: two threads, so they cannot crowd the GIL
CLOSE_GRACE_SECONDS = 2.0  # a refused connection's unread requests are read and dropped, then it closes

Dispatch = Callable[[Any, Any], Any]


class RPCError(Exception):
    """An error answer: {code, message}."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class Dropped(Exception):
    """A call dropped before it started: nobody is left to answer."""


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket, where the OS tells it."""
    if hasattr(socket, "SO_PEERCRED"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    if sys.platform == "darwin":  # getpeereid() through LOCAL_PEERCRED (struct xucred)
        local_peercred = 0x001
        creds = sock.getsockopt(0, local_peercred, struct.calcsize("2i16i"))
        return struct.unpack("2i16i", creds)[1]
    return None


def _pack(message: list[Any]) -> bytes:
    return msgpack.packb(message, use_bin_type=True, default=str)


def _peer_gone(sock: socket.socket | None) -> bool:
    """After EOF: whether the peer closed entirely (POLLHUP), not just its sending side (it may still read)."""
    if sock is None or not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLHUP | getattr(select, "POLLRDHUP", 0))
    return any(events & select.POLLHUP for _, events in poller.poll(0))


def _is_msgid(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_MSGID


def _error_reply(msgid: int, error: RPCError) -> bytes:
    return _pack([RESPONSE, msgid, error.as_dict(), None])


class RPCServer:
    def __init__(self, path: Path, dispatch: Dispatch, *, workers: int = 8, job_workers: int = 4) -> None:
        self.path = path
        self.dispatch = dispatch
        self.executor = FairPool(workers, "rpc")
        self.jobs = FairPool(job_workers, "rpc-job")
        self.control = FairPool(2, "rpc-control")
        self.bulk = FairPool(2, "rpc-bulk", per_caller=1)
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._calls: set[asyncio.Task[None]] = set()  # requests being answered, on every connection
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.path), limit=READ_CHUNK, backlog=LISTEN_BACKLOG
            )
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)

    async def close(self) -> None:
        """Stop accepting and drop connections: calls not yet started are dropped, running ones get two seconds to
        answer (the caller has told the jobs behind them to stop, and they answer `stopping`), and replies that
        clients have not read are dropped."""
        if self._server is not None:
            self._server.close()
        for pool in self._pools:
            pool.shutdown()  # calls not yet started are dropped: nothing new begins
        if self._calls:  # jobs were told to stop: let their callers have the answer (`stopping`) first
            await asyncio.wait(list(self._calls), timeout=2.0)
        for writer in list(self._writers):
            writer.transport.abort()  # replies a client never read would hold the close forever
        for task in [*self._connections, *self._calls]:
            task.cancel()
        if self._connections or self._calls:
            await asyncio.wait([*self._connections, *self._calls], timeout=1.0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        self._writers.add(writer)
        sock = writer.get_extra_info("socket")
        try:
            uid = peer_uid(sock) if sock is not None else None
            if uid is not None and uid != os.getuid():
                log.warning("refused a peer of another user", uid=uid)
                return
            if len(self._connections) > MAX_CONNECTIONS:
                await self._fatal(writer, "too_many_connections", f"more than {MAX_CONNECTIONS} open connections")
                await self._drain_and_close(reader, writer)
                return
            await self._read_loop(reader, writer)
        except (ConnectionResetError, BrokenPipeError, asyncio.CancelledError):
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            self._writers.discard(writer)
            writer.close()  # sends what is left first, unless the client does not read: then it is dropped
            try:
                await asyncio.wait_for(writer.wait_closed(), CLOSE_GRACE_SECONDS)
            except (asyncio.TimeoutError, ConnectionResetError, BrokenPipeError):
                writer.transport.abort()

    async def _drain_and_close(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Say no more, read what the client already sent (closing over unread data would reset the connection,
        and the client would see ECONNRESET instead of the notice), then close."""
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()

        async def discard() -> None:
            while await reader.read(READ_CHUNK):
                pass

        with contextlib.suppress(asyncio.TimeoutError, OSError):
            await asyncio.wait_for(discard(), CLOSE_GRACE_SECONDS)

    async def _read_loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        unpacker: msgpack.Unpacker | None = None  # made at the first byte: an idle connection holds no buffer
        in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
        pending: set[asyncio.Task[None]] = set()
        caller = object()  # this connection's turn in the pools
        writer.transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        try:
            while True:
                data = await reader.read(READ_CHUNK)
                if not data:
                    if _peer_gone(writer.get_extra_info("socket")):
                        self._drop(caller)  # nobody will read the answers: drop what has not started
                    return
                if unpacker is None:
                    unpacker = msgpack.Unpacker(
                        raw=False, max_buffer_size=MAX_MESSAGE_BYTES, strict_map_key=False, read_size=READ_CHUNK
                    )
                try:
                    unpacker.feed(data)
                except msgpack.BufferFull:
                    await self._fatal(writer, "too_large", f"message larger than {MAX_MESSAGE_BYTES} bytes")
                    await self._drain_and_close(reader, writer)
                    return
                while True:
                    try:
                        message = unpacker.unpack()
                    except msgpack.OutOfData:
                        break
                    except (msgpack.FormatError, msgpack.StackError, ValueError, TypeError) as exc:
                        await self._fatal(writer, "parse_error", f"malformed msgpack: {exc}")
                        await self._drain_and_close(reader, writer)
                        return
                    await in_flight.acquire()
                    await writer.drain()  # a client that does not read its answers is not read either
                    job = asyncio.create_task(self._handle(message, writer, caller))
                    pending.add(job)
                    self._calls.add(job)
                    job.add_done_callback(lambda t: (pending.discard(t), self._calls.discard(t), in_flight.release()))
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    async def _fatal(self, writer: asyncio.StreamWriter, code: str, message: str) -> None:
        """The stream can no longer be read: say why in a notification, then close."""
        log.warning("closing connection", code=code, reason=message)
        writer.write(_pack([NOTIFICATION, ERROR_NOTIFICATION, [{"code": code, "message": message}]]))
        await writer.drain()

    def _drop(self, caller: object) -> None:
        dropped = sum(pool.drop(caller) for pool in self._pools)
        if dropped:
            log.info("client left; its queued calls dropped", calls=dropped)

    @property
    def _pools(self) -> tuple[FairPool, ...]:
        return (self.executor, self.jobs, self.control, self.bulk)

    def _pool(self, method: Any) -> FairPool:
        if isinstance(method, str) and method in LONG_METHODS:
            return self.jobs
        if isinstance(method, str) and method in CONTROL_METHODS:
            return self.control
        if isinstance(method, str) and method in BULK_METHODS:
            return self.bulk
        return self.executor

    async def _call(self, caller: object, method: Any, params: Any) -> Any:
        """The method's result; `Dropped` when it was dropped unstarted (its client left, or the daemon stops)."""
        if isinstance(method, str) and method in INLINE_METHODS:
            return self.dispatch(method, params)
        future = self._pool(method).submit(caller, self.dispatch, method, params)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if future.cancelled():
                raise Dropped from None
            raise

    async def _handle(self, message: Any, writer: asyncio.StreamWriter, caller: object) -> None:
        kind = message[0] if isinstance(message, list) and message else None
        valid_id = kind == REQUEST and len(message) >= 2 and _is_msgid(message[1])
        if valid_id and len(message) == 4:
            msgid = message[1]
            try:
                result = await self._call(caller, message[2], message[3])
                reply = _pack([RESPONSE, msgid, None, result])
            except RPCError as exc:
                reply = _error_reply(msgid, exc)
            except Dropped:
                return
            except Exception as exc:
                log.exception("method failed", method=str(message[2])[:64])
                reply = _error_reply(msgid, RPCError("internal_error", f"{type(exc).__name__}: {exc}"))
        elif kind == NOTIFICATION and len(message) == 3:
            try:
                await self._call(caller, message[1], message[2])
            except Exception as exc:
                log.warning("notification failed", method=str(message[1])[:64], error=str(exc))
            return
        elif valid_id:
            reply = _error_reply(message[1], RPCError("invalid_request", "a request is [0, msgid, method, params]"))
        else:
            why = "expected [0, msgid, method, params] with a msgid from 0 to 2**32-1"
            reply = _pack([NOTIFICATION, ERROR_NOTIFICATION, [{"code": "invalid_request", "message": why}]])
        if not writer.is_closing():
            writer.write(reply)
            await writer.drain()
