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
import stat
import time
from collections.abc import Callable, Hashable
from concurrent.futures import CancelledError
from pathlib import Path
from typing import Any

import structlog

from memoryd.daemon.admission import NEW_PER_PROCESS_RATE, ConnectRate, Throttled, peer_credentials
from memoryd.daemon.fairpool import FairPool
from memoryd_client.protocol import session
from memoryd_client.protocol.schema import METHODS
from memoryd_client.protocol.session import Call, FrameError, Framer, Malformed, Message, Notice

log = structlog.get_logger("memoryd.rpc")

MAX_IN_FLIGHT = 16  # per connection; reading pauses beyond this, and while its unread replies pile up
WRITE_HIGH_WATER = 1 << 20  # reply bytes a client may leave unread before its requests are no longer read
READ_CHUNK = 1 << 16
MAX_CONNECTIONS = 256  # open at once; one more is told why and closed
MAX_PER_PROCESS = 64  # of those, from one client process: one that opens connections in a loop leaves room for others
MAX_REFUSING = 64  # refused connections whose unread requests are read before they close; past it, closed at once
REFUSED_GRACE_SECONDS = 0.25  # a refused connection's unread requests are read and dropped this long, then it closes
LISTEN_BACKLOG = 128  # connects queued before accept: a client waits behind at most this many
ACCEPT_BATCH = 32  # connections accepted per turn of the event loop, so that calls in flight are not held up
# Where each method runs (the schema's `lane`): "inline" on the event loop itself, so it always answers;
# "control" on threads of their own, behind no search, get or write; "bulk" (Python-heavy reads of whole files) on two
# threads, so they cannot crowd the GIL; "jobs" (sync, reindex, write) on their own threads, so search never queues
# behind them; everything else on the shared pool.
LANES = {name: method.lane for name, method in METHODS.items()}
CLOSE_GRACE_SECONDS = 2.0  # a closing connection's last replies get this long to be read

Dispatch = Callable[[Any, Any], Any]


