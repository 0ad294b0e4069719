"""The local web page: static files and a JSON bridge to the RPC methods, on loopback, for the daemon's user alone.

The page is one more client of the RPC schema: `POST /api/<method>` with a JSON object of named parameters runs
`dispatch` as a msgpack call does (same validation, same redaction, in the same lanes as the socket's calls), and
`POST /api/events` streams the daemon's status as server-sent events. Every connection and request is checked
before anything else runs:
- where the OS tells who owns the other end of a loopback connection (Linux, /proc/net/tcp and tcp6), another
  user's is closed as it is accepted, before it holds a thread; at most MAX_CONNECTIONS are open, and a request must
  arrive whole within REQUEST_SECONDS;
- the `Host` header must be 127.0.0.1 at this port, the address it listens on: a DNS-rebinding page that reached
  the port under its own name is refused;
- an `Origin` or `Sec-Fetch-Site` header, when sent, must say the request comes from this page; no CORS header is
  ever sent;
- `/api/*` needs `Authorization: Bearer <token>`, the token made at each start and kept in a 0600 file that `memctl
  ui` reads; data is only ever sent by POST with a JSON body of one Content-Length (a form on another site cannot
  send one).
The static files carry no data, so they need no token: the page reads the token from its URL's fragment, which a
browser never sends to a server."""

from __future__ import annotations

import contextlib
import functools
import hmac
import json
import re
import secrets
import socket
import threading
from collections.abc import Callable, Hashable
from importlib import resources
from pathlib import Path
from typing import Any

import structlog

from memoryd.daemon.rpc import Dropped, RPCError
from memoryd.durable import replace_privately
from memoryd.web.loopback import DeadlineHandler, LoopbackServer
from memoryd.web.wire import encode, schema_description
from memoryd_client.protocol.schema import METHODS

log = structlog.get_logger("memoryd.web")

TOKEN_FILE = "ui.token"
DIGITS = re.compile(r"[0-9]{1,12}")
MAX_BODY = 1 << 20
REQUEST_SECONDS = 15.0  # a connection must send a whole request this soon after it opens or its last answer
MAX_CONNECTIONS = 64  # open at once (each holds a thread); one more is closed as it comes
MAX_STREAMS = 8  # live status streams open at once
STREAM_SECONDS = 1.0  # how often a live stream sends the status
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}

Call = Callable[[Hashable, str, list[Any]], Any]  # (caller, method, params) -> result, in the method's lane


def write_token(data_dir: Path) -> str:
    """A new token for this start, written 0600 through a temporary file and a rename (durable.replace_privately):
    the old one stops working, and a symlink planted at the path is replaced, never written through."""
    data_dir.mkdir(parents=True, mode=0o700, exist_ok=True)
    token = secrets.token_urlsafe(32)
    replace_privately(data_dir / TOKEN_FILE, f"{token}\n".encode())
    return token


class WebServer:
    """The page's HTTP server, on threads of its own beside the daemon's event loop."""

    def __init__(self, port: int, token: str, call: Call, host: str = "127.0.0.1") -> None:
        self.token = token
        self.call = call
        self._expected = f"Bearer {token}".encode()
        self._streams = threading.BoundedSemaphore(MAX_STREAMS)
        self._stopping = threading.Event()
        self.httpd = LoopbackServer((host, port), _handler_for(self), max_connections=MAX_CONNECTIONS)
        self.port = self.httpd.port
        self.host = host
        self._thread: threading.Thread | None = None

    @functools.cache  # noqa: B019 - one server per daemon: the page's few files, read once
    def static(self, name: str) -> bytes:
        return resources.files("memoryd.web").joinpath(f"static/{name}").read_bytes()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def allowed_hosts(self) -> set[str]:
        """127.0.0.1 only, the address it listens on: `localhost` may lead a browser to ::1, where another user
        could be listening at the same port."""
        return {f"{self.host}:{self.port}"}

    def allowed_origins(self) -> set[str]:
        return {f"http://{host}" for host in self.allowed_hosts()}

    def token_ok(self, header: str | None) -> bool:
        return header is not None and hmac.compare_digest(header.encode(), self._expected)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="web", daemon=True)
        self._thread.start()
        log.info("web page", url=self.url)

    def close(self) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=3)


