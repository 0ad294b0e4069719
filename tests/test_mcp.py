"""`memctl mcp` as a subprocess, driven by the MCP SDK's own stdio client, against a real daemon."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import daemon as d
from .conftest import write

mcp = pytest.importorskip("mcp", reason="the MCP SDK comes with `pip install -e .[dev]`")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model

TOOLS = {"memory_search", "memory_get", "memory_write", "memory_forget", "memory_update", "memory_status"}


def run_session(socket: Path, calls: list[tuple[str, dict[str, Any]]], *extra: str) -> tuple[list[Any], list[Any]]:
    """Start `memctl mcp`, list its tools, make the calls; returns (tools, results)."""

    async def main() -> tuple[list[Any], list[Any]]:
        env = {**os.environ, "MEMORYD_DATA_DIR": str(socket.parent)}  # not a daemon the user runs elsewhere
        params = StdioServerParameters(
            command=sys.executable,
            env=env,
            args=["-m", "memoryd_client.memctl", "--socket", str(socket), "mcp", *extra],
        )
        async with stdio_client(params) as (read, write_stream), ClientSession(read, write_stream) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            results = [await session.call_tool(name, arguments) for name, arguments in calls]
            return tools, results

    return asyncio.run(main())


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[d.Daemon]:
    tmp = tmp_path_factory.mktemp("mcp")
    ws = tmp / "ws"
    write(ws / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    daemon = d.start(tmp, ws)
    yield daemon
    d.cleanup(daemon)


def test_tools_are_listed_and_each_works(running: d.Daemon) -> None:
    tools, results = run_session(
        running.socket,
        [
            ("memory_write", {"text": "Alice prefers Helix as her editor.", "type": "semantic", "importance": 0.8}),
            ("memory_search", {"query": "which editor does Alice use?"}),
            ("memory_search", {"query": "JWT expiry", "path": "MEMORY.md", "max_results": 1}),
            ("memory_get", {"path": "MEMORY.md", "from": 2, "lines": 1}),
            ("memory_status", {}),
        ],
    )
    assert {t.name for t in tools} == TOOLS
    search = next(t for t in tools if t.name == "memory_search")
    assert "BEFORE answering" in search.description and "path#Lstart-Lend" in search.description
    assert set(search.input_schema["properties"]) >= {"query", "max_results", "min_score", "sources", "after"}
    assert "from" in next(t for t in tools if t.name == "memory_get").input_schema["properties"]
    wrote, found, filtered, got, status = results
    assert not any(r.is_error for r in results), [text_of(r) for r in results]
    citation = text_of(wrote).removeprefix("Saved as ")
    assert citation.startswith("memory/") and citation.endswith("#L1-L2")
    assert citation in text_of(found) and "Helix" in text_of(found)
    assert text_of(filtered).startswith("[") and "MEMORY.md#L1-L2" in text_of(filtered)
    assert text_of(got) == "MEMORY.md#L2-L2 (2 lines)\nWe decided to use JWT with 24h expiry."
    assert "files" in text_of(status) and "chunks" in text_of(status)


def test_bad_arguments_and_budget(running: d.Daemon) -> None:
    _, results = run_session(
        running.socket,
        [
            ("memory_search", {}),
            ("memory_get", {"path": "../../etc/passwd"}),
            ("memory_write", {"text": "x", "type": "gossip"}),
            ("memory_search", {"query": "JWT"}),
        ],
        "--budget",
        "60",
    )
    missing, escape, bad_type, small = results
    assert missing.is_error and "query" in text_of(missing)
    assert escape.is_error and "not a file inside" in text_of(escape) and "Traceback" not in text_of(escape)
    assert bad_type.is_error and "episodic" in text_of(bad_type)
    assert not small.is_error and len(text_of(small)) <= 120


def test_daemon_down_is_one_clear_error(tmp_path: Path) -> None:
    _, results = run_session(tmp_path / "nobody.sock", [("memory_search", {"query": "anything"})])
    message = text_of(results[0])
    assert results[0].is_error and "memoryd is not running" in message and "memoryd run" in message
    assert "Traceback" not in message and message.count("\n") == 0


def test_recall_prompt_names_the_real_tools() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memoryd_client.memctl", "prompt"], capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("## Memory recall")
    named = set(re.findall(r"\bmemory_[a-z]+", out))
    assert named and named <= TOOLS
    assert "memory_search" in named and "memory_write" in named and "path#Lstart-Lend" in out


def test_streamable_http_on_loopback(running: d.Daemon, tmp_path: Path) -> None:
    import socket as socketlib

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    with socketlib.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data_dir = tmp_path / "client-data"
    server = subprocess.Popen(
        [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(running.socket), "mcp", "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MEMORYD_DATA_DIR": str(data_dir)},
    )

    async def main(token: str) -> str:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write_stream),
            ClientSession(read, write_stream) as session,
        ):
            await session.initialize()
            result = await session.call_tool("memory_search", {"query": "JWT expiry"})
            return text_of(result)

    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socketlib.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        token = (data_dir / "mcp-http.token").read_text().strip()
        assert "MEMORY.md#L1-L2" in asyncio.run(main(token))
    finally:
        server.terminate()
        server.wait(10)


def test_autostart_starts_the_daemon(tmp_path: Path) -> None:
    import os
    import signal

    workspace = tmp_path / "ws"
    write(workspace / "MEMORY.md", "# Pets\nThe cat is called Miso.\n")
    run_dir = d.short_dir()
    socket = run_dir / "auto.sock"
    config = d.write_config(tmp_path / "config.toml", workspace=workspace, data_dir=tmp_path / "data", socket=socket)

    async def main() -> str:
        env = {**os.environ, "MEMORYD_CONFIG": str(config)}
        params = StdioServerParameters(
            command=sys.executable,
            env=env,
            args=["-m", "memoryd_client.memctl", "--socket", str(socket), "mcp", "--autostart"],
        )
        async with stdio_client(params) as (read, write_stream), ClientSession(read, write_stream) as session:
            await session.initialize()
            return text_of(await session.call_tool("memory_search", {"query": "cat name"}))

    try:
        assert "MEMORY.md#L1-L2" in asyncio.run(main())
    finally:
        pid_file = socket.with_name(socket.name + ".lock")
        pid = int(pid_file.read_text().strip()) if pid_file.exists() else None
        if pid:
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not socket.exists():
                    break
                time.sleep(0.1)


def test_autostart_finds_the_running_daemon_instead_of_starting_a_second(tmp_path: Path) -> None:
    """`MEMORYD_SOCKET=x.sock memctl mcp --autostart` beside a running daemon started a second one on the same
    data dir, which emptied the first's index. It now finds the daemon that holds the data dir and uses it."""
    import os

    workspace = tmp_path / "ws"
    write(workspace / "MEMORY.md", "# Pets\nThe cat is called Miso.\n")
    data = tmp_path / "data"
    running = d.start(tmp_path, workspace, data_dir=data)
    other = d.short_dir() / "other.sock"
    try:

        async def main() -> str:
            env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
            env.update({"MEMORYD_SOCKET": str(other), "MEMORYD_DATA_DIR": str(data)})
            params = StdioServerParameters(
                command=sys.executable, env=env, args=["-m", "memoryd_client.memctl", "mcp", "--autostart"]
            )
            async with stdio_client(params) as (read, write_stream), ClientSession(read, write_stream) as session:
                await session.initialize()
                return text_of(await session.call_tool("memory_search", {"query": "cat name"}))

        assert "MEMORY.md#L1-L2" in asyncio.run(main())
        assert not other.exists()  # no second daemon
        assert running.proc.poll() is None and running.status()["files"] == 1
    finally:
        d.cleanup(running)


