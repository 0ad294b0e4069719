"""OpenAI embeddings (`text-embedding-3-small`) through the `openai` package; any compatible server via base_url."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import numpy as np

from memoryd.embeddings.base import EmbeddingError, clean_vectors
from memoryd.embeddings.remote import RemoteEmbedder, TransientError, parse_retry_after, with_retries

DEFAULT_BASE = "https://api.openai.com/v1"


def _translate(exc: Exception) -> EmbeddingError:
    """openai exceptions -> ours; the SDK's own retries are off so that one policy applies to every provider."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
        message = f"HTTP {exc.status_code}: {str(exc.message)[:300]}"
        if exc.status_code == 429 or exc.status_code >= 500:
            return TransientError(message, retry_after)
        return EmbeddingError(message)
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return TransientError(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError | ValueError | TypeError | KeyError):
        return EmbeddingError(f"malformed response: {exc}")
    return EmbeddingError(f"{type(exc).__name__}: {exc}")


class OpenAIEmbedder(RemoteEmbedder):
    provider = "openai"
    max_items = 512  # the API takes 2048 inputs, but also caps tokens per request
    max_chars = 600_000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import openai

        self._client = openai.OpenAI(
            api_key=self._key or "unused", base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    def _send(self, texts: list[str], kind: str) -> list[list[float]]:
        extra: dict[str, Any] = {"dimensions": self.requested_dims} if self.requested_dims else {}
        try:
            response = self._client.embeddings.create(
                model=self.api_model, input=texts, encoding_format="float", **extra
            )
            return [d.embedding for d in sorted(response.data, key=lambda d: d.index)]
        except Exception as exc:  # every SDK failure is mapped to transient (retry) or final
            raise _translate(exc) from None

    def close(self) -> None:
        self._client.close()

    # -- asynchronous batch API (large first indexes, half the price) --------------------------------

    def embed_batch_job(self, texts: list[str], timeout: float = 24 * 3600) -> np.ndarray:
        """Upload a JSONL of requests, create a batch, poll it, download and order the results."""
        lines = []
        for start in range(0, len(texts), self.max_items):
            body: dict[str, object] = {
                "model": self.api_model,
                "input": texts[start : start + self.max_items],
                "encoding_format": "float",
            }
            if self.requested_dims:
                body["dimensions"] = self.requested_dims
            lines.append(json.dumps({"custom_id": str(start), "method": "POST", "url": "/v1/embeddings", "body": body}))
        payload = ("\n".join(lines) + "\n").encode()

        def call(what: str, fn: Any) -> Any:
            def attempt() -> Any:
                try:
                    return fn()
                except Exception as exc:
                    raise _translate(exc) from None

            return with_retries(attempt, self.retries, f"openai batch {what}")

        uploaded = call(
            "upload", lambda: self._client.files.create(file=("memoryd.jsonl", io.BytesIO(payload)), purpose="batch")
        )
        batch = call(
            "create",
            lambda: self._client.batches.create(
                input_file_id=uploaded.id, endpoint="/v1/embeddings", completion_window="24h"
            ),
        )
        deadline = time.monotonic() + timeout
        while batch.status not in ("completed", "failed", "expired", "cancelled"):
            if time.monotonic() > deadline:
                raise EmbeddingError(f"openai batch {batch.id} did not finish in time")
            time.sleep(self.batch_poll_seconds)
            batch = call("poll", lambda b=batch: self._client.batches.retrieve(b.id))
        if batch.status != "completed" or not batch.output_file_id:
            raise EmbeddingError(f"openai batch {batch.id} ended {batch.status}")
        content = call("download", lambda: self._client.files.content(batch.output_file_id).text)
        return self._batch_vectors(content, len(texts))

    def _batch_vectors(self, content: str, count: int) -> np.ndarray:
        vectors: list[Any] = [None] * count
        for line in content.splitlines():
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                start = int(item["custom_id"])
                response = item.get("response") or {}
                if response.get("status_code") != 200:
                    raise EmbeddingError(f"openai batch: request {start} failed: {item.get('error')}")
                for entry in response["body"]["data"]:
                    vectors[start + entry["index"]] = entry["embedding"]
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise EmbeddingError(f"openai batch: malformed output line ({exc})") from None
        if any(v is None for v in vectors):
            raise EmbeddingError("openai batch: some results are missing")
        matrix = clean_vectors(vectors, self.dims)
        self.dims = self.dims or matrix.shape[1]
        return matrix
