"""A local HTTP server on 127.0.0.1 that speaks OpenAI's Responses API (streamed), so that the real Codex CLI
runs whole turns here: every request body is kept for the test to read."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Noted."


class FakeResponses:
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

    def inputs_text(self) -> list[str]:
        """Each request's input items, as one text."""
        return [json.dumps(body.get("input", []), ensure_ascii=False) for body in self.bodies]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                out = json.dumps({"object": "list", "data": [], "models": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    fake.bodies.append(json.loads(self.rfile.read(size) or b"{}"))
                except ValueError:
                    fake.bodies.append({})
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                text = [{"type": "output_text", "text": REPLY, "annotations": []}]
                item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": text}
                usage = {
                    "input_tokens": 10,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 2,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 12,
                }
                response = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
                added = {**item, "status": "in_progress", "content": []}
                events = [
                    {"type": "response.created", "response": response},
                    {"type": "response.output_item.added", "output_index": 0, "item": added},
                    {
                        "type": "response.output_text.delta",
                        "item_id": "msg_1",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": REPLY,
                    },
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                    {
                        "type": "response.completed",
                        "response": {**response, "status": "completed", "output": [item], "usage": usage},
                    },
                ]
                for event in events:
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())

        return Handler
