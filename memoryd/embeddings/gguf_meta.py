"""memoryd's own keys in a GGUF file: how a model wants its text prepared before llama.cpp sees it.

Any GGUF may carry them (a `model_path` model converted elsewhere can add them with the `gguf` package):
- `memoryd.query_prefix` / `memoryd.document_prefix`: text put before queries and documents (E5: "query: ",
  "passage: ");
- `memoryd.normalizer`: a JSON object mapping a decimal codepoint to its replacement, applied character by
  character (for models whose tokenizer normalisation llama.cpp cannot read from the file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

QUERY_PREFIX_KEY = "memoryd.query_prefix"
DOCUMENT_PREFIX_KEY = "memoryd.document_prefix"
NORMALIZER_KEY = "memoryd.normalizer"


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


def write_memoryd_metadata(writer: Any, *, query_prefix: str, document_prefix: str, normalizer: str = "") -> None:
    writer.add_string(QUERY_PREFIX_KEY, query_prefix)
    writer.add_string(DOCUMENT_PREFIX_KEY, document_prefix)
    if normalizer:
        writer.add_string(NORMALIZER_KEY, normalizer)


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
