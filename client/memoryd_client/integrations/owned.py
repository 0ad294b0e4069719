"""What memoryd owns in a platform's folders: files it writes whole (a plugin's), written only over what memoryd
wrote there and removed only while they still hold what it wrote; files and folders it created, removed only once
nothing else is in them."""

from __future__ import annotations

import os
import stat

from memoryd_client.integrations.files import IntegrationError, digest, partials, read_regular
from memoryd_client.integrations.transaction import Transaction

MOVE_IT = "move it away, then install again"


def refuse_links(folders: list[str]) -> None:
    """A folder memoryd installs into as its own must be a folder, not a link into someone else's."""
    for folder in folders:
        if os.path.islink(folder):
            raise IntegrationError(f"{folder} is a symbolic link: memoryd installs in a folder of its own; {MOVE_IT}")
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise IntegrationError(f"{folder} is in the way (not a folder): {MOVE_IT}")


def check_ours(path: str, digests: list[str]) -> None:
    """Refuse to write over a file memoryd did not write (or that was changed since)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise IntegrationError(f"{path} is a symbolic link memoryd did not make: {MOVE_IT}")
    if not stat.S_ISREG(info.st_mode):
        raise IntegrationError(f"{path} is in the way (not a regular file): {MOVE_IT}")
    if digest(read_regular(path) or b"") not in digests:
        raise IntegrationError(f"{path} exists and memoryd did not write it (or it was changed since): {MOVE_IT}")


def remove_written(written: dict[str, list[str]], tx: Transaction) -> list[str]:
    """Delete the files that still hold what memoryd wrote; a line for each, and for each one left."""
    lines = []
    for path, digests in written.items():
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):
            lines.append(f"nothing from {path}: memoryd did not make what is there now, so it stays")
        elif digest(tx.read(path) or b"") in digests:
            tx.delete(path)
            lines.append(path)
        else:
            lines.append(f"nothing from {path}: it changed since memoryd wrote it, so it stays")
    return lines


def remove_partials(paths: list[str], tx: Transaction) -> list[str]:
    """Delete what an install killed while writing these files left beside them."""
    removed = []
    for partial in sorted({p for path in paths for p in partials(path)}):
        tx.delete(partial)
        removed.append(partial)
    return removed


def remove_folders(folders: list[str], tx: Transaction) -> list[str]:
    """Delete the folders memoryd created that are empty now, the deepest first."""
    removed = []
    for folder in sorted(folders, key=len, reverse=True):
        if _empty_folder(folder):
            tx.remove_folder(folder)
            removed.append(folder)
    return removed


def _empty_folder(folder: str) -> bool:
    try:
        return not os.path.islink(folder) and os.path.isdir(folder) and not os.listdir(folder)
    except OSError:
        return False


def leave_edited(path: str, text: str, left: str, empty: bool, new_files: list[str], tx: Transaction) -> list[str]:
    """Write what is left of a file memoryd edited; delete it when install created it and nothing else is in it."""
    if empty and path in new_files:
        tx.delete(path)
        return [path]
    if left != text:
        tx.write(path, left.encode("utf-8"))
    return []
