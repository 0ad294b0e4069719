"""What every remote provider shares: JSON over HTTP, retries with backoff and jitter, batching, keys."""

from __future__ import annotations

import json
import os
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import partial
from typing import Any, TypeVar

import numpy as np

from memoryd.embeddings.base import Embedder, EmbeddingError, clean_vectors, fingerprint

T = TypeVar("T")
MAX_RETRY_AFTER = 120.0


class TransientError(EmbeddingError):
    """Worth retrying: 429, 5xx, a timeout or a dropped connection."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, min(float(value), MAX_RETRY_AFTER))
    except ValueError:
        pass
    try:
        return max(0.0, min(parsedate_to_datetime(value).timestamp() - time.time(), MAX_RETRY_AFTER))
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never shorter than the server's Retry-After."""
        backoff = random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))
        return max(backoff, retry_after or 0.0)


def with_retries(
    call: Callable[[], T], policy: RetryPolicy, what: str, sleep: Callable[[float], None] = time.sleep
) -> T:
    for attempt in range(policy.max_retries + 1):
        try:
            return call()
        except TransientError as exc:
            if attempt == policy.max_retries:
                raise EmbeddingError(f"{what}: giving up after {attempt + 1} attempts: {exc}") from exc
            sleep(policy.delay(attempt, exc.retry_after))
    raise AssertionError("unreachable")


def post_json(url: str, body: dict[str, Any], headers: dict[str, str], timeout: float) -> Any:
    """POST JSON and parse the JSON answer; errors never include the request headers (keys)."""
    return request_json("POST", url, headers, timeout, body)


def request_json(method: str, url: str, headers: dict[str, str], timeout: float, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode("utf-8", "replace")
        if exc.code == 429 or exc.code >= 500:
            raise TransientError(
                f"HTTP {exc.code}: {detail}", parse_retry_after(exc.headers.get("Retry-After"))
            ) from None
        raise EmbeddingError(f"HTTP {exc.code}: {detail}") from None
    except TimeoutError as exc:
        raise TransientError(f"timed out after {timeout}s") from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (TimeoutError, socket.timeout)):
            raise TransientError(f"timed out after {timeout}s") from None
        raise TransientError(f"cannot reach {urllib.parse.urlparse(url).netloc}: {reason}") from None
    except (ConnectionError, OSError) as exc:
        raise TransientError(f"connection failed: {exc}") from None
    try:
        return json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EmbeddingError(f"malformed JSON from the provider: {exc}") from None


def batches(items: Sequence[str], max_items: int, max_chars: int) -> Iterator[list[str]]:
    """Split inputs into requests within an API's count and size limits."""
    batch: list[str] = []
    size = 0
    for item in items:
        if batch and (len(batch) >= max_items or size + len(item) > max_chars):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += len(item)
    if batch:
        yield batch


def api_key(configured: str, *env_names: str) -> str:
    return configured or next((os.environ[n] for n in env_names if os.environ.get(n)), "")


class RemoteEmbedder(Embedder):
    """Base for HTTP providers: subclasses send one batch and return its vectors in order."""

    provider = "remote"
    max_items = 96
    max_chars = 200_000
    truncate_chars = 24_000  # per input; well under every provider's token limit

    batch_min_items = 200  # below this an asynchronous batch job is not worth its latency
    batch_max_failures = 2
    batch_poll_seconds = 5.0

    def __init__(
        self,
        model: str,
        key: str,
        base_url: str,
        *,
        dims: int = 0,
        timeout: float = 30.0,
        retries: RetryPolicy | None = None,
        batch_api: bool = False,
    ) -> None:
        self.model = model  # the vectors' identity: the model's name, and its prompts if any
        self.api_model = model  # what the API is asked for
        self.batch_api = batch_api and hasattr(self, "embed_batch_job")
        self.batch_failures = 0
        self.base_url = base_url.rstrip("/")
        self.dims = dims
        self.requested_dims = dims
        self.timeout = timeout
        self.retries = retries or RetryPolicy()
        self._key = key
        self.last_batch_error: str | None = None
        self.key_fingerprint = fingerprint(f"{key}|{self.base_url}")
        self._prompts = ("", "")

    def use_prompts(self, query: str, document: str, source: str) -> None:
        """Put these before queries and documents (a model that was trained with them); they name the vectors."""
        self._prompts, self.prompts_from = (query, document), source
        if query or document:
            self.model += "+prefix-" + fingerprint(query + "\0" + document)[:8]

    @property
    def prompts(self) -> tuple[str, str]:
        return self._prompts

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(model={self.api_model!r}, base_url={self.base_url!r})"

    def _send(self, texts: list[str], kind: str) -> list[list[float]]:
        raise NotImplementedError

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        rows: list[np.ndarray] = []
        prompt = self._prompts[0] if kind == "query" else self._prompts[1]
        clipped = [prompt + t[: self.truncate_chars] if t.strip() else " " for t in texts]
        for batch in batches(clipped, self.max_items, self.max_chars):
            vectors = with_retries(partial(self._send, batch, kind), self.retries, f"{self.provider} embeddings")
            if len(vectors) != len(batch):
                raise EmbeddingError(f"{self.provider} returned {len(vectors)} vectors for {len(batch)} inputs")
            try:
                matrix = clean_vectors(vectors, self.dims)
            except (TypeError, ValueError) as exc:
                raise EmbeddingError(f"{self.provider} returned malformed vectors: {exc}") from None
            self.dims = self.dims or matrix.shape[1]
            rows.append(matrix)
        return np.concatenate(rows) if rows else np.zeros((0, max(self.dims, 1)), dtype=np.float32)

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        if self.batch_api and len(texts) >= self.batch_min_items and self.batch_failures < self.batch_max_failures:
            try:
                return self.embed_batch_job(texts)  # type: ignore[attr-defined]  # batch_api: a subclass defines it
            except EmbeddingError as exc:
                self.batch_failures += 1
                self.last_batch_error = str(exc)  # inline requests take over; after two failures, for the run
        return self._embed(texts, "document")

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query")[0]

    def close(self) -> None:
        pass
