"""The RPC methods: argument checking and the calls into the manager. One function per method."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    validate_call,
)

from memoryd.config import ConfigError
from memoryd.memory import IndexUnreadable, RequestError
from memoryd.search.hybrid import MAX_RESULTS_CAP, SearchError
from memoryd.service.jobs import Stopping
from memoryd.service.manager import Manager
from memoryd.service.rpc import RPCError
from memoryd.service.runtime import AgentRuntime

DEFAULT_WAIT_SECONDS = 120.0  # how long `sync` and `reindex(wait)` hold a worker unless told otherwise
MAX_WAIT_SECONDS = 3600.0


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


# The parameter types of the protocol. Strict: a string is not a number, 0 is not false, a map is not a list.
Number = Annotated[StrictInt | StrictFloat, AfterValidator(_finite)]
When = StrictStr | Number  # an ISO date or datetime, or epoch seconds
Seconds = Annotated[StrictInt | StrictFloat, Field(ge=0, le=MAX_WAIT_SECONDS)]
Line = Annotated[StrictInt, Field(ge=1)]
Agent = StrictStr | None
typed = validate_call(config=ConfigDict(arbitrary_types_allowed=True, strict=True))


def _runtime(m: Manager, agent: str | None) -> AgentRuntime:
    return m.runtime(agent)


@typed
def ping(m: Manager) -> dict[str, Any]:
    return {"pong": True, **m.info()}


@typed
def search(
    m: Manager,
    query: StrictStr,
    max_results: Annotated[StrictInt, Field(ge=1, le=MAX_RESULTS_CAP)] | None = None,
    min_score: Number | None = None,
    mode: Literal["hybrid", "keyword", "vector"] = "hybrid",
    sources: list[Literal["memory", "sessions"]] | None = None,
    fusion: Literal["adaptive", "weighted", "rrf"] | None = None,
    agent: Agent = None,
    path: StrictStr | None = None,
    after: When | None = None,
    before: When | None = None,
    type: StrictStr | list[StrictStr] | None = None,  # the protocol's name for the memory type
    explain: StrictBool = False,
    mmr: StrictBool | None = None,
    decay: StrictBool | None = None,
) -> dict[str, Any]:
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
            explain=explain,
            mmr=mmr,
            decay=decay,
        )
    except IndexUnreadable as exc:
        runtime.request_sync()  # the sync sets the broken file aside and rebuilds
        raise RPCError("index_rebuilding", str(exc)) from None
    out = response.as_dict()
    out["agent"] = runtime.agent.id
    return out


@typed
def get(
    m: Manager, path: StrictStr, from_: Line | None = None, lines: Line | None = None, agent: Agent = None
) -> dict[str, Any]:
    return _runtime(m, agent).memory.get(path, 1 if from_ is None else from_, lines)


@typed
def write(
    m: Manager,
    text: StrictStr,
    path: StrictStr | None = None,
    agent: Agent = None,
    type: StrictStr | None = None,  # the protocol's name for the memory type
    importance: Annotated[Number, Field(ge=0, le=1)] | None = None,
) -> dict[str, Any]:
    return _runtime(m, agent).write(text, path, type, importance)


@typed
def status(m: Manager, agent: Agent = None) -> dict[str, Any]:
    if agent is not None:
        return {"daemon": m.info(), "agents": [_runtime(m, agent).status()]}
    return {"daemon": m.info(), "agents": [r.status() for r in list(m.runtimes.values())]}


@typed
def sync(
    m: Manager,
    agent: Agent = None,
    force: StrictBool = False,
    timeout: Seconds | None = None,
    vectors: StrictBool = True,
) -> dict[str, Any]:
    """Sync now and wait for it (and, with `vectors`, for the vectors it left to the embedding lane), at most
    `timeout` seconds; `done` says whether it finished in that time."""
    runtime = _runtime(m, agent)
    wait = DEFAULT_WAIT_SECONDS if timeout is None else timeout
    report, done = runtime.sync_now(force=force, timeout=wait, vectors=vectors)
    return {
        "agent": runtime.agent.id,
        "done": done,
        "report": report.as_dict() if report and done else None,
        "progress": runtime.sync_progress.as_dict() if runtime.sync_progress else None,
        "error": runtime.sync_error,
    }


@typed
def reindex(
    m: Manager, agent: Agent = None, wait: StrictBool = False, timeout: Seconds | None = None
) -> dict[str, Any]:
    """Start an atomic reindex; with `wait`, wait for it at most `timeout` seconds (`done` says if it ended)."""
    runtime = _runtime(m, agent)
    started = runtime.start_reindex()
    done = runtime.wait_reindex(DEFAULT_WAIT_SECONDS if timeout is None else timeout) if wait else False
    progress = runtime.reindex_progress
    return {
        "agent": runtime.agent.id,
        "started": started,
        "done": done,
        "progress": progress.as_dict() if progress else None,
    }


@typed
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


def _explain(exc: ValidationError, func: Callable[..., Any]) -> str:
    """One line per bad parameter, named as the protocol names it (positional ones too)."""
    shown = {v: k for k, v in RENAMED.items()}
    names = list(inspect.signature(func).parameters)
    problems = []
    for error in exc.errors():
        loc = [str(names[p]) if isinstance(p, int) and p < len(names) else str(p) for p in error["loc"][:1]]
        loc += [str(p) for p in error["loc"][1:]]
        name = shown.get(loc[0], loc[0]) if loc else "params"
        problems.append(f"'{'.'.join([name, *loc[1:]])}': {error['msg'].lower()}")
    return "; ".join(dict.fromkeys(problems))


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
    except ValidationError as exc:
        raise RPCError("invalid_params", f"{method}: {_explain(exc, func)}") from None
    except RPCError:
        raise
    except (SearchError, RequestError) as exc:
        raise RPCError("invalid_params", str(exc)) from None
    except ConfigError as exc:
        raise RPCError("not_found", str(exc)) from None
    except Stopping as exc:
        raise RPCError("stopping", str(exc)) from None
