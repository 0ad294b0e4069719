"""memoryd's own keys in a GGUF file: how a model wants its text prepared before llama.cpp sees it.

Any GGUF may carry them (a `model_path` model converted elsewhere can add them with the `gguf` package):
- `memoryd.query_prefix` / `memoryd.document_prefix`: text put before queries and documents (E5: "query: ",
  "passage: ");
- `memoryd.normalizer`: a JSON object mapping a decimal codepoint to its replacement, applied character by
  character (for models whose tokenizer normalisation llama.cpp cannot read from the file);
- `memoryd.tokenizer = "unigram"`: memoryd tokenizes (`unigram.py`, from the `memoryd.tokenizer.*` keys), and
  llama.cpp is told the model has no tokenizer (`tokenizer.ggml.model = "none"`).
"""

from __future__ import annotations

import json
import struct
import sys
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

QUERY_PREFIX_KEY = "memoryd.query_prefix"
DOCUMENT_PREFIX_KEY = "memoryd.document_prefix"
NORMALIZER_KEY = "memoryd.normalizer"
TOKENIZER_KEY = "memoryd.tokenizer"


@dataclass(frozen=True)
class TextPreparation:
    query_prefix: str = ""
    document_prefix: str = ""
    table: dict[int, str] = field(default_factory=dict)

    def query(self, text: str) -> str:
        return self.query_prefix + self.normalize(text)

    def document(self, text: str) -> str:
        return self.document_prefix + self.normalize(text)

    def normalize(self, text: str) -> str:
        return text.translate(self.table) if self.table else text


def write_memoryd_metadata(
    writer: Any, *, query_prefix: str | None, document_prefix: str | None, normalizer: str = "", tokenizer: str = ""
) -> None:
    """memoryd's keys; prefixes of None are left out (the model's family then says them: prompts.py)."""
    if query_prefix is not None:
        writer.add_string(QUERY_PREFIX_KEY, query_prefix)
    if document_prefix is not None:
        writer.add_string(DOCUMENT_PREFIX_KEY, document_prefix)
    if normalizer:
        writer.add_string(NORMALIZER_KEY, normalizer)
    if tokenizer:
        writer.add_string(TOKENIZER_KEY, tokenizer)


def write_out(writer: Any) -> None:
    """Header, metadata and tensors to disk, in the order GGUF wants them."""
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def read_preparation(metadata: dict[str, str]) -> TextPreparation:
    """How the model file says its text is to be prepared (nothing, for a GGUF without memoryd's keys)."""
    raw = metadata.get(NORMALIZER_KEY)
    return TextPreparation(
        query_prefix=metadata.get(QUERY_PREFIX_KEY, ""),
        document_prefix=metadata.get(DOCUMENT_PREFIX_KEY, ""),
        table={int(cp): rep for cp, rep in json.loads(raw).items()} if raw else {},
    )


# -- reading keys straight from the file: llama.cpp's metadata API gives scalars only, not the vocabulary ----------

_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


class GGUFFormatError(ValueError):
    """The file is not a GGUF file this reader understands."""


def _exactly(fh: BinaryIO, size: int) -> bytes:
    data = fh.read(size)
    if len(data) != size:
        raise GGUFFormatError("truncated GGUF metadata")
    return data


def _take(fh: BinaryIO, fmt: str) -> Any:
    return struct.unpack("<" + fmt, _exactly(fh, struct.calcsize("<" + fmt)))[0]


def _value(fh: BinaryIO, kind: int, keep: bool) -> Any:
    """One value; numeric arrays come back as `array`s, and values not kept are skipped unread."""
    if kind == _STRING:
        size = _take(fh, "Q")
        if not keep:
            fh.seek(size, 1)
            return None
        return _exactly(fh, size).decode("utf-8", "surrogateescape")
    if kind in _SCALARS:
        return _take(fh, _SCALARS[kind])
    if kind != _ARRAY:
        raise GGUFFormatError(f"unknown GGUF value type {kind}")
    item, count = _take(fh, "I"), _take(fh, "Q")
    if item in _SCALARS:
        values = array(_SCALARS[item])
        if not keep:
            fh.seek(count * values.itemsize, 1)
            return None
        values.frombytes(_exactly(fh, count * values.itemsize))
        if sys.byteorder == "big":
            values.byteswap()
        return values
    if item == _STRING:
        strings = [_value(fh, _STRING, keep) for _ in range(count)]
        return strings if keep else None
    raise GGUFFormatError(f"unsupported GGUF array of type {item}")


def read_keys(path: str | Path, keys: set[str]) -> dict[str, Any]:
    """The values of `keys` in a GGUF file's metadata (arrays included); missing keys are left out."""
    found: dict[str, Any] = {}
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise GGUFFormatError(f"{path} is not a GGUF file")
        _take(fh, "I")  # version
        _take(fh, "Q")  # tensors
        for _ in range(_take(fh, "Q")):
            key = _value(fh, _STRING, True)
            value = _value(fh, _take(fh, "I"), key in keys)
            if key in keys:
                found[key] = value
                if len(found) == len(keys):
                    break
    return found
