"""Rewriting a note in place of an editor that may save it at the same moment, losing neither side's text.

A note is replaced by writing the new text beside it and *exchanging* the two names in one step (Linux
`renameat2(RENAME_EXCHANGE)`, macOS `renamex_np(RENAME_SWAP)`): the file taken out of the note's place is then
looked at. If it is the one that was read, nothing came between; if an editor saved meanwhile, it is the editor's
text, and the change is made again on it and exchanged in turn. Where the system cannot exchange names, the note
is checked unchanged just before an ordinary rename (a window of microseconds instead of none)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path

from memoryd.durable import fsync_dir

MAX_ROUNDS = 20  # an editor saving over and over: give up rather than spin
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS sys/stdio.h


class NoteChanged(RuntimeError):
    """The note kept changing while it was being rewritten; nothing of this change was kept."""


Signature = tuple[int, int, int, int]


def signature(stat: os.stat_result) -> Signature:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _load_exchange() -> Callable[[Path, Path], bool] | None:
    """A function exchanging two paths atomically (True when it did), or None on a system without one."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        call = libc.renameat2
        call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]

        def exchange(a: Path, b: Path) -> bool:
            if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
                return True
            return _unsupported(ctypes.get_errno(), a, b)

        return exchange
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        swap = libc.renamex_np
        swap.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]

        def exchange(a: Path, b: Path) -> bool:
            if swap(os.fsencode(a), os.fsencode(b), _RENAME_SWAP) == 0:
                return True
            return _unsupported(ctypes.get_errno(), a, b)

        return exchange
    return None


def _unsupported(code: int, a: Path, b: Path) -> bool:
    """False when the file system cannot exchange names (then a checked rename is used); raise other errors."""
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


_exchange = _load_exchange()


def rewrite(target: Path, change: Callable[[bytes], bytes]) -> tuple[bytes, bytes]:
    """Replace `target`'s bytes by `change(bytes)` atomically and durably, keeping its mode; returns (before,
    after) as finally applied. `change` may raise to write nothing; it is called again on an editor's text when a
    save lands during the rewrite. An editor's save taken out of the note's place is kept until the next exchange
    has put a text made from it in, and on any failure (`change` refusing it, a full disk, the rounds running out)
    it goes back in place before the error is raised: nothing of this change is kept, and nothing of the editor's
    is lost. Refuses a symlink (the caller checked the folders above)."""
    current, stat = _read(target)
    mode, expected = stat.st_mode & 0o7777, signature(stat)
    new = change(current)
    if new == current:
        return current, new
    theirs: Path | None = None  # an editor's save taken out of the note's place, its text not in place yet
    mine: Signature = expected  # what the last exchange put in the note's place
    try:
        for _ in range(MAX_ROUNDS):
            written = _write_beside(target, new, mode)
            temp: Path | None = written  # deleted at the end of the round, unless it holds an editor's save
            try:
                ours = signature(os.stat(written, follow_symlinks=False))  # kept by the exchange (a rename)
                if _exchange is None or not _exchange(written, target):
                    if signature(os.stat(target, follow_symlinks=False)) != expected:
                        current, stat = _read(target)
                        expected, new = signature(stat), change(current)
                        continue
                    os.replace(written, target)
                    temp = None
                    fsync_dir(target.parent)
                    return current, new
                mine = ours
                if signature(os.stat(written, follow_symlinks=False)) == expected:
                    fsync_dir(target.parent)
                    return current, new  # the editor's earlier save (if any) is in `new` now: it may go
                # an editor saved between the read and the exchange: its text is at `temp` now, ours in the note
                if theirs is not None:
                    _unlink(theirs)  # an earlier save of the editor's, which its newer save replaced
                theirs, temp = written, None
                current, expected = theirs.read_bytes(), mine  # the next exchange must take out this round's text
                new = change(current)
            finally:
                if temp is not None:
                    _unlink(temp)
        raise NoteChanged(f"{target.name} kept changing; the edit was not made, try again")
    except BaseException as exc:
        if theirs is not None:
            kept, theirs = theirs, None  # not deleted unless put back: it may hold the only copy of the editor's text
            try:
                _put_back(kept, target, mine)
            except BaseException:
                raise NoteChanged(
                    f"{target.name}: the edit was not made ({exc}), and an editor's save could not be put back in "
                    f"its place: it is kept in {kept}"
                ) from exc
            theirs = kept  # put back: it holds this change's text now
        raise
    finally:
        if theirs is not None:
            _unlink(theirs)  # its text is in place, or (put back) it holds this change's text


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _put_back(theirs: Path, target: Path, mine: Signature) -> None:
    """Undo an exchange whose change cannot be made on the editor's text: the editor's text goes back in place
    (and if the editor saved yet again meanwhile, that newer save does). Raises NoteChanged, leaving `theirs`
    holding an editor's text, when the editor kept saving."""
    assert _exchange is not None
    for _ in range(MAX_ROUNDS):
        _exchange(theirs, target)
        if signature(os.stat(theirs, follow_symlinks=False)) == mine:
            fsync_dir(target.parent)
            return
        mine = signature(os.stat(target, follow_symlinks=False))  # the older save is in place; the newer comes next
    raise NoteChanged(f"{target.name} kept changing while an editor's save was being put back")


def _read(target: Path) -> tuple[bytes, os.stat_result]:
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        stat = os.fstat(fd)
        chunks = []
        while block := os.read(fd, 1 << 20):
            chunks.append(block)
        return b"".join(chunks), stat
    finally:
        os.close(fd)


def _write_beside(target: Path, data: bytes, mode: int) -> Path:
    """A new file next to `target` holding `data`, fsynced, with `target`'s mode (not the umask's)."""
    temp = target.with_name(f".{target.name}.memoryd-{secrets.token_hex(6)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    os.close(fd)
    return temp


def remove(target: Path, expected: bytes) -> bool:
    """Delete a note if it still holds `expected` (a note changed since it was read stays); whether it did."""
    try:
        current, stat = _read(target)
    except FileNotFoundError:
        return False
    if current != expected:
        return False
    aside = target.with_name(f".{target.name}.memoryd-{secrets.token_hex(6)}")
    os.rename(target, aside)
    if signature(os.stat(aside, follow_symlinks=False)) != signature(stat):  # saved in between: put it back
        _restore(aside, target)
        return False
    os.unlink(aside)
    fsync_dir(target.parent)
    return True


def _restore(aside: Path, target: Path) -> None:
    """Put a note taken aside back in its place without overwriting a save that landed there meanwhile: a link
    fails rather than replace a file (a newer save then stands, and the older one it replaced goes)."""
    try:
        os.link(aside, target)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links: a checked rename (a window of microseconds)
        if not os.path.lexists(target):
            os.rename(aside, target)
            fsync_dir(target.parent)
            return
    os.unlink(aside)
    fsync_dir(target.parent)


def create(target: Path, data: bytes, mode: int = 0o600) -> None:
    """Write a note that must not exist yet (an undone deletion), durably."""
    temp = _write_beside(target, data, mode)
    try:
        os.link(temp, target)  # fails if a note appeared there meanwhile
    finally:
        os.unlink(temp)
    fsync_dir(target.parent)
