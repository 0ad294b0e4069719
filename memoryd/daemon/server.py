"""`memoryd run`: one process per user that owns every index, serves the socket and follows the files."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import gc
import os
import resource
import signal
import socket
import stat
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import structlog

from memoryd import heap
from memoryd.config import Config
from memoryd.daemon.manager import Manager
from memoryd.daemon.methods import dispatch
from memoryd.daemon.metrics import Metrics, MetricsServer
from memoryd.daemon.rpc import RPCServer
from memoryd.store.backend import limit_process_memory
from memoryd.store.lock import Locked, OwnerLock, data_dir_lock_path
from memoryd.web.server import TOKEN_FILE, WebServer, write_token

log = structlog.get_logger("memoryd.daemon")


class StartupError(RuntimeError):
    """The daemon cannot start; the message names the path and what to do."""


class AlreadyRunning(StartupError):
    """Another daemon owns the socket."""


MAX_SOCKET_PATH_BYTES = 103 if sys.platform == "darwin" else 107  # sun_path, less its closing NUL


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


def check_socket_path(path: Path) -> None:
    """Refuse a socket path the OS cannot bind, before anything else starts."""
    size = len(os.fsencode(str(path)))
    if size > MAX_SOCKET_PATH_BYTES:
        raise StartupError(
            f"socket path {path} is {size} bytes; Unix sockets allow {MAX_SOCKET_PATH_BYTES}."
            " Choose a shorter one with --socket or MEMORYD_SOCKET"
        )


def prepare_socket_dir(path: Path) -> None:
    """Create the socket's folder 0700. A folder that already exists (say /tmp) is never re-permissioned."""
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise StartupError(f"{parent} is not a folder, so the socket {path} cannot be made there; choose --socket")
    if not parent.exists():
        try:
            parent.mkdir(parents=True, mode=0o700)
            os.chmod(parent, 0o700)
        except OSError as exc:
            raise StartupError(f"cannot create the socket folder {parent}: {exc.strerror or exc}") from None


def _open_lock(lock_path: Path) -> int:
    """The lock file, opened without following a symlink and only if it is a regular file."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StartupError(
                f"lock file {lock_path} is a symlink; memoryd will not write through it. Remove it"
            ) from None
        raise StartupError(f"cannot open the lock file {lock_path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StartupError(f"lock file {lock_path} is not a regular file. Remove it")
    return fd


def _clear_stale_socket(path: Path) -> None:
    """Remove a socket nobody answers on; anything else at the path is the user's and is never touched."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a symlink" if stat.S_ISLNK(mode) else "a file"
        raise StartupError(
            f"{path} is {kind}, not a socket; memoryd will not delete it. Move it away or choose another --socket"
        )
    if _socket_alive(path):
        raise AlreadyRunning(f"another memoryd is answering on {path}")
    log.info("removing stale socket", path=str(path))
    path.unlink()


def check_data_dir(config: Config) -> None:
    """Every index folder must exist and be writable, and every index path be a file or nothing, or the daemon
    says which one and why."""
    for agent in config.agents:
        if agent.store.exists() and not agent.store.is_file():
            raise StartupError(
                f"the index path {agent.store} of agent '{agent.id}' is not a file; move it away or set another store"
            )
    for folder in dict.fromkeys(agent.store.parent for agent in config.agents):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / f".memoryd-write-test-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise StartupError(
                f"cannot write to the index folder {folder}: {exc.strerror or exc}."
                " Fix its permissions or choose another --data-dir"
            ) from None


PRIVATE_DIR = 0o700
INDEX_SUFFIXES = ("", "-wal", "-shm", "-journal")


def keep_private(config: Config) -> None:
    """Make what an older memoryd left readable by other users (the data dir 0755, indexes 0644) private: the index
    holds every note and transcript it read. New files are private by the daemon's umask."""
    inside = [a.store for a in config.agents if a.store.is_relative_to(config.data_dir)]
    ours = [folder for store in inside for folder in store.parents if folder.is_relative_to(config.data_dir)]
    indexes = [Path(f"{a.store}{suffix}") for a in config.agents for suffix in INDEX_SUFFIXES]
    for path in dict.fromkeys([config.data_dir, *ours, *indexes]):
        with contextlib.suppress(OSError):
            found = path.lstat()
            if found.st_uid == os.getuid() and not stat.S_ISLNK(found.st_mode) and found.st_mode & 0o077:
                os.chmod(path, stat.S_IMODE(found.st_mode) & ~0o077)
                log.info("made private", path=str(path))


@contextlib.contextmanager
def own_data_dir(config: Config) -> Iterator[None]:
    """Hold the data dir for the daemon's life: a second daemon on it (whatever its socket) refuses to start
    before it opens an index, and clients read the holder's socket from the lock to find this daemon."""
    config.data_dir.mkdir(parents=True, mode=PRIVATE_DIR, exist_ok=True)
    keep_private(config)
    try:
        lock = OwnerLock(
            data_dir_lock_path(config.data_dir), f"the data dir {config.data_dir}", socket=str(config.socket)
        )
    except Locked as exc:
        raise AlreadyRunning(f"{exc}. Stop that daemon, or give this one another --data-dir") from None
    except OSError as exc:
        raise StartupError(f"cannot lock the data dir {config.data_dir}: {exc.strerror or exc}") from None
    with lock:
        yield


