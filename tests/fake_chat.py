"""A local HTTP server on 127.0.0.1 that speaks OpenAI's Chat Completions API (streamed and not), as OpenCode's
OpenAI-compatible provider calls it: every request body is kept for the test to read."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Noted."


class FakeChat:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def messages_text(self) -> list[str]:
        return [json.dumps(body.get("messages", []), ensure_ascii=False) for body in self.bodies]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, kind: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", kind)
                if kind == "application/json":
                    self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send("application/json", json.dumps({"object": "list", "data": []}).encode())

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                fake.bodies.append(body)
                head = {"id": "c1", "created": int(time.time()), "model": body.get("model", "m1")}
                usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
                if not body.get("stream"):
                    message = {"role": "assistant", "content": REPLY}
                    choice = {"index": 0, "message": message, "finish_reason": "stop"}
                    reply = {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
                    return self._send("application/json", json.dumps(reply).encode())
                chunks = [
                    {
                        "choices": [
                            {"index": 0, "delta": {"role": "assistant", "content": REPLY}, "finish_reason": None}
                        ]
                    },
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage},
                ]
                lines = [f"data: {json.dumps({**head, 'object': 'chat.completion.chunk', **c})}\n\n" for c in chunks]
                self._send("text/event-stream", ("".join(lines) + "data: [DONE]\n\n").encode())

        return Handler