def _handler_for(web: WebServer) -> type[DeadlineHandler]:
    class Handler(DeadlineHandler):
        protocol_version = "HTTP/1.1"
        timeout = REQUEST_SECONDS

        def setup(self) -> None:
            super().setup()
            # a reply's headers and body go out as two writes: with Nagle's algorithm the body waited for the
            # browser's delayed ACK of the headers (40 ms a call, measured with bench.ui)
            with contextlib.suppress(OSError):
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """The standard library's own refusals (a malformed request line, headers too long) as JSON, with the
            page's headers."""
            self.close_connection = True
            with contextlib.suppress(OSError):
                self._error(code, "bad_request", message or "malformed request")

        # refusals ---------------------------------------------------------------------------------------------
        def _refusal(self) -> tuple[int, str] | None:
            if self.headers.get("Host", "").lower() not in web.allowed_hosts():
                return 403, f"this page answers only at {web.url} (memctl ui opens it)"
            origin = self.headers.get("Origin")
            if origin is not None and origin.lower() not in web.allowed_origins():
                return 403, "requests from other sites are refused"
            fetch_site = self.headers.get("Sec-Fetch-Site")
            if fetch_site is not None and fetch_site not in ("same-origin", "none"):
                return 403, "requests from other sites are refused"
            return None

        def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in {**SECURITY_HEADERS, **(extra or {})}.items():
                self.send_header(name, value)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _error(self, status: int, code: str, message: str) -> None:
            self._send(status, encode({"error": {"code": code, "message": message}}), "application/json")

        def _read_body(self) -> bytes | None:
            """The body, by one plain Content-Length; anything else (chunked, two lengths, too long) is refused and
            the connection closed, so that no byte of it is read as another request."""
            lengths = self.headers.get_all("Content-Length") or ["0"]
            if (
                self.headers.get("Transfer-Encoding") is not None
                or len(lengths) > 1
                or not DIGITS.fullmatch(lengths[0])
            ):
                self.close_connection = True
                self._error(400, "bad_request", "send the body with one Content-Length, not chunked")
                return None
            length = int(lengths[0])
            if length > MAX_BODY:
                self.close_connection = True
                self._error(413, "too_large", f"a request body is at most {MAX_BODY} bytes")
                return None
            body = self.rfile.read(length) if length else b""
            self._arrived()
            return body

        # methods ----------------------------------------------------------------------------------------------
        def do_GET(self) -> None:
            self._arrived()
            refused = self._refusal()
            if refused:
                self._error(refused[0], "forbidden", refused[1])
                return
            page = STATIC.get(self.path.split("?", 1)[0])
            if page is None:
                self._error(404, "not_found", "no such page")
                return
            name, content_type = page
            self._send(200, web.static(name), content_type)

        do_HEAD = do_GET

        def do_POST(self) -> None:
            refused = self._refusal()
            body = self._read_body()
            if body is None:
                return
            if refused:
                self._error(refused[0], "forbidden", refused[1])
                return
            if not web.token_ok(self.headers.get("Authorization")):
                self._error(401, "unauthorized", "the page needs its token: open it with `memctl ui`")
                return
            if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
                self._error(415, "unsupported_media_type", "send a JSON object (Content-Type: application/json)")
                return
            try:
                params = json.loads(body or b"{}")
            except (ValueError, RecursionError):
                self._error(400, "invalid_params", "the body is not JSON")
                return
            if not isinstance(params, dict):
                self._error(400, "invalid_params", "the body must be a JSON object of named parameters")
                return
            route = self.path.split("?", 1)[0]
            if route == "/api/schema":
                self._send(200, encode({"result": schema_description()}), "application/json")
            elif route == "/api/events":
                self._stream(params)
            elif route.startswith("/api/") and route[5:] in METHODS:
                self._call(route[5:], params)
            else:
                self._error(404, "method_not_found", f"no method {route!r}")

        def _call(self, method: str, params: dict[str, Any]) -> None:
            try:
                result = web.call(self, method, [params])
            except RPCError as exc:
                status = {"invalid_params": 400, "not_found": 404, "forbidden": 403}.get(exc.code, 409)
                self._error(status, exc.code, exc.message)
                return
            except Dropped:
                self._error(503, "stopping", "the daemon is stopping")
                return
            except Exception as exc:
                log.exception("web call failed", method=method)
                self._error(500, "internal_error", f"{type(exc).__name__}: {exc}")
                return
            self._send(200, encode({"result": result}), "application/json")

        def _stream(self, params: dict[str, Any]) -> None:
            """The daemon's status every STREAM_SECONDS as server-sent events, until the page goes away."""
            if not web._streams.acquire(blocking=False):
                self._error(429, "busy", f"at most {MAX_STREAMS} live pages at once")
                return
            try:
                self.send_response(200)
                for name, value in SECURITY_HEADERS.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("X-Accel-Buffering", "no")
                self.end_headers()
                self.close_connection = True
                agent = params.get("agent") if isinstance(params.get("agent"), str) else None
                while not web._stopping.is_set():
                    try:
                        status = web.call(self, "status", [{"agent": agent} if agent else {}])
                        self.wfile.write(b"event: status\ndata: " + encode(status) + b"\n\n")
                    except OSError:
                        raise
                    except Exception as exc:
                        self.wfile.write(b"event: failure\ndata: " + encode({"message": str(exc)}) + b"\n\n")
                    self.wfile.flush()
                    web._stopping.wait(STREAM_SECONDS)
            except OSError:
                pass  # the page went away
            finally:
                web._streams.release()

    return Handler
