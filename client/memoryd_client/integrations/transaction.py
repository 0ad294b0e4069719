"""All of an install (or a remove) or none of it: every file is snapshotted before its first change, and a failure
puts every snapshot back, deletes what was created and runs the undo steps of what ran outside memoryd."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from memoryd_client.integrations.files import (
    PRIVATE_FILE,
    PRIVATE_FOLDER,
    IntegrationError,
    read_regular,
    replace_file,
)


@dataclass(frozen=True)
class Snapshot:
    target: str  # where the file really is: a symlink's target, so that the link stays a link
    data: bytes | None  # None: there was no file
    mode: int
    owner: tuple[int, int] | None


class Transaction:
    def __init__(self) -> None:
        self._snapshots: dict[str, Snapshot] = {}
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self._changed: set[str] = set()

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if error is None:
            return
        left = self.rollback()
        if not isinstance(error, (OSError, ValueError)):
            return
        outcome = "nothing was changed" if not left else "could not put back " + "; ".join(left)
        message = error.message if isinstance(error, IntegrationError) else str(error)
        raise IntegrationError(f"{message}; {outcome}") from error

    def read(self, path: str) -> bytes | None:
        """The file's bytes now (None: no file); the first read snapshots it, to be put back on failure."""
        fresh = path not in self._snapshots
        snapshot = self._snapshot(path)
        return snapshot.data if fresh else read_regular(snapshot.target)

    def write(self, path: str, data: bytes, new_mode: int = PRIVATE_FILE) -> None:
        """Replace the file's bytes where it lives, keeping its mode and owner; a new file gets new_mode."""
        snapshot = self._snapshot(path)
        if read_regular(snapshot.target) == data:
            return
        mode = snapshot.mode if snapshot.data is not None else new_mode
        replace_file(snapshot.target, data, mode, snapshot.owner)
        self._remember(path, snapshot)

    def delete(self, path: str) -> None:
        """Delete a regular file (never a symlink: it is the user's)."""
        if os.path.islink(path):
            raise IntegrationError(f"{path} is a symbolic link: memoryd does not delete it")
        snapshot = self._snapshot(path)
        if not os.path.lexists(snapshot.target):
            return
        try:
            os.unlink(snapshot.target)
        except OSError as exc:
            raise IntegrationError(f"{path}: cannot delete it ({exc.strerror})") from None
        self._remember(path, snapshot)

    def make_folders(self, folder: str) -> None:
        """Create folder and its missing parents, private to the user."""
        if os.path.isdir(folder):
            return
        parent = os.path.dirname(folder)
        if parent != folder:
            self.make_folders(parent)
        try:
            os.mkdir(folder, PRIVATE_FOLDER)
        except OSError as exc:
            raise IntegrationError(f"{folder}: cannot create it ({exc.strerror})") from None
        self._undo.append((folder, lambda: os.rmdir(folder)))

    def remove_folder(self, folder: str) -> None:
        mode = stat.S_IMODE(os.lstat(folder).st_mode)
        try:
            os.rmdir(folder)
        except OSError as exc:
            raise IntegrationError(f"{folder}: cannot delete it ({exc.strerror})") from None
        self._undo.append((folder, lambda: os.mkdir(folder, mode)))

    def undo_with(self, what: str, undo: Callable[[], None]) -> None:
        """On failure, run undo (for what happened outside these files: another program's own CLI)."""
        self._undo.append((what, undo))

    def rollback(self) -> list[str]:
        """Undo every change, the last first; what could not be undone."""
        left = []
        while self._undo:
            what, undo = self._undo.pop()
            try:
                undo()
            except (OSError, ValueError) as exc:
                left.append(f"{what} ({exc})")
        return left

    def _snapshot(self, path: str) -> Snapshot:
        if path not in self._snapshots:
            target = os.path.realpath(path)
            data = read_regular(target)
            mode, owner = PRIVATE_FILE, None
            if data is not None:
                info = os.stat(target)
                mode, owner = stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid)
            self._snapshots[path] = Snapshot(target, data, mode, owner)
        return self._snapshots[path]

    def _remember(self, path: str, snapshot: Snapshot) -> None:
        if path not in self._changed:
            self._changed.add(path)
            self._undo.append((path, lambda: _restore(snapshot)))


def _restore(snapshot: Snapshot) -> None:
    if snapshot.data is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(snapshot.target)
    else:
        replace_file(snapshot.target, snapshot.data, snapshot.mode, snapshot.owner)