def _open_agents(manager: Manager) -> None:
    try:
        manager.start()
    except Locked as exc:
        raise AlreadyRunning(f"{exc}. Stop that daemon, or configure another store for this agent") from None


@contextlib.contextmanager
def single_instance(path: Path) -> Iterator[None]:
    """Hold a lock beside the socket for the daemon's life; replace a stale socket, never a live one."""
    check_socket_path(path)
    prepare_socket_dir(path)
    lock_path = path.with_name(path.name + ".lock")
    fd = _open_lock(lock_path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlreadyRunning(f"another memoryd is running on {path}") from None
        _clear_stale_socket(path)
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
    # a scrape's status goes through the RPC lanes, as the web page's calls do: their threads' store connections
    # are kept, where a scrape's own thread would open new ones each time
    metrics = Metrics(lambda: server.call_from("metrics", "status", [{}])) if config.metrics_port else None
    answer = partial(dispatch, manager)
    server = RPCServer(config.socket, metrics.timed(answer) if metrics is not None else answer)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, lambda: loop.run_in_executor(None, manager.reload))
    await server.start()
    log.info("serving", socket=str(config.socket), agents=[a.id for a in config.agents], pid=os.getpid())
    web = _start_web(config, manager, server)
    exporter = _start_metrics(config, manager, metrics)
    try:
        await stop.wait()
        log.info("stopping")
    finally:
        manager.begin_stop()  # first, so that calls waiting on jobs return before the server closes
        for front in (web, exporter):
            if front is not None:
                front.close()
        await server.close()


class _NotServed(Exception):
    """Why a front (the web page, the metrics) is not served; said in status, while the socket serves all the same."""


def _start_web(config: Config, manager: Manager, server: RPCServer) -> WebServer | None:
    """The local web page, unless configured off."""

    def make() -> WebServer:
        if not config.ui:
            raise _NotServed("off ([daemon] ui = false)")
        try:
            token = write_token(config.data_dir)
        except OSError as exc:
            why = f"cannot write the page's token {config.data_dir / TOKEN_FILE}: {exc.strerror or exc}"
            raise _NotServed(why) from None
        try:
            return WebServer(config.ui_port, token, server.call_from)
        except OSError as exc:
            raise _NotServed(f"port {config.ui_port}: {exc.strerror or exc}; set [daemon] ui_port") from None

    web, manager.ui = _front("web page", make)
    if web is not None:
        manager.ui["token_file"] = str(config.data_dir / TOKEN_FILE)
    return web


def _start_metrics(config: Config, manager: Manager, metrics: Metrics | None) -> MetricsServer | None:
    """The metrics endpoint where configured."""

    def make() -> MetricsServer:
        if metrics is None:
            raise _NotServed("off ([daemon] metrics_port = 0)")
        try:
            return MetricsServer(config.metrics_port, metrics, config.metrics_users)
        except KeyError as exc:
            raise _NotServed(f"[daemon] metrics_users: no local user {exc.args[0]}") from None
        except OSError as exc:
            raise _NotServed(f"port {config.metrics_port}: {exc.strerror or exc}; set [daemon] metrics_port") from None

    exporter, manager.metrics = _front("metrics", make)
    return exporter


F = TypeVar("F", WebServer, MetricsServer)


def _front(name: str, make: Callable[[], F]) -> tuple[F | None, dict[str, Any]]:
    """Start a front: it, and what status says of it (`{url, error}`)."""
    try:
        front = make()
    except _NotServed as exc:
        if not str(exc).startswith("off ("):
            log.warning(f"{name} not served", error=str(exc))
        return None, {"url": None, "error": str(exc)}
    front.start()
    return front, {"url": front.url, "error": None}


GIL_SWITCH_SECONDS = 0.0005  # Python's default, 5 ms, let a sync's Python work hold up each step of a search
MALLOC_ARENAS = 2  # glibc's default, 8 per core, left what a burst of searches freed scattered over 16 arenas
MALLOC_MMAP_BYTES = 1 << 20
MALLOC_TRIM_BYTES = 4 << 20


def _process_settings() -> None:
    """Open files up to the hard limit (each client is a descriptor), a file-size limit that fails a write
    (EFBIG) instead of killing the daemon (SIGXFSZ), few malloc arenas with fixed thresholds, and a short GIL
    switch interval: a search gives the GIL back at every SQLite call and waited up to 5 ms to get it again each
    time while a sync chunked a large note (keyword p99 100 ms -> under 10 ms, measured with research.faults)."""
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and wanted > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    heap.cap_arenas(MALLOC_ARENAS)
    heap.fix_thresholds(MALLOC_MMAP_BYTES, MALLOC_TRIM_BYTES)


def run(config: Config, *, watch: bool = True) -> None:
    """Serve until SIGTERM/SIGINT; raises AlreadyRunning when the socket is taken."""
    _process_settings()
    os.umask(0o077)  # indexes, embedding caches, logs and new notes: nothing the daemon writes is for other users
    limit_process_memory(config.sqlite_memory_mb)
    with single_instance(config.socket), own_data_dir(config):
        check_data_dir(config)
        manager = Manager(config, watch=watch)
        try:
            _open_agents(manager)
            gc.freeze()  # what start-up made lives as long as the daemon: later collections need not scan it
            asyncio.run(_serve(config, manager))
        finally:
            manager.close()
            log.info("stopped")
