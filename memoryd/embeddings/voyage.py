"""Voyage AI embeddings, with input_type query/document."""

from __future__ import annotations

from memoryd.embeddings.base import EmbeddingError
from memoryd.embeddings.remote import RemoteEmbedder, post_json

DEFAULT_BASE = "https://api.voyageai.com"


class VoyageEmbedder(RemoteEmbedder):
    provider = "voyage"
    max_items = 128
    max_chars = 300_000

    def _send(self, texts: list[str], kind: str) -> list[list[float]]:
        body: dict[str, object] = {"input": texts, "model": self.api_model, "input_type": kind}
        if self.requested_dims:
            body["output_dimension"] = self.requested_dims
        data = post_json(f"{self.base_url}/v1/embeddings", body, {"Authorization": f"Bearer {self._key}"}, self.timeout)
        try:
            return [d["embedding"] for d in sorted(data["data"], key=lambda d: d.get("index", 0))]
        except (KeyError, TypeError) as exc:
            raise EmbeddingError(f"voyage: unexpected response shape ({exc})") from None
