"""`memctl mcp`: an MCP server for agent runtimes, a thin bridge to the daemon (it never opens an index)."""

from __future__ import annotations

import contextlib
import inspect
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from memoryd_client.protocol.schema import METHODS
from memoryd_client.protocol.validation import annotation
from memoryd_client.render import dated, forget_text, hit_citation, write_text
from memoryd_client.stub import ClientError, DaemonNotRunning, MemoryClient, RemoteError

DEFAULT_BUDGET = 4000

SEARCH_DESCRIPTION = (
    "Search the long-term memory (Markdown notes and past conversations). Use it BEFORE answering anything about "
    "prior work, decisions, dates, people, preferences or todos, and whenever the user says 'remember', 'last "
    "time' or 'what did we decide'. Returns the best snippets, each with a citation path#Lstart-Lend and a score "
    "mostly from 0 to 1 (notes marked important up to 1.5); cite the path when you use a snippet, and call "
    "memory_get for more lines around it."
)
GET_DESCRIPTION = (
    "Read lines of a memory file, e.g. after memory_search returned path#L10-L20: memory_get(path, from=10, "
    "lines=30), with the agent the result names, if any. Only files inside the agent's memory can be read."
)
WRITE_DESCRIPTION = (
    "Save something worth remembering (a decision, a preference, a fact about a person, a todo) to today's "
    "memory note. Write one self-contained statement with its date and context. Optional type: episodic "
    "(events), semantic (facts), procedural (how-tos), lore (timeless); importance 0..1. Returns its citation."
)
FORGET_DESCRIPTION = (
    "Forget a memory the user asks you to forget, or one that is wrong: pass the citation memory_search gave "
    "(path#Lstart-Lend) or a note's path. Or pass `query` alone: you get the matches and a `confirm` token; show "
    "them to the user, and call again with the same query and that token to forget exactly those. A conversation "
    "transcript is never edited: its lines are kept out of search. The user can undo it (memctl undo)."
)
UPDATE_DESCRIPTION = (
    "Correct a memory in place: replace exactly the cited lines (path#Lstart-Lend) with new text. `expect` is the "
    "text you read there (from memory_get, or the snippet if it showed the whole lines) or its hash; if the lines "
    "changed since, nothing is written and you get their current text. To record that a fact changed while "
    "keeping its history, prefer memory_write with `supersedes`."
)
STATUS_DESCRIPTION = "Health of the memory service: files and chunks indexed, embedding provider, pending work."


def compact_results(raw: dict[str, Any], budget: int) -> str:
    """Snippets with citations and scores, cut to a character budget so they fit in a prompt."""
    results = raw.get("results", [])
    if not results:
        note = f" ({raw['degraded']})" if raw.get("degraded") else ""
        return f"No memories matched.{note}"
    parts: list[str] = []
    used = 0
    for hit in results:
        head = (
            f"[{hit['score']:.2f}] {hit_citation(hit['citation'], hit)}{dated(hit.get('date'), hit.get('superseded'))}"
        )
        room = budget - used - len(head) - 2
        if room < 40:
            parts.append(f"... {len(results) - len(parts)} more results cut (budget {budget} characters)")
            break
        snippet = hit["snippet"].strip()
        if len(snippet) > room:
            snippet = snippet[: room - 1] + "…"
        parts.append(f"{head}\n{snippet}")
        used += len(parts[-1]) + 2
    return "\n\n".join(parts)


class Bridge:
    """Calls into the daemon for the MCP tools; optionally starts the daemon when it is not running."""

    def __init__(self, socket: str | None, agent: str | None, budget: int, autostart: bool) -> None:
        self.socket, self.agent, self.budget, self.autostart = socket, agent, budget, autostart

    def call(self, method: str, **params: Any) -> Any:
        from mcp.server.mcpserver.exceptions import ToolError

        params = {k: v for k, v in params.items() if v is not None}
        if self.agent:
            params.setdefault("agent", self.agent)
        try:
            try:
                with MemoryClient(self.socket) as client:
                    return client.call(method, params)
            except DaemonNotRunning as exc:
                if not self.autostart:
                    raise
                if exc.elsewhere:  # a daemon owns the data dir on another socket: use it, never start a second
                    print(f"memoryd already runs on {exc.elsewhere['socket']}; using it", file=sys.stderr)
                    self.socket = str(exc.elsewhere["socket"])
                else:
                    self._start_daemon()
                with MemoryClient(self.socket) as client:
                    return client.call(method, params)
        except RemoteError as exc:
            raise ToolError(f"memory {method} failed: {exc.message}") from None
        except ClientError as exc:
            raise ToolError(str(exc)) from None

    def _start_daemon(self) -> None:
        exe = shutil.which("memoryd") or str(Path(sys.executable).with_name("memoryd"))
        cmd = [exe, "run"] + (["--socket", self.socket] if self.socket else [])
        subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with MemoryClient(self.socket, timeout=5) as client:
                    client.ping()
                return
            except ClientError:
                time.sleep(0.2)


