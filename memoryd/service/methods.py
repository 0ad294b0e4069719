"""The RPC methods: argument checking and the calls into the manager. One function per method."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

from memoryd.config import ConfigError
from memoryd.memory import IndexUnreadable, RequestError
from memoryd.search.hybrid import SearchError
from memoryd.service.manager import Manager
from memoryd.service.rpc import RPCError
from memoryd.service.runtime import AgentRuntime, Stopping

DEFAULT_WAIT_SECONDS = 120.0  # how long `sync` and `reindex(wait)` hold a worker unless told otherwise
MAX_WAIT_SECONDS = 3600.0


def _optional(value: Any, kind: type | tuple[type, ...], name: str) -> None:
    """Reject a present parameter of the wrong type (bool is not accepted as a number)."""
    if value is None:
        return
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise RPCError("invalid_params", f"'{name}' must be {names}")
    if isinstance(value, float) and not math.isfinite(value):
        raise RPCError("invalid_params", f"'{name}' must be finite")


def _runtime(m: Manager, agent: Any) -> AgentRuntime:
    _optional(agent, str, "agent")
    return m.runtime(agent)


def ping(m: Manager) -> dict[str, Any]:
    return {"pong": True, **m.info()}


def search(
    m: Manager,
    query: str,
    max_results: int | None = None,
    min_score: float | None = None,
    mode: str = "hybrid",
    sources: list[str] | None = None,
    fusion: str | None = None,
    agent: str | None = None,
    path: str | None = None,
    after: str | float | None = None,
    before: str | float | None = None,
    type: str | list[str] | None = None,
    explain: bool = False,
    mmr: bool | None = None,
    decay: bool | None = None,
) -> dict[str, Any]:
    _optional(sources, list, "sources")
    _optional(fusion, str, "fusion")
    _optional(explain, bool, "explain")
    _optional(mmr, bool, "mmr")
    _optional(decay, bool, "decay")
    runtime = _runtime(m, agent)
    runtime.sync_if_dirty()
    try:
        response = runtime.memory.search(
            query,
            max_results=max_results,
            min_score=min_score,
            mode=mode,
            sources=sources,
            fusion=fusion,
            path=path,
            after=after,
            before=before,
            kind=type,
            explain=bool(explain),
            mmr=mmr,
            decay=decay,
        )
    except IndexUnreadable as exc:
        runtime.request_sync()  # the sync sets the broken file aside and rebuilds
        raise RPCError("index_rebuilding", str(exc)) from None
    out = response.as_dict()
    out["agent"] = runtime.agent.id
    return out


def get(
    m: Manager, path: str, from_: int | None = None, lines: int | None = None, agent: str | None = None
) -> dict[str, Any]:
    _optional(path, str, "path")
    return _runtime(m, agent).memory.get(path, 1 if from_ is None else from_, lines)


def write(
    m: Manager,
    text: str,
    path: str | None = None,
    agent: str | None = None,
    type: str | None = None,  # the protocol's name
    importance: float | None = None,
) -> dict[str, Any]:
    return _runtime(m, agent).memory.write(text, path, kind=type, importance=importance)


def status(m: Manager, agent: str | None = None) -> dict[str, Any]:
    if agent is not None:
        return {"daemon": m.info(), "agents": [_runtime(m, agent).status()]}
    return {"daemon": m.info(), "agents": [r.status() for r in list(m.runtimes.values())]}


def _timeout(value: Any) -> float:
    _optional(value, (int, float), "timeout")
    if value is None:
        return DEFAULT_WAIT_SECONDS
    if not 0 <= value <= MAX_WAIT_SECONDS:
        raise RPCError("invalid_params", f"'timeout' must be from 0 to {MAX_WAIT_SECONDS} seconds")
    return float(value)


def sync(m: Manager, agent: str | None = None, force: bool = False, timeout: float | None = None) -> dict[str, Any]:
    """Sync now and wait for it, at most `timeout` seconds; `done` says whether it finished in that time."""
    _optional(force, bool, "force")
    limit = _timeout(timeout)
    runtime = _runtime(m, agent)
    report, done = runtime.sync_now(force=bool(force), timeout=limit)
    return {
        "agent": runtime.agent.id,
        "done": done,
        "report": report.as_dict() if report and done else None,
        "progress": runtime.sync_progress.as_dict() if runtime.sync_progress else None,
        "error": runtime.sync_error,
    }


def reindex(m: Manager, agent: str | None = None, wait: bool = False, timeout: float | None = None) -> dict[str, Any]:
    """Start an atomic reindex; with `wait`, wait for it at most `timeout` seconds (`done` says if it ended)."""
    _optional(wait, bool, "wait")
    limit = _timeout(timeout)
    runtime = _runtime(m, agent)
    started = runtime.start_reindex()
    done = runtime.wait_reindex(limit) if wait else False
    progress = runtime.reindex_progress
    return {
        "agent": runtime.agent.id,
        "started": started,
        "done": done,
        "progress": progress.as_dict() if progress else None,
    }


def agents(m: Manager) -> list[dict[str, Any]]:
    return [
        {
            "id": a.id,
            "workspace": str(a.workspace),
            "sources": list(a.sources),
            "default": a.id == m.config.default_agent.id,
        }
        for a in m.config.agents
    ]


METHODS: dict[str, Callable[..., Any]] = {
    "ping": ping,
    "search": search,
    "get": get,
    "write": write,
    "status": status,
    "sync": sync,
    "reindex": reindex,
    "agents": agents,
}


RENAMED = {"from": "from_"}  # protocol names that are Python keywords


def dispatch(manager: Manager, method: Any, params: Any) -> Any:
    """Run one method with msgpack-rpc params: positional arguments, or a single map of named ones."""
    if not isinstance(method, str) or method not in METHODS:
        raise RPCError("method_not_found", f"unknown method {method!r}; known: {', '.join(sorted(METHODS))}")
    if not isinstance(params, list):
        raise RPCError("invalid_params", "params must be an array")
    func = METHODS[method]
    if len(params) == 1 and isinstance(params[0], dict):
        args: list[Any] = []
        kwargs = params[0]
        if not all(isinstance(k, str) for k in kwargs):
            raise RPCError("invalid_params", "named parameters need string keys")
        kwargs = {RENAMED.get(k, k): v for k, v in kwargs.items()}
    else:
        args, kwargs = params, {}
    try:
        inspect.signature(func).bind(manager, *args, **kwargs)
    except TypeError as exc:
        raise RPCError("invalid_params", f"{method}: {exc}") from None
    try:
        return func(manager, *args, **kwargs)
    except RPCError:
        raise
    except (SearchError, RequestError) as exc:
        raise RPCError("invalid_params", str(exc)) from None
    except ConfigError as exc:
        raise RPCError("not_found", str(exc)) from None
    except Stopping as exc:
        raise RPCError("stopping", str(exc)) from None
