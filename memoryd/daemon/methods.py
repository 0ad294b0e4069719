"""The RPC methods' implementations: one function per method of memoryd_client.protocol.schema, each taking the
checked request. Dispatch checks every call against the schema before it runs anything."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from memoryd.config import ConfigError
from memoryd.daemon.manager import Manager
from memoryd.daemon.progress import Stopping
from memoryd.daemon.rpc import RPCError
from memoryd.daemon.runtime import AgentRuntime
from memoryd.memory import IndexUnreadable, RequestError
from memoryd.search.federated import Skipped, merge
from memoryd.search.hybrid import SearchError, SearchResponse
from memoryd.store.interface import NotGranted, StoreBusy, StoreUnavailable
from memoryd.threads import lasting_pool
from memoryd_client.protocol import schema
from memoryd_client.protocol.validation import InvalidParams, validate

T = TypeVar("T")
AGENT_SEARCH_THREADS = 16  # agents searched at once, over all the searches of several agents running


def ping(m: Manager, _: schema.Ping) -> dict[str, Any]:
    return {"pong": True, **m.info()}


def _reading(runtime: AgentRuntime, read: Callable[[], T]) -> T:
    """A read of the agent's index; an index that cannot be read is rebuilt, and the caller told so."""
    try:
        return read()
    except IndexUnreadable as exc:
        runtime.request_sync()  # the sync sets the broken file aside and rebuilds
        raise RPCError("index_rebuilding", str(exc)) from None


def _search_one(runtime: AgentRuntime, request: schema.Search) -> SearchResponse:
    runtime.sync_if_dirty()
    return _reading(runtime, lambda: runtime.memory.run_search(request))


def search(m: Manager, request: schema.Search) -> dict[str, Any]:
    if request.agents:
        return _search_agents(m, request)
    runtime = m.runtime(request.agent)
    out = _search_one(runtime, request).as_dict()
    out["agent"] = runtime.agent.id
    return out


def _search_agents(m: Manager, request: schema.Search) -> dict[str, Any]:
    """One search over several agents at once (side by side, on threads kept between searches), merged by score.
    An agent that cannot answer (its store down, its namespace not granted) is listed in `skipped`; only when none
    answers is the search an error."""
    started = time.perf_counter()
    ids = list(dict.fromkeys([*([request.agent] if request.agent else []), *(request.agents or [])]))
    runtimes = [m.runtime(agent_id) for agent_id in ids]  # an unknown agent fails the whole search
    answered: list[tuple[str, SearchResponse]] = []
    skipped: list[Skipped] = []
    pool = lasting_pool("agent-search", AGENT_SEARCH_THREADS)
    futures = [(r.agent.id, pool.submit(_search_one, r, request)) for r in runtimes]
    for agent_id, future in futures:
        try:
            answered.append((agent_id, future.result()))
        except (RPCError, NotGranted, StoreUnavailable) as exc:
            error = exc if isinstance(exc, RPCError) else _store_error(exc)
            skipped.append(Skipped(agent_id, error.code, error.message))
    if not answered:
        raise RPCError(skipped[0].code, skipped[0].message)
    limit = request.max_results or max(r.agent.query.max_results for r in runtimes)
    return merge(answered, skipped, limit, round((time.perf_counter() - started) * 1000, 3))


def recall(m: Manager, request: schema.Recall) -> dict[str, Any]:
    runtime = m.runtime(request.agent)  # no sync first, as a search may do: a hook's time limit is short
    m.heard_from(request.client)  # after the agent is found: a call for an unknown agent changes nothing
    return _reading(runtime, lambda: m.recaller.recall(runtime.memory, request))


def recall_log(m: Manager, request: schema.RecallLog) -> dict[str, Any]:
    agent = m.config.agent(request.agent).id if request.agent is not None else None  # an unknown one: not_found
    limit = request.limit or schema.RECALL_LOG_LIMIT
    return {"entries": m.recaller.log.read(agent, request.session, limit, skipped=request.skipped)}


def get(m: Manager, request: schema.Get) -> dict[str, Any]:
    return m.runtime(request.agent).memory.get(request.path, request.from_ or 1, request.lines)


def write(m: Manager, request: schema.Write) -> dict[str, Any]:
    runtime = m.runtime(request.agent)
    return runtime.write(
        request.text, request.path, request.type, request.importance, request.supersedes, request.force
    )


def forget(m: Manager, request: schema.Forget) -> dict[str, Any]:
    runtime = m.runtime(request.agent)
    edits = runtime.memory.edits
    answer = edits.forget(
        request.citation, query=request.query, confirm=request.confirm, expect=request.expect, purge=request.purge
    )
    return runtime.edited(answer)


def update(m: Manager, request: schema.Update) -> dict[str, Any]:
    runtime = m.runtime(request.agent)
    return runtime.edited(runtime.memory.edits.update(request.citation, request.text, request.expect))