class RPCError(Exception):
    """An error answer: {code, message}."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Dropped(Exception):
    """A call dropped before it started: nobody is left to answer."""


def _peer_gone(sock: socket.socket | None) -> bool:
    """After EOF: whether the peer closed entirely (POLLHUP), not just its sending side (it may still read)."""
    if sock is None or not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLHUP | getattr(select, "POLLRDHUP", 0))
    return any(events & select.POLLHUP for _, events in poller.poll(0))


class RPCServer:
    def __init__(self, path: Path, dispatch: Dispatch, *, workers: int = 8, job_workers: int = 4) -> None:
        self.path = path
        self.dispatch = dispatch
        self.executor = FairPool(workers, "rpc")
        self.jobs = FairPool(job_workers, "rpc-job")
        self.control = FairPool(2, "rpc-control")
        self.bulk = FairPool(2, "rpc-bulk", per_caller=1)
        self._listener: socket.socket | None = None
        self._rate = ConnectRate()
        self._accepted: set[asyncio.Task[None]] = set()  # every accepted connection's task, refused ones too
        self._connections: set[asyncio.Task[None]] = set()
        self._per_process: dict[int, int] = {}
        self._refusing = 0
        self._warn = Throttled()
        self._calls: set[asyncio.Task[None]] = set()  # requests being answered, on every connection
        self._writers: set[asyncio.StreamWriter] = set()
        self._bound: tuple[int, int] | None = None  # the socket file this server made, as (device, inode)

    async def start(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            listener.bind(str(self.path))
        except OSError:
            listener.close()
            raise
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        made = os.lstat(self.path)
        self._bound = (made.st_dev, made.st_ino)
        listener.listen(LISTEN_BACKLOG)
        listener.setblocking(False)
        self._listener = listener
        asyncio.get_running_loop().add_reader(listener.fileno(), self._accept)

    def _accept(self) -> None:
        """Take up to ACCEPT_BATCH waiting connections: a peer of another user, or a process past its connection
        rate, is closed here; the others are served on a task each."""
        loop = asyncio.get_running_loop()
        for _ in range(ACCEPT_BATCH):
            if self._listener is None:
                return
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors: the connection waits in the queue for the next turn
                self._warn.warning("cannot accept a connection", error=str(exc))
                return
            pid, uid = peer_credentials(conn)
            if uid is not None and uid != os.getuid():
                self._warn.warning("refused a peer of another user", uid=uid)
                conn.close()
                continue
            if pid is not None and not self._rate.admit(pid, time.monotonic()):
                why = f"more than {NEW_PER_PROCESS_RATE:.0f} new connections a second from one process (pid {pid})"
                self._warn.warning("refused a connection", code="too_many_connections", reason=why)
                with contextlib.suppress(OSError):
                    conn.setblocking(False)
                    conn.send(session.fatal("too_many_connections", why))
                conn.close()
                continue
            conn.setblocking(False)
            task = loop.create_task(self._open(conn, pid))
            self._accepted.add(task)
            task.add_done_callback(self._accepted.discard)

    async def _open(self, conn: socket.socket, pid: int | None) -> None:
        try:
            reader, writer = await asyncio.open_unix_connection(sock=conn, limit=READ_CHUNK)
        except OSError:
            conn.close()
            return
        await self._serve(reader, writer, pid)

    def remove_socket(self) -> None:
        """Delete the socket file this server made; anything put at its path since (another daemon's socket, a
        user's file) is left alone."""
        if self._bound is None:
            return
        with contextlib.suppress(OSError):
            found = os.lstat(self.path)
            if stat.S_ISSOCK(found.st_mode) and (found.st_dev, found.st_ino) == self._bound:
                os.unlink(self.path)
        self._bound = None

    async def close(self) -> None:
        """Stop accepting and drop connections: calls not yet started are dropped, running ones get two seconds to
        answer (the caller has told the jobs behind them to stop, and they answer `stopping`), and replies that
        clients have not read are dropped."""
        if self._listener is not None:
            with contextlib.suppress(RuntimeError, ValueError):
                asyncio.get_running_loop().remove_reader(self._listener.fileno())
            self._listener.close()
            self._listener = None
        self.remove_socket()
        for pool in self._pools:
            pool.shutdown()  # calls not yet started are dropped: nothing new begins
        if self._calls:  # jobs were told to stop: let their callers have the answer (`stopping`) first
            await asyncio.wait(list(self._calls), timeout=2.0)
        for writer in list(self._writers):
            writer.transport.abort()  # replies a client never read would hold the close forever
        for task in [*self._accepted, *self._calls]:
            task.cancel()
        if self._accepted or self._calls:
            await asyncio.wait([*self._accepted, *self._calls], timeout=1.0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pid: int | None) -> None:
        refusal = self._refusal(pid)
        if refusal is not None:
            await self._refuse(reader, writer, refusal)
            return
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        if pid is not None:
            self._per_process[pid] = self._per_process.get(pid, 0) + 1
        self._writers.add(writer)
        try:
            await self._read_loop(reader, writer)
        except (ConnectionResetError, BrokenPipeError, asyncio.CancelledError):
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            if pid is not None and (left := self._per_process.pop(pid, 1) - 1) > 0:
                self._per_process[pid] = left
            self._writers.discard(writer)
            writer.close()  # sends what is left first, unless the client does not read: then it is dropped
            try:
                await asyncio.wait_for(writer.wait_closed(), CLOSE_GRACE_SECONDS)
            except (asyncio.TimeoutError, ConnectionResetError, BrokenPipeError):
                writer.transport.abort()

    def _refusal(self, pid: int | None) -> str | None:
        """Why a new connection cannot be served, or None."""
        if len(self._connections) >= MAX_CONNECTIONS:
            return f"more than {MAX_CONNECTIONS} open connections"
        if pid is not None and self._per_process.get(pid, 0) >= MAX_PER_PROCESS:
            return f"more than {MAX_PER_PROCESS} open connections from one process (pid {pid})"
        return None

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, why: str) -> None:
        """Tell a connection it is refused, outside the connection count (refused connections that kept their slot
        while they closed let one process that connects in a loop lock every other client out). Its unread requests
        are read for a moment, so that it sees the notice rather than a reset; past MAX_REFUSING at once, not even
        that."""
        self._warn.warning("refused a connection", code="too_many_connections", reason=why)
        try:
            writer.write(session.fatal("too_many_connections", why))
            if self._refusing < MAX_REFUSING:
                self._refusing += 1
                try:
                    await self._drain_and_close(reader, writer, REFUSED_GRACE_SECONDS)
                finally:
                    self._refusing -= 1
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _drain_and_close(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, grace: float = CLOSE_GRACE_SECONDS
    ) -> None:
        """Say no more, read what the client already sent (closing over unread data would reset the connection,
        and the client would see ECONNRESET instead of the notice), then close."""
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()

        async def discard() -> None:
            while await reader.read(READ_CHUNK):
                pass

        with contextlib.suppress(asyncio.TimeoutError, OSError):
            await asyncio.wait_for(discard(), grace)

    async def _read_loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        framer: Framer | None = None  # made at the first byte: an idle connection holds no buffer
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
                framer = framer or Framer(READ_CHUNK)
                try:
                    framer.feed(data)
                    for message in framer:
                        await in_flight.acquire()
                        await writer.drain()  # a client that does not read its answers is not read either
                        job = asyncio.create_task(self._handle(message, writer, caller))
                        pending.add(job)
                        self._calls.add(job)
                        job.add_done_callback(pending.discard)  # the three run in turn once it is done
                        job.add_done_callback(self._calls.discard)
                        job.add_done_callback(lambda _: in_flight.release())
                except FrameError as exc:
                    await self._fatal(writer, exc.code, exc.message)
                    await self._drain_and_close(reader, writer)
                    return
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    async def _fatal(self, writer: asyncio.StreamWriter, code: str, message: str) -> None:
        """The stream can no longer be read: say why in a notification, then close."""
        log.warning("closing connection", code=code, reason=message)
        writer.write(session.fatal(code, message))
        await writer.drain()

    def _drop(self, caller: object) -> None:
        dropped = sum(pool.drop(caller) for pool in self._pools)
        if dropped:
            log.info("client left; its queued calls dropped", calls=dropped)

    @property
    def _pools(self) -> tuple[FairPool, ...]:
        return (self.executor, self.jobs, self.control, self.bulk)

    def _pool(self, method: Any) -> FairPool:
        lane = LANES.get(method) if isinstance(method, str) else None
        return {"jobs": self.jobs, "control": self.control, "bulk": self.bulk}.get(lane or "", self.executor)

    def call_from(self, caller: Hashable, method: str, params: Any) -> Any:
        """A call from another front end (the web page), run in the lane its method has, beside the socket's calls
        and fairly with them; the calling thread waits for it. Raises Dropped when the daemon stops first."""
        if LANES.get(method) == "inline":
            return self.dispatch(method, params)
        try:
            future = self._pool(method).submit(caller, self.dispatch, method, params)
        except RuntimeError:  # the pool is shut down: the daemon stops
            raise Dropped from None
        try:
            return future.result()
        except CancelledError:
            raise Dropped from None

    async def _call(self, caller: object, method: Any, params: Any) -> Any:
        """The method's result; `Dropped` when it was dropped unstarted (its client left, or the daemon stops)."""
        if isinstance(method, str) and LANES.get(method) == "inline":
            return self.dispatch(method, params)
        future = self._pool(method).submit(caller, self.dispatch, method, params)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if future.cancelled():
                raise Dropped from None
            raise

    async def _handle(self, message: Message, writer: asyncio.StreamWriter, caller: object) -> None:
        if isinstance(message, Call):
            try:
                result = await self._call(caller, message.method, message.params)
                reply = session.reply(message.msgid, result)
            except RPCError as exc:
                reply = session.error_reply(message.msgid, exc.code, exc.message)
            except Dropped:
                return
            except Exception as exc:
                log.exception("method failed", method=str(message.method)[:64])
                reply = session.error_reply(message.msgid, "internal_error", f"{type(exc).__name__}: {exc}")
        elif isinstance(message, Notice):
            try:
                await self._call(caller, message.method, message.params)
            except Exception as exc:
                log.warning("notification failed", method=str(message.method)[:64], error=str(exc))
            return
        elif isinstance(message, Malformed) and message.msgid is not None:
            reply = session.error_reply(message.msgid, "invalid_request", message.reason)
        else:  # nothing to answer it by (a reply sent to the daemon, a bad msgid): say so on the connection
            reply = session.fatal(
                "invalid_request", "expected [0, msgid, method, params] with a msgid from 0 to 2**32-1"
            )
        if not writer.is_closing():
            writer.write(reply)
            await writer.drain()
