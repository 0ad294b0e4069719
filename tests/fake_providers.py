"""Local HTTP servers on 127.0.0.1 that speak the wire formats of OpenAI, Gemini, Voyage and Ollama."""

from __future__ import annotations

import email.parser
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memoryd.embeddings.hashing import HashingEmbedder


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float


@dataclass
class FakeProvider:
    kind: str  # openai, gemini, voyage, ollama
    dims: int = 64
    faults: deque = field(default_factory=deque)  # ("429", retry_after) | ("500",) | ("malformed",) | ("dims", n)
    batch_faults: deque = field(default_factory=deque)  # "failed" per batch job
    requests: list[Seen] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds_per_request: float = 0.0  # each embedding request answered this late (a slow provider)

    def __post_init__(self) -> None:
        self.dead = False
        self.embedder = HashingEmbedder(self.dims)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}" + ("/v1" if self.kind == "openai" else "")

    def close(self) -> None:
        self.dead = True  # kept-alive connections stop answering too
        self.server.shutdown()
        self.server.server_close()

    def vectors(self, texts: list[str], dims: int | None = None) -> list[list[float]]:
        dims = dims or self.dims
        embedder = self.embedder if dims == self.dims else HashingEmbedder(dims)
        return embedder.embed_documents(texts).tolist()

    def embed_requests(self) -> list[Seen]:
        return [r for r in self.requests if r.method == "POST" and ("embed" in r.path)]

    # -- wire formats ----------------------------------------------------------------------------------

    def answer(self, method: str, path: str, body: Any) -> tuple[int, dict[str, str], bytes]:
        if method == "POST" and self.faults and ("embed" in path):
            fault = self.faults.popleft()
            if fault[0] == "429":
                return 429, {"Retry-After": str(fault[1])}, b'{"error": {"message": "rate limited"}}'
            if fault[0] == "500":
                return 500, {}, b'{"error": {"message": "boom"}}'
            if fault[0] == "malformed":
                return 200, {}, b'{"data": [ {"embedding": [0.1, 0.2'
            if fault[0] == "dims":
                return 200, {}, json.dumps(self._embed_body(body, fault[1])).encode()
        if self.kind == "openai":
            return self._openai(method, path, body)
        if self.kind == "gemini":
            return self._gemini(method, path, body)
        return 200, {}, json.dumps(self._embed_body(body)).encode()

    def _embed_body(self, body: Any, dims: int | None = None) -> dict[str, Any]:
        if self.kind in ("openai", "voyage"):
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(self.vectors(texts, dims))
            ]
            return {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        if self.kind == "gemini":
            texts = [r["content"]["parts"][0]["text"] for r in body["requests"]]
            return {"embeddings": [{"values": v} for v in self.vectors(texts, dims)]}
        return {"model": body["model"], "embeddings": self.vectors(body["input"], dims)}

    def _openai(self, method: str, path: str, body: Any) -> tuple[int, dict[str, str], bytes]:
        now = int(time.time())
        if path == "/v1/embeddings":
            return 200, {}, json.dumps(self._embed_body(body)).encode()
        if path == "/v1/files" and method == "POST":
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = body
            return (
                200,
                {},
                json.dumps(
                    {
                        "id": file_id,
                        "object": "file",
                        "bytes": len(body),
                        "created_at": now,
                        "filename": "memoryd.jsonl",
                        "purpose": "batch",
                        "status": "processed",
                    }
                ).encode(),
            )
        if path == "/v1/batches" and method == "POST":
            batch_id = f"batch_{len(self.batches) + 1}"
            failed = bool(self.batch_faults) and self.batch_faults.popleft() == "failed"
            output_id = None
            if not failed:
                lines = []
                for line in self.files[body["input_file_id"]].decode().splitlines():
                    request = json.loads(line)
                    lines.append(
                        json.dumps(
                            {
                                "id": "r",
                                "custom_id": request["custom_id"],
                                "error": None,
                                "response": {
                                    "status_code": 200,
                                    "request_id": "x",
                                    "body": self._embed_body(request["body"]),
                                },
                            }
                        )
                    )
                output_id = f"file-out-{batch_id}"
                self.files[output_id] = ("\n".join(lines) + "\n").encode()
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": "/v1/embeddings",
                "input_file_id": body["input_file_id"],
                "completion_window": "24h",
                "created_at": now,
                "status": "in_progress",
                "final": "failed" if failed else "completed",
                "output_file_id": output_id,
            }
            return 200, {}, json.dumps({k: v for k, v in self.batches[batch_id].items() if k != "final"}).encode()
        match = re.fullmatch(r"/v1/batches/([\w-]+)", path)
        if match and method == "GET":
            batch = self.batches[match.group(1)]
            batch["status"] = batch["final"]
            shown = {k: v for k, v in batch.items() if k != "final"}
            if batch["status"] != "completed":
                shown["output_file_id"] = None
            return 200, {}, json.dumps(shown).encode()
        match = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
        if match and method == "GET":
            return 200, {"Content-Type": "application/octet-stream"}, self.files[match.group(1)]
        return 404, {}, b'{"error": {"message": "not found"}}'

    def _gemini(self, method: str, path: str, body: Any) -> tuple[int, dict[str, str], bytes]:
        if path.endswith(":batchEmbedContents"):
            return 200, {}, json.dumps(self._embed_body(body)).encode()
        if path.endswith(":asyncBatchEmbedContent"):
            name = f"batches/b{len(self.batches) + 1}"
            failed = bool(self.batch_faults) and self.batch_faults.popleft() == "failed"
            requests = body["batch"]["inputConfig"]["requests"]["requests"]
            texts = [r["request"]["content"]["parts"][0]["text"] for r in requests]
            responses = [
                {"response": {"embedding": {"values": v}}, "metadata": r["metadata"]}
                for v, r in zip(self.vectors(texts), requests, strict=True)
            ]
            state = "BATCH_STATE_FAILED" if failed else "BATCH_STATE_SUCCEEDED"
            self.batches[name] = {
                "name": name,
                "metadata": {
                    "name": name,
                    "state": state,
                    "output": {"inlinedResponses": {"inlinedResponses": list(reversed(responses))}},
                },
                "done": True,
            }
            return 200, {}, json.dumps({"name": name, "metadata": {"state": "BATCH_STATE_PENDING"}}).encode()
        if method == "GET" and path.startswith("/v1beta/batches/"):
            return 200, {}, json.dumps(self.batches[path.removeprefix("/v1beta/")]).encode()
        return 404, {}, b'{"error": {"message": "not found"}}'

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _read_body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                kind = self.headers.get("Content-Type", "")
                if kind.startswith("multipart/form-data"):
                    message = email.parser.BytesParser().parsebytes(f"Content-Type: {kind}\r\n\r\n".encode() + raw)
                    for part in message.get_payload():
                        if part.get_param("name", header="content-disposition") == "file":
                            return part.get_payload(decode=True)
                    return b""
                return json.loads(raw) if raw else None

            def _serve(self, method: str) -> None:
                if fake.dead:
                    self.close_connection = True
                    return
                body = self._read_body()
                fake.requests.append(
                    Seen(method, self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                )
                if fake.seconds_per_request and "embed" in self.path:
                    time.sleep(fake.seconds_per_request)
                status, headers, payload = fake.answer(method, self.path.split("?")[0], body)
                self.send_response(status)
                headers = {"Content-Type": "application/json", **headers}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                self._serve("POST")

            def do_GET(self) -> None:
                self._serve("GET")

        return Handler
