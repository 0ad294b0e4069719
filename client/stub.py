"""A small, dependency-light MessagePack-RPC client for the memoryd daemon."""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import msgpack

from client.paths import default_socket_path

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2


class ClientError(Exception):
    """Base class of client errors."""


class DaemonNotRunning(ClientError):
    """Nothing answers on the socket."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"memoryd is not running (no daemon at {path}: {reason}). Start it with: memoryd run")
        self.path = path


class RemoteError(ClientError):
    """The daemon answered with an error."""

    def __init__(self, code: str, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class RPCTimeout(ClientError):
    """No answer within the timeout."""


@dataclass(frozen=True)
class SearchHit:
    path: str
    start_line: int
    end_line: int
    score: float
    vector_score: float | None
    text_score: float | None
    snippet: str
    source: str
    citation: str
    chunk_start_line: int = 0  # the whole chunk that matched (0 from a daemon that does not say)
    chunk_end_line: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchResults:
    results: list[SearchHit]
    mode: str
    provider: str | None
    model: str | None
    took_ms: float
    raw: dict[str, Any]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


class GetResult(TypedDict):
    path: str
    text: str
    lines: int
    total_lines: int


class WriteResult(TypedDict):
    path: str
    start_line: int
    end_line: int
    citation: str


_HIT_FIELDS = {f for f in SearchHit.__dataclass_fields__ if f != "extra"}


def _hit(raw: dict[str, Any]) -> SearchHit:
    known = {k: raw.get(k) for k in _HIT_FIELDS}
    return SearchHit(**known, extra={k: v for k, v in raw.items() if k not in _HIT_FIELDS})


class MemoryClient:
    """One connection to the daemon; thread-safe (one request at a time); reconnects once if the daemon restarted."""

    def __init__(self, socket_path: str | os.PathLike[str] | None = None, timeout: float = 30.0) -> None:
        self.socket_path = Path(socket_path) if socket_path else default_socket_path()
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._unpacker: msgpack.Unpacker | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # -- connection ----------------------------------------------------------------------------------

    def connect(self) -> MemoryClient:
        if self._sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(str(self.socket_path))
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                sock.close()
                raise DaemonNotRunning(self.socket_path, exc.strerror or str(exc)) from None
            except OSError as exc:
                sock.close()
                raise DaemonNotRunning(self.socket_path, exc.strerror or str(exc)) from None
            self._sock = sock
            self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        return self

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._unpacker = None

    def __enter__(self) -> MemoryClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- protocol ------------------------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | list[Any] | None = None, timeout: float | None = None) -> Any:
        """Send one request and wait for its response; named params go as a single map."""
        args = [params] if isinstance(params, dict) else list(params or [])
        with self._lock:
            for attempt in (1, 2):
                try:
                    return self._roundtrip(method, args, timeout)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, EOFError):
                    self.close()
                    if attempt == 2:
                        raise DaemonNotRunning(self.socket_path, "the connection was closed") from None
        raise AssertionError("unreachable")

    def _roundtrip(self, method: str, args: list[Any], timeout: float | None) -> Any:
        self.connect()
        assert self._sock is not None and self._unpacker is not None
        msgid = next(self._ids) & 0xFFFFFFFF
        self._sock.sendall(msgpack.packb([REQUEST, msgid, method, args], use_bin_type=True))
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for message in self._unpacker:
                if isinstance(message, list) and len(message) == 4 and message[0] == RESPONSE and message[1] == msgid:
                    error, result = message[2], message[3]
                    if error is not None:
                        if isinstance(error, dict):
                            raise RemoteError(
                                str(error.get("code", "error")), str(error.get("message", error)), error.get("data")
                            )
                        raise RemoteError("error", str(error))
                    return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise RPCTimeout(f"no answer to {method!r} within {timeout or self.timeout:.0f}s")
            self._sock.settimeout(remaining)
            try:
                data = self._sock.recv(1 << 16)
            except TimeoutError:
                self.close()
                raise RPCTimeout(f"no answer to {method!r} within {timeout or self.timeout:.0f}s") from None
            if not data:
                raise EOFError
            self._unpacker.feed(data)

    # -- methods -------------------------------------------------------------------------------------

    @staticmethod
    def _named(**kwargs: Any) -> dict[str, Any]:
        return {k: v for k, v in kwargs.items() if v is not None}

    def ping(self) -> dict[str, Any]:
        return self.call("ping")

    def search(
        self,
        query: str,
        *,
        agent: str | None = None,
        max_results: int | None = None,
        min_score: float | None = None,
        mode: str | None = None,
        sources: list[str] | None = None,
        **filters: Any,
    ) -> SearchResults:
        raw = self.call(
            "search",
            self._named(
                query=query,
                agent=agent,
                max_results=max_results,
                min_score=min_score,
                mode=mode,
                sources=sources,
                **filters,
            ),
        )
        return SearchResults(
            results=[_hit(r) for r in raw.get("results", [])],
            mode=raw.get("mode", ""),
            provider=raw.get("provider"),
            model=raw.get("model"),
            took_ms=float(raw.get("took_ms", 0.0)),
            raw=raw,
        )

    def get(
        self, path: str, from_line: int | None = None, lines: int | None = None, *, agent: str | None = None
    ) -> GetResult:
        return self.call("get", self._named(path=path, agent=agent, lines=lines, **{"from": from_line}))

    def write(self, text: str, path: str | None = None, *, agent: str | None = None, **extra: Any) -> WriteResult:
        return self.call("write", self._named(text=text, path=path, agent=agent, **extra))

    def status(self, agent: str | None = None) -> dict[str, Any]:
        return self.call("status", self._named(agent=agent))

    def sync(self, agent: str | None = None, force: bool = False) -> dict[str, Any]:
        return self.call("sync", self._named(agent=agent, force=force or None), timeout=max(self.timeout, 600))

    def reindex(self, agent: str | None = None, wait: bool = False) -> dict[str, Any]:
        return self.call(
            "reindex", self._named(agent=agent, wait=wait or None), timeout=max(self.timeout, 3600) if wait else None
        )

    def agents(self) -> list[dict[str, Any]]:
        return self.call("agents")
