"""Durable file operations: appends that are all-or-nothing, and directory fsyncs after renames."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def private_folder(path: Path) -> None:
    """Create `path` and every missing folder above it 0700 (mkdir's `mode` covers only the last one)."""
    missing = []
    step = path
    while not step.exists() and step != step.parent:
        missing.append(step)
        step = step.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)


def private_file(path: Path) -> None:
    """Create `path` empty and 0600 if it does not exist, so that what opens it next (SQLite, which makes its WAL
    and SHM with the database's mode) never makes it readable by others, whatever the umask."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))


def append_durably(target: Path, data: bytes) -> None:
    """Append and fsync; on any failure (a full disk) cut the file back so nothing half-written stays, and remove
    a file this call created. A symlink at `target` is refused (O_NOFOLLOW), so a write cannot be redirected."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        created = True
    except FileExistsError:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        created = False
    original_size = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError:
        try:
            if created:
                os.unlink(target)
            else:
                os.ftruncate(fd, original_size)
                os.fsync(fd)
        except OSError:
            pass
        raise
    finally:
        os.close(fd)
    fsync_dir(target.parent)


def replace_privately(target: Path, data: bytes) -> None:
    """Replace `target` by a file holding `data` (0600), atomically and durably: written beside it under a name of
    its own, fsynced, renamed over it. On any failure (a full disk) the old file stands and no temp file stays."""
    temp = target.with_name(f".{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    fsync_dir(target.parent)