def undo(m: Manager, request: schema.Undo) -> dict[str, Any]:
    runtime = m.runtime(request.agent)
    return runtime.edited(runtime.memory.edits.undo(request.count, request.change))


def notes(m: Manager, request: schema.Notes) -> dict[str, Any]:
    runtime = m.runtime(request.agent)
    return _reading(runtime, lambda: runtime.memory.notes(request.path, request.day, request.limit))


def changes(m: Manager, request: schema.Changes) -> dict[str, Any]:
    runtime = m.runtime(request.agent)
    return {"agent": runtime.agent.id, "changes": runtime.memory.edits.list_changes(request.limit)}


def status(m: Manager, request: schema.Status) -> dict[str, Any]:
    shown, log = m.recaller.shown, m.recaller.log
    daemon = {**m.info(), "recall_sessions": {"sessions": len(shown), "bytes": shown.bytes}, "recall_log": log.size()}
    runtimes = [m.runtime(request.agent)] if request.agent is not None else list(m.runtimes.values())
    return {"daemon": daemon, "agents": [{**r.status(), "recall_log": log.counts(r.agent.id)} for r in runtimes]}


def sync(m: Manager, request: schema.Sync) -> dict[str, Any]:
    """Sync now and wait for it (and, with `vectors`, for the vectors it left to the embed job), at most
    `timeout` seconds; `done` says whether it finished in that time."""
    runtime = m.runtime(request.agent)
    m.heard_from(request.client)  # after the agent is found: a call for an unknown agent changes nothing
    wait = schema.DEFAULT_WAIT_SECONDS if request.timeout is None else request.timeout
    report, done = runtime.sync_now(force=request.force, timeout=wait, vectors=request.vectors)
    return {
        "agent": runtime.agent.id,
        "done": done,
        "report": report.as_dict() if report and done else None,
        "progress": runtime.sync_progress.as_dict() if runtime.sync_progress else None,
        "error": runtime.sync_error,
    }


def reindex(m: Manager, request: schema.Reindex) -> dict[str, Any]:
    """Start an atomic reindex; with `wait`, wait for it at most `timeout` seconds (`done` says if it ended)."""
    runtime = m.runtime(request.agent)
    started = runtime.start_reindex()
    timeout = schema.DEFAULT_WAIT_SECONDS if request.timeout is None else request.timeout
    done = runtime.wait_reindex(timeout) if request.wait else False
    progress = runtime.reindex_progress
    return {
        "agent": runtime.agent.id,
        "started": started,
        "done": done,
        "progress": progress.as_dict() if progress else None,
    }


def agents(m: Manager, _: schema.Agents) -> list[dict[str, Any]]:
    return [
        {
            "id": a.id,
            "workspace": str(a.workspace),
            "sources": list(a.sources),
            "default": a.id == m.config.default_agent.id,
        }
        for a in m.config.agents
    ]


IMPLEMENTATIONS: dict[str, Callable[[Manager, Any], Any]] = {
    "ping": ping,
    "search": search,
    "recall": recall,
    "recall_log": recall_log,
    "get": get,
    "write": write,
    "forget": forget,
    "update": update,
    "notes": notes,
    "undo": undo,
    "changes": changes,
    "status": status,
    "sync": sync,
    "reindex": reindex,
    "agents": agents,
}


def dispatch(manager: Manager, method: Any, params: Any) -> Any:
    """Run one method with msgpack-rpc params: positional arguments, or a single map of named ones."""
    if not isinstance(method, str) or method not in schema.METHODS:
        known = ", ".join(sorted(schema.METHODS))
        raise RPCError("method_not_found", f"unknown method {method!r}; known: {known}")
    if not isinstance(params, list):
        raise RPCError("invalid_params", "params must be an array")
    spec = schema.METHODS[method]
    try:
        if len(params) == 1 and isinstance(params[0], dict):
            if not all(isinstance(k, str) for k in params[0]):
                raise InvalidParams("named parameters need string keys")
            request = validate(spec, named=params[0])
        else:
            request = validate(spec, args=params)
        return IMPLEMENTATIONS[method](manager, request)
    except InvalidParams as exc:
        raise RPCError("invalid_params", str(exc)) from None
    except RPCError:
        raise
    except (SearchError, RequestError) as exc:
        raise RPCError("invalid_params", str(exc)) from None
    except ConfigError as exc:
        raise RPCError("not_found", str(exc)) from None
    except Stopping as exc:
        raise RPCError("stopping", str(exc)) from None
    except (NotGranted, StoreUnavailable) as exc:
        raise _store_error(exc) from None


def _store_error(exc: NotGranted | StoreUnavailable) -> RPCError:
    if isinstance(exc, NotGranted):
        return RPCError("forbidden", str(exc))
    return RPCError("store_busy" if isinstance(exc, StoreBusy) else "store_unavailable", str(exc))
