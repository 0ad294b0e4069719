"""The default provider: a local GGUF embedding model run by llama.cpp, no key and no network."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from memoryd.embeddings.base import EmbeddingError, clean_vectors, fingerprint
from memoryd.embeddings.gguf_meta import read_preparation

CONTEXT = 512


class LocalEmbedder:
    """One chunk per llama.cpp call: chunks batched together share one non-causal batch, whose cost grows
    quadratically, so separate calls are faster. flash_attn halves the time on CPU."""

    provider = "local"

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        n_threads: int | None = None,
        *,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
    ) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF model at {path} (run: memoryd model prepare)")
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbeddingError("llama-cpp-python is not installed (pip install 'memoryd[local]')") from exc
        self._lock = threading.Lock()
        try:
            self._llm = Llama(
                model_path=str(path),
                embedding=True,
                n_ctx=CONTEXT,
                n_batch=CONTEXT,
                n_ubatch=CONTEXT,
                flash_attn=True,
                n_threads=n_threads or os.cpu_count(),
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise EmbeddingError(f"llama.cpp could not load {path}: {exc}") from exc
        self.dims = int(self._llm.n_embd())
        own = read_preparation(self._llm.metadata)
        self.text = read_preparation(self._llm.metadata, query_prefix, document_prefix)
        self.model = path.name.removesuffix(".gguf")
        if (self.text.query_prefix, self.text.document_prefix) != (own.query_prefix, own.document_prefix):
            # other prefixes make other vectors: a distinct model name keeps them apart (and triggers a reindex)
            self.model += "+prefix-" + fingerprint(self.text.query_prefix + "\0" + self.text.document_prefix)[:8]
        self.key_fingerprint = fingerprint(_model_identity(path))
        self.path = path

    def _embed_one(self, text: str) -> np.ndarray:
        if not text.strip():
            return np.zeros(self.dims, dtype=np.float32)
        try:
            vector = self._llm.embed(text, normalize=False, truncate=True)
        except Exception as exc:  # llama.cpp raises plain RuntimeError/ValueError on decode failures
            raise EmbeddingError(f"local embedding failed: {exc}") from exc
        return np.asarray(vector, dtype=np.float32).reshape(-1)

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            rows = [self._embed_one(t) for t in texts]
        if not rows:
            return np.zeros((0, self.dims), dtype=np.float32)
        return clean_vectors(np.stack(rows), self.dims)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.text.document(t) if t.strip() else "" for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.text.query(text) if text.strip() else ""])[0]

    def close(self) -> None:
        with self._lock:
            llm, self._llm = getattr(self, "_llm", None), None
            if llm is not None:
                llm.close()


def _model_identity(path: Path) -> str:
    """The checksum recorded by `memoryd model prepare`, else size and mtime."""
    manifest = path.with_suffix(path.suffix + ".json")
    try:
        return json.loads(manifest.read_text())["sha256"]
    except (OSError, ValueError, KeyError):
        stat = path.stat()
        return f"{stat.st_size}:{stat.st_mtime_ns}"
