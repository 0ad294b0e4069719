"""Local HTTP servers on 127.0.0.1 that speak model providers' APIs, so that the real agent CLIs run whole turns
here: Anthropic's Messages API (Claude Code), OpenAI's Responses API (Codex) and Chat Completions (OpenCode), each
streamed as the CLI asks. Every request body is kept for the test to read."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

REPLY = "Noted."


class FakeModel:
    """The server; a subclass answers its API's requests (`answer`, and `listing` for GET)."""

    base_path = ""  # what the client is given after host and port
    sent_key = ""  # the request field that holds what the model was sent
    listing: ClassVar[dict[str, Any] | None] = None  # a GET's JSON answer (None: 404)

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.base_path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sent_texts(self) -> list[str]:
        """What each recorded request sent the model, as one text."""
        return [json.dumps(body.get(self.sent_key, []), ensure_ascii=False) for body in self.bodies]

    def answer(self, reply: Reply, path: str, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.end_headers()

            def do_GET(self) -> None:
                if fake.listing is None:
                    self.send_response(404)
                    self.end_headers()
                else:
                    Reply(self).json(fake.listing)

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                fake.answer(Reply(self), self.path, body)

        return Handler


class Reply:
    """One answer: JSON, or a stream of server-sent events."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self.handler = handler

    def json(self, data: dict[str, Any]) -> None:
        out = json.dumps(data).encode()
        self.handler.send_response(200)
        self.handler.send_header("content-type", "application/json")
        self.handler.send_header("content-length", str(len(out)))
        self.handler.end_headers()
        self.handler.wfile.write(out)

    def events(self, events: list[tuple[str | None, Any]]) -> None:
        """(name, data) pairs; no name writes a bare `data:` line, a string is written as it is."""
        self.handler.send_response(200)
        self.handler.send_header("content-type", "text/event-stream")
        self.handler.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            text = data if isinstance(data, str) else json.dumps(data)
            self.handler.wfile.write(f"{head}data: {text}\n\n".encode())


class FakeAnthropic(FakeModel):
    """Anthropic's Messages API, as Claude Code calls it (token counts answered and not recorded)."""

    sent_key = "messages"

    def answer(self, reply: Reply, path: str, body: dict[str, Any]) -> None:
        if "count_tokens" in path:
            return reply.json({"input_tokens": 10})
        self.bodies.append(body)
        head = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "claude")}
        if not body.get("stream"):
            content = [{"type": "text", "text": REPLY}]
            usage = {"input_tokens": 10, "output_tokens": 2}
            done = {"content": content, "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}
            return reply.json({**head, **done})
        start = {**head, "content": [], "stop_reason": None, "stop_sequence": None}
        start["usage"] = {"input_tokens": 10, "output_tokens": 1}
        ending = {"stop_reason": "end_turn", "stop_sequence": None}
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": REPLY}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": ending, "usage": {"output_tokens": 2}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        reply.events(events)


class FakeResponses(FakeModel):
    """OpenAI's Responses API, streamed, as Codex calls it."""

    base_path = "/v1"
    sent_key = "input"
    listing: ClassVar[dict[str, Any] | None] = {"object": "list", "data": [], "models": []}

    def answer(self, reply: Reply, path: str, body: dict[str, Any]) -> None:
        self.bodies.append(body)
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
        delta = {"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": REPLY}
        events = [
            {"type": "response.created", "response": response},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress", "content": []},
            },
            {"type": "response.output_text.delta", **delta},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "output": [item], "usage": usage},
            },
        ]
        reply.events([(event["type"], event) for event in events])


class FakeChat(FakeModel):
    """OpenAI's Chat Completions API (streamed and not), as OpenCode's OpenAI-compatible provider calls it."""

    base_path = "/v1"
    sent_key = "messages"
    listing: ClassVar[dict[str, Any] | None] = {"object": "list", "data": []}

    def answer(self, reply: Reply, path: str, body: dict[str, Any]) -> None:
        self.bodies.append(body)
        head = {"id": "c1", "created": int(time.time()), "model": body.get("model", "m1")}
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
            return reply.json({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage},
        ]
        events: list[tuple[str | None, Any]] = [
            (None, {**head, "object": "chat.completion.chunk", **c}) for c in chunks
        ]
        reply.events([*events, (None, "[DONE]")])
