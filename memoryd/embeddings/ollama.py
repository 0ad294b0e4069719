"""A local Ollama server's embeddings (`/api/embed`, batch input, no key)."""

from __future__ import annotations

from memoryd.embeddings.base import EmbeddingError
from memoryd.embeddings.remote import RemoteEmbedder, post_json

DEFAULT_BASE = "http://127.0.0.1:11434"


class OllamaEmbedder(RemoteEmbedder):
    provider = "ollama"
    max_items = 64

    def _send(self, texts: list[str], kind: str) -> list[list[float]]:
        body: dict[str, object] = {"model": self.api_model, "input": texts, "truncate": True}
        if self.requested_dims:
            body["dimensions"] = self.requested_dims
        data = post_json(f"{self.base_url}/api/embed", body, {}, self.timeout)
        try:
            return list(data["embeddings"])
        except (KeyError, TypeError) as exc:
            raise EmbeddingError(f"ollama: unexpected response shape ({exc})") from None