def tool_signature(method: str) -> inspect.Signature:
    """The MCP tool's arguments: the method's parameters the schema offers to agents, with their types, bounds and
    help (a parameter whose wire name is a Python keyword, `from`, goes by its alias; the SDK passes it so)."""
    params = []
    for spec in METHODS[method].params:
        if not spec.mcp:
            continue
        typ = annotation(spec, strict=False)
        if spec.wire != spec.name:
            typ = Annotated[typ, Field(alias=spec.wire)]
        default = inspect.Parameter.empty if spec.required else spec.default
        params.append(inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=typ))
    return inspect.Signature(params, return_annotation=str)


def build_server(bridge: Bridge) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "memoryd",
        instructions="Long-term memory for this agent. Search it before answering questions about the past.",
    )

    def memory_search(**arguments: Any) -> str:
        return compact_results(bridge.call("search", **arguments), bridge.budget)

    def memory_get(**arguments: Any) -> str:
        got = bridge.call("get", **arguments)
        head = f"{got['path']}#L{got['from']}-L{got['from'] + max(got['lines'], 1) - 1} ({got['total_lines']} lines)"
        return f"{head}\n{got['text']}"

    def memory_write(**arguments: Any) -> str:
        text = write_text(bridge.call("write", **arguments), "Saved as")
        return text[0].upper() + text[1:]

    def memory_forget(**arguments: Any) -> str:
        return forget_text(bridge.call("forget", **arguments))

    def memory_update(**arguments: Any) -> str:
        done = bridge.call("update", **arguments)
        if done.get("conflict"):
            current = done["current"]
            return f"Not changed: {done['conflict']}. Current text of {current['citation']}:\n{current['text']}"
        return f"Updated; now {done.get('citation') or 'removed'}"

    for tool, method, description in (
        (memory_search, "search", SEARCH_DESCRIPTION),
        (memory_get, "get", GET_DESCRIPTION),
        (memory_write, "write", WRITE_DESCRIPTION),
        (memory_forget, "forget", FORGET_DESCRIPTION),
        (memory_update, "update", UPDATE_DESCRIPTION),
    ):
        tool.__signature__ = tool_signature(method)  # type: ignore[attr-defined]
        server.add_tool(tool, name=f"memory_{method}", description=description)

    @server.tool(name="memory_status", description=STATUS_DESCRIPTION)
    def memory_status() -> str:
        state = bridge.call("status")
        lines = []
        for agent in state["agents"]:
            vectors = (
                f"{agent['provider']}/{agent['model']}"
                if agent.get("vector_available")
                else f"keyword-only ({agent.get('fallback_reason')})"
            )
            lines.append(
                f"{agent['agent']}: {agent['files']} files, {agent['chunks']} chunks; search: {vectors}; "
                f"syncing: {agent.get('syncing')}; watcher: {agent.get('watcher')}"
            )
        return "\n".join(lines)

    return server


def serve(socket: str | None, agent: str | None, budget: int, autostart: bool, http_port: int | None) -> None:
    bridge = Bridge(socket or os.environ.get("MEMORYD_SOCKET"), agent, budget, autostart)
    server = build_server(bridge)
    if http_port is not None:
        serve_http(server, http_port)
    else:
        server.run("stdio")


def serve_http(server: Any, port: int) -> None:
    """Streamable HTTP on 127.0.0.1, for this user alone: every request carries the token (memoryd_client.http_gate)."""
    import uvicorn

    from memoryd_client.http_gate import TokenGate, guarded_protocol, load_token, token_path
    from memoryd_client.protocol.paths import default_data_dir

    where = token_path(default_data_dir())
    try:
        token = load_token(where)
    except OSError as exc:
        raise SystemExit(f"memctl mcp --http: {exc}") from None
    print(
        f"memoryd MCP on http://127.0.0.1:{port}/mcp for this user only: each request needs the header"
        f" 'Authorization: Bearer <the token in {where}>'",
        file=sys.stderr,
        flush=True,
    )
    app = TokenGate(server.streamable_http_app(host="127.0.0.1"), token, port)
    _more_descriptors()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", http=guarded_protocol(port))


def _more_descriptors() -> None:
    """Open files up to the hard limit, as the daemon does: each client holds one."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and wanted > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