def test_mcp_memctl_and_rpc_rank_alike_in_any_language(tmp_path: Path) -> None:
    """The same questions, in several languages, through the RPC, `memctl search --json` and the MCP tool: the
    same citations in the same order."""
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Auth\n\nWe decided to use JWT with 24h expiry for the payment service.\n")
    write(ws / "memory" / "vi.md", "# Thanh toán\n\nHệ thống thanh toán chuyển sang máy chủ mới ở Hà Nội.\n")
    write(ws / "memory" / "zh.md", "# 服务器\n\n我们决定使用北京的服务器来处理支付。\n")
    write(ws / "memory" / "ops.md", "# Cache\n\nThe deploy agent moved the cache to Valkey after the outage.\n")
    questions = ["what did we decide about auth?", "thanh toán ở đâu", "支付服务器", "where is the payment server"]
    daemon = d.start(tmp_path, ws)
    try:
        with daemon.client() as client:
            by_rpc = [[hit.citation for hit in client.search(q)] for q in questions]
        by_memctl = []
        for q in questions:
            out = subprocess.run(
                [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(daemon.socket), "--json", "search", q],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            by_memctl.append([hit["citation"] for hit in json.loads(out)["results"]])
        _, results = run_session(daemon.socket, [("memory_search", {"query": q}) for q in questions])
        by_mcp = [re.findall(r"^\[[\d.]+\] (\S+#L\d+-L\d+)", text_of(r), re.M) for r in results]
        assert any(by_rpc) and by_rpc == by_memctl == by_mcp
    finally:
        d.cleanup(daemon)
