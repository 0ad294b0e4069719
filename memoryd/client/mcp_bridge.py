"""`memctl mcp`: an MCP server for agent runtimes, a thin bridge to the daemon (it never opens an index)."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from memoryd.client.stub import ClientError, DaemonNotRunning, MemoryClient, RemoteError

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
    "lines=30). Only files inside the agent's memory can be read."
)
WRITE_DESCRIPTION = (
    "Save something worth remembering (a decision, a preference, a fact about a person, a todo) to today's "
    "memory note. Write one self-contained statement with its date and context. Optional type: episodic "
    "(events), semantic (facts), procedural (how-tos), lore (timeless); importance 0..1. Returns its citation."
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
        head = f"[{hit['score']:.2f}] {hit['citation']}"
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


def build_server(bridge: Bridge) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "memoryd",
        instructions="Long-term memory for this agent. Search it before answering questions about the past.",
    )

    @server.tool(name="memory_search", description=SEARCH_DESCRIPTION)
    def memory_search(
        query: Annotated[str, Field(description="What to recall, in any language; exact names and ids work too")],
        max_results: Annotated[int | None, Field(ge=1, le=50, description="How many snippets (default 6)")] = None,
        min_score: Annotated[float | None, Field(description="Drop snippets scoring below this")] = None,
        sources: Annotated[list[str] | None, Field(description="'memory' (notes) and/or 'sessions' (chats)")] = None,
        path: Annotated[str | None, Field(description="Only files under this prefix or matching this glob")] = None,
        after: Annotated[str | None, Field(description="Only memories from this date (YYYY-MM-DD) on")] = None,
        before: Annotated[str | None, Field(description="Only memories up to this date (YYYY-MM-DD)")] = None,
        type: Annotated[str | None, Field(description="episodic, semantic, procedural or lore")] = None,
    ) -> str:
        raw = bridge.call(
            "search",
            query=query,
            max_results=max_results,
            min_score=min_score,
            sources=sources,
            path=path,
            after=after,
            before=before,
            type=type,
        )
        return compact_results(raw, bridge.budget)

    def memory_get_schema(
        path: Annotated[str, Field(description="A path from a citation, e.g. memory/2026-01-05.md")],
        start: Annotated[int | None, Field(alias="from", ge=1, description="First line (1-based)")] = None,
        lines: Annotated[int | None, Field(ge=1, le=2000, description="How many lines")] = None,
    ) -> str:
        got = bridge.call("get", path=path, **{"from": start}, lines=lines)
        head = f"{got['path']}#L{got['from']}-L{got['from'] + max(got['lines'], 1) - 1} ({got['total_lines']} lines)"
        return f"{head}\n{got['text']}"

    def memory_get(**arguments: Any) -> str:
        """The SDK passes the argument by its protocol name, `from`, a Python keyword."""
        return memory_get_schema(arguments["path"], arguments.get("from"), arguments.get("lines"))

    memory_get.__signature__ = inspect.signature(memory_get_schema, eval_str=True)  # type: ignore[attr-defined]
    server.add_tool(memory_get, name="memory_get", description=GET_DESCRIPTION)

    @server.tool(name="memory_write", description=WRITE_DESCRIPTION)
    def memory_write(
        text: Annotated[str, Field(min_length=1, description="What to remember")],
        type: Annotated[str | None, Field(description="episodic, semantic, procedural or lore")] = None,
        importance: Annotated[float | None, Field(ge=0, le=1, description="0 (trivia) .. 1 (critical)")] = None,
        path: Annotated[str | None, Field(description="Note under memory/ (default: today's note)")] = None,
    ) -> str:
        done = bridge.call("write", text=text, type=type, importance=importance, path=path)
        return f"Saved as {done['citation']}"

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
        server.run("streamable-http", host="127.0.0.1", port=http_port)
    else:
        server.run("stdio")
