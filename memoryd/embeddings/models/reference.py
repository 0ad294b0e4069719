"""Check a converted GGUF against the reference model's own vectors for fixed texts (shipped beside this module).

A conversion that drops a layer, a norm offset or a projection, or a tokenizer that splits differently, still loads
and still embeds: only a comparison with the model its maker published shows it. Each text must come out with the
reference tokenizer's ids and a cosine of at least `MIN_COSINE` to the reference vector.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MIN_COSINE = 0.99


@dataclass(frozen=True)
class Agreement:
    cosines: tuple[float, ...]
    token_mismatches: tuple[int, ...]  # indexes of texts the GGUF tokenized otherwise
    prompts: tuple[str, str]  # what the GGUF puts before queries and documents
    expected_prompts: tuple[str, str]  # what the reference model was given

    @property
    def worst(self) -> float:
        return min(self.cosines)

    @property
    def ok(self) -> bool:
        return self.worst >= MIN_COSINE and not self.token_mismatches and self.prompts == self.expected_prompts


def reference_file(model: str) -> Path:
    return Path(__file__).with_name(f"{model}.reference.json")


def compare(gguf_path: Path, reference: Path) -> Agreement:
    """Embed every reference text with the GGUF (memoryd's own prefixes from the file) and compare."""
    from memoryd.embeddings.local import LocalEmbedder

    document = json.loads(reference.read_text(encoding="utf-8"))
    rows = document["texts"]
    embedder = LocalEmbedder(gguf_path)
    try:
        cosines, mismatches = [], []
        for index, row in enumerate(rows):
            expected = np.frombuffer(base64.b64decode(row["vector"]), dtype="<f2").astype(np.float32)
            query = row["role"] == "query"
            prepared = embedder.text.query(row["text"]) if query else embedder.text.document(row["text"])
            if embedder.tokenize(prepared) != row["ids"]:
                mismatches.append(index)
            got = embedder.embed_query(row["text"]) if query else embedder.embed_documents([row["text"]])[0]
            cosines.append(float(got @ expected / (np.linalg.norm(got) * np.linalg.norm(expected) or 1.0)))
    finally:
        embedder.close()
    expected_prompts = (str(document["query_prefix"]), str(document["document_prefix"]))
    return Agreement(tuple(round(c, 5) for c in cosines), tuple(mismatches), embedder.prompts, expected_prompts)
