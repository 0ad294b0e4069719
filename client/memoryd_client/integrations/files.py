"""The file operations installers are built from: a file read only when it is a regular file, replaced atomically
where it really lives (a symlink's target) with its mode and owner kept, folders created private."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile

MAX_BYTES = 16 * 1024 * 1024  # a platform's config, far beyond any real one
PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700
PARTIAL = ".memoryd-partial"  # a file being written, renamed into place once whole


class IntegrationError(ValueError):
    """What went wrong, naming the file (memctl prints it as an error)."""

    @property
    def message(self) -> str:
        return str(self)


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def read_regular(path: str) -> bytes | None:
    """The bytes of the file at path (through a symlink), None when there is none; an error for anything that is
    not a regular file, as reading a FIFO or a device would block or never end."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise IntegrationError(f"{path} is a symbolic link to nothing: fix or remove it") from None
        return None
    except OSError as exc:
        raise IntegrationError(f"{path}: cannot read it ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise IntegrationError(f"{path} is not a regular file")
    if info.st_size > MAX_BYTES:
        raise IntegrationError(f"{path} is over {MAX_BYTES // 1024 // 1024} MB: not a config memoryd will edit")
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise IntegrationError(f"{path}: cannot read it ({exc.strerror})") from None


def decode(path: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntegrationError(f"{path} is not UTF-8 text (byte {exc.start}): fix it, then run this again") from None


def replace_file(path: str, data: bytes, mode: int, owner: tuple[int, int] | None = None) -> None:
    """Write data to path all at once: a temporary file beside it, renamed over it (nothing is left behind)."""
    folder, name = os.path.split(path)
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=PARTIAL, dir=folder or ".")
    except OSError as exc:
        raise IntegrationError(f"{path}: cannot write it ({exc.strerror})") from None
    try:
        with os.fdopen(handle, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if owner is not None and hasattr(os, "chown"):
            with contextlib.suppress(OSError):  # only root may give a file away; the mode is kept either way
                os.chown(partial, *owner)
        os.chmod(partial, mode)
        os.replace(partial, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise IntegrationError(f"{path}: cannot write it ({exc.strerror})") from None


def partials(path: str) -> list[str]:
    """What a process killed while writing path (where it really lives) left beside it."""
    folder, name = os.path.split(os.path.realpath(path))
    try:
        found = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, f) for f in found if f.startswith(f".{name}.") and f.endswith(PARTIAL)]


def missing_folders(folder: str) -> list[str]:
    """The folders that creating folder would create, outermost first."""
    missing = []
    while not os.path.lexists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return missing[::-1]
