"""Google Gemini embeddings (`gemini-embedding-001`), with RETRIEVAL_QUERY vs RETRIEVAL_DOCUMENT task types."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from memoryd.embeddings.base import EmbeddingError, clean_vectors
from memoryd.embeddings.remote import RemoteEmbedder, request_json, with_retries

DEFAULT_BASE = "https://generativelanguage.googleapis.com"
TASKS = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class GeminiEmbedder(RemoteEmbedder):
    provider = "gemini"
    max_items = 100  # batchEmbedContents limit

    def _request(self, text: str, kind: str) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": f"models/{self.api_model}",
            "content": {"parts": [{"text": text}]},
            "taskType": TASKS[kind],
        }
        if self.requested_dims:
            request["outputDimensionality"] = self.requested_dims
        return request

    @property
    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._key}

    def _send(self, texts: list[str], kind: str) -> list[list[float]]:
        url = f"{self.base_url}/v1beta/models/{self.api_model}:batchEmbedContents"
        body = {"requests": [self._request(t, kind) for t in texts]}
        data = request_json("POST", url, self._headers, self.timeout, body)
        try:
            return [e["values"] for e in data["embeddings"]]
        except (KeyError, TypeError) as exc:
            raise EmbeddingError(f"gemini: unexpected response shape ({exc})") from None

    # -- asynchronous batch mode (large first indexes, half the price) -------------------------------

    def embed_batch_job(self, texts: list[str], timeout: float = 24 * 3600) -> np.ndarray:
        """Submit one asynchronous batch, poll it, and return its vectors in input order."""
        url = f"{self.base_url}/v1beta/models/{self.api_model}:asyncBatchEmbedContent"
        requests = [{"request": self._request(t, "document"), "metadata": {"key": str(i)}} for i, t in enumerate(texts)]
        body = {"batch": {"displayName": "memoryd", "inputConfig": {"requests": {"requests": requests}}}}
        created = with_retries(
            lambda: request_json("POST", url, self._headers, self.timeout, body), self.retries, "gemini batch create"
        )
        name = created.get("name") or (created.get("metadata") or {}).get("name")
        if not name:
            raise EmbeddingError("gemini batch: no batch name in the response")
        deadline = time.monotonic() + timeout
        while True:
            state_doc = with_retries(
                lambda: request_json("GET", f"{self.base_url}/v1beta/{name}", self._headers, self.timeout),
                self.retries,
                "gemini batch poll",
            )
            batch = state_doc.get("metadata", state_doc)
            state = batch.get("state", "")
            if state.endswith("SUCCEEDED"):
                return self._batch_vectors(state_doc, batch, len(texts))
            if state.endswith(("FAILED", "CANCELLED", "EXPIRED")):
                raise EmbeddingError(f"gemini batch {name} ended {state}")
            if time.monotonic() > deadline:
                raise EmbeddingError(f"gemini batch {name} did not finish in time")
            time.sleep(self.batch_poll_seconds)

    def _batch_vectors(self, doc: dict[str, Any], batch: dict[str, Any], count: int) -> np.ndarray:
        output = doc.get("response") or batch.get("output") or {}
        responses = output.get("inlinedResponses", output)
        if isinstance(responses, dict):
            responses = responses.get("inlinedResponses", [])
        vectors: list[Any] = [None] * count
        for position, item in enumerate(responses):
            key = int((item.get("metadata") or {}).get("key", position))
            embedding = (item.get("response") or {}).get("embedding") or {}
            if "values" not in embedding:
                raise EmbeddingError(f"gemini batch: request {key} failed: {item.get('error')}")
            vectors[key] = embedding["values"]
        if any(v is None for v in vectors):
            raise EmbeddingError("gemini batch: some results are missing")
        matrix = clean_vectors(vectors, self.dims)
        self.dims = self.dims or matrix.shape[1]
        return matrix
