"""Ownership of an index (and of a data dir): an OS lock that dies with its process, and who holds it.

Two processes that write one SQLite index each believe the other's rows are stale and delete them, so a second
owner is refused before it reads anything. The lock file also says who holds it (pid, socket), which the
refusal names and which clients read to find the running daemon instead of starting another."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from memoryd.durable import private_folder
from memoryd_client.protocol.paths import DATA_DIR_LOCK, read_holder


class Locked(RuntimeError):
    """Another process owns this index or data dir; `holder` says who, as far as its lock file tells."""

    def __init__(self, what: str, path: Path, holder: dict[str, Any]) -> None:
        self.path = path
        self.holder = holder
        pid = holder.get("pid")
        who = f"memoryd pid {pid}" if pid else "another process"
        socket = holder.get("socket")
        where = f" (socket {socket})" if socket else ""
        super().__init__(f"{what} is in use by {who}{where}; one process owns it at a time (lock {path})")


class OwnerLock:
    """An exclusive flock on `path`, held until `release` (or the process's death)."""

    def __init__(self, path: Path, what: str, **holder: Any) -> None:
        self.path = path
        self.fd: int | None = None
        fd = _open(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise Locked(what, path, read_holder(path)) from None
            raise
        info = {"pid": os.getpid(), "started": time.time(), **{k: v for k, v in holder.items() if v is not None}}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self.fd = fd

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # a lock file left behind names nobody
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> OwnerLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _open(path: Path) -> int:
    """The lock file, created 0600, never through a symlink, and only if it is a regular file."""
    private_folder(path.parent)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, f"lock file {path} is a symlink; memoryd will not write through it") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"lock file {path} is not a regular file")
    return fd


def index_lock_path(store: Path) -> Path:
    return store.with_name(store.name + ".lock")


def data_dir_lock_path(data_dir: Path) -> Path:
    return data_dir / DATA_DIR_LOCK  # clients read it to find the running daemon (protocol.paths.running_daemon)
