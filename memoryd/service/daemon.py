"""`memoryd run`: one process per user that owns every index, serves the socket and follows the files."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import socket
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import structlog

from memoryd.config import Config
from memoryd.service.manager import Manager
from memoryd.service.methods import dispatch
from memoryd.service.rpc import RPCServer

log = structlog.get_logger("memoryd.daemon")


class AlreadyRunning(RuntimeError):
    """Another daemon owns the socket."""


def _socket_alive(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def prepare_socket_dir(path: Path) -> None:
    """Create the socket's folder 0700. A folder that already exists (say /tmp) is never re-permissioned."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700)
        os.chmod(path.parent, 0o700)


@contextlib.contextmanager
def single_instance(path: Path) -> Iterator[None]:
    """Hold a lock beside the socket for the daemon's life; replace a stale socket, never a live one."""
    prepare_socket_dir(path)
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlreadyRunning(f"another memoryd is running on {path}") from None
        if path.exists() or path.is_symlink():
            if _socket_alive(path):
                raise AlreadyRunning(f"another memoryd is answering on {path}")
            log.info("removing stale socket", path=str(path))
            path.unlink()
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


async def _serve(config: Config, manager: Manager) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    server = RPCServer(config.socket, partial(dispatch, manager))
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, lambda: loop.run_in_executor(None, manager.reload))
    await server.start()
    log.info("serving", socket=str(config.socket), agents=[a.id for a in config.agents], pid=os.getpid())
    try:
        await stop.wait()
        log.info("stopping")
    finally:
        await server.close()


def run(config: Config, *, watch: bool = True) -> None:
    """Serve until SIGTERM/SIGINT; raises AlreadyRunning when the socket is taken."""
    with single_instance(config.socket):
        manager = Manager(config, watch=watch)
        try:
            manager.start()
            asyncio.run(_serve(config, manager))
        finally:
            manager.close()
            with contextlib.suppress(FileNotFoundError):
                config.socket.unlink()
            log.info("stopped")
