"""MessagePack-RPC over a Unix socket: a stream of msgpack arrays, requests served concurrently.

Request `[0, msgid, method, params]` -> response `[1, msgid, error, result]`; notification
`[2, method, params]` (no response). Errors are maps `{code, message}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgpack
import structlog

from memoryd.service.methods import RPCError

log = structlog.get_logger("memoryd.rpc")

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
MAX_IN_FLIGHT = 64  # per connection; reading pauses beyond this
READ_CHUNK = 1 << 16

Dispatch = Callable[[Any, Any], Any]


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


def _error_reply(msgid: int, error: RPCError) -> bytes:
    return _pack([RESPONSE, msgid, error.as_dict(), None])


class RPCServer:
    def __init__(self, path: Path, dispatch: Dispatch, *, workers: int = 8) -> None:
        self.path = path
        self.dispatch = dispatch
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rpc")
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=READ_CHUNK)
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._connections):
            task.cancel()
        self.executor.shutdown(wait=True, cancel_futures=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        sock = writer.get_extra_info("socket")
        try:
            uid = peer_uid(sock) if sock is not None else None
            if uid is not None and uid != os.getuid():
                log.warning("refused a peer of another user", uid=uid)
                return
            await self._read_loop(reader, writer)
        except (ConnectionResetError, BrokenPipeError, asyncio.CancelledError):
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                await writer.wait_closed()

    async def _read_loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=MAX_MESSAGE_BYTES, strict_map_key=False)
        in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
        pending: set[asyncio.Task[None]] = set()
        try:
            while True:
                data = await reader.read(READ_CHUNK)
                if not data:
                    return
                try:
                    unpacker.feed(data)
                except msgpack.BufferFull:
                    await self._fatal(writer, "too_large", f"message larger than {MAX_MESSAGE_BYTES} bytes")
                    return
                while True:
                    try:
                        message = unpacker.unpack()
                    except msgpack.OutOfData:
                        break
                    except (msgpack.FormatError, msgpack.StackError, ValueError, TypeError) as exc:
                        await self._fatal(writer, "parse_error", f"malformed msgpack: {exc}")
                        return
                    await in_flight.acquire()
                    job = asyncio.create_task(self._handle(message, writer))
                    pending.add(job)
                    job.add_done_callback(lambda t: (pending.discard(t), in_flight.release()))
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    async def _fatal(self, writer: asyncio.StreamWriter, code: str, message: str) -> None:
        """The stream can no longer be read: say why in a notification, then close."""
        log.warning("closing connection", code=code, reason=message)
        writer.write(_pack([NOTIFICATION, "memoryd.error", [{"code": code, "message": message}]]))
        await writer.drain()

    async def _handle(self, message: Any, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        kind = message[0] if isinstance(message, list) and message else None
        if kind == REQUEST and len(message) == 4 and isinstance(message[1], int):
            msgid = message[1]
            try:
                result = await loop.run_in_executor(self.executor, self.dispatch, message[2], message[3])
                reply = _pack([RESPONSE, msgid, None, result])
            except RPCError as exc:
                reply = _error_reply(msgid, exc)
            except Exception as exc:
                log.exception("method failed", method=str(message[2])[:64])
                reply = _error_reply(msgid, RPCError("internal_error", f"{type(exc).__name__}: {exc}"))
        elif kind == NOTIFICATION and len(message) == 3:
            try:
                await loop.run_in_executor(self.executor, self.dispatch, message[1], message[2])
            except Exception as exc:
                log.warning("notification failed", method=str(message[1])[:64], error=str(exc))
            return
        elif kind == REQUEST and len(message) >= 2 and isinstance(message[1], int):
            reply = _error_reply(message[1], RPCError("invalid_request", "a request is [0, msgid, method, params]"))
        else:
            reply = _pack(
                [
                    NOTIFICATION,
                    "memoryd.error",
                    [{"code": "invalid_request", "message": "expected [0, msgid, method, params]"}],
                ]
            )
        if not writer.is_closing():
            writer.write(reply)
            await writer.drain()
