"""The OpenClaw plugin (client/memoryd_client/assets/openclaw) through Node's test runner against the real openclaw
package (Node 24 and openclaw from npm, installed by `make node-deps`) and a real daemon; and `memctl
integrations install openclaw` as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd_client.stub import MemoryClient

from . import daemon as d
from .agent_loop import NODE_BIN, ROOT
from .conftest import write
from .test_autorecall import NOTES

pytestmark = pytest.mark.slow
NODE24 = ROOT / "tools" / "node" / "node_modules" / ".bin"
PLUGIN = ROOT / "client" / "memoryd_client" / "assets" / "openclaw"
# a note of its own for the plugin's forget, update and undo tests, so the other notes stay as they are
CURATED = {
    "memory/2026-11-26.md": "# 2026-11-26\n\n- The staging deploy window is Thursday 14:00 UTC.\n"
    "- The office plant is named Fernando.\n"
}


def environment(home: Path, daemon: d.Daemon) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "OPENCLAW"))}
    env.update(
        HOME=str(home),
        MEMORYD_SOCKET=str(daemon.socket),
        MEMORYD_DATA_DIR=str(daemon.data_dir),
        PATH=os.pathsep.join([str(NODE24), str(NODE_BIN), env.get("PATH", "")]),
    )
    return env


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    assert (NODE24 / "node").exists() and (NODE_BIN / "openclaw").exists(), (
        "make node-deps installs Node 24 and openclaw"
    )
    tmp = tmp_path_factory.mktemp("openclaw")
    for path, text in {**NOTES, **CURATED}.items():
        write(tmp / "ws" / path, text)
    daemon = d.start(tmp, tmp / "ws")
    with MemoryClient(daemon.socket) as client:  # a statement that a later one replaced: search marks it superseded
        newer = "We switched the CLI's auth from OAuth device flow to SSO."
        client.write(newer, supersedes="memory/2026-11-20.md#L3-L3")
    yield tmp, daemon
    d.cleanup(daemon)


def test_the_plugin_with_nodes_test_runner(running) -> None:  # type: ignore[no-untyped-def]
    tmp, daemon = running
    home = tmp / "node-home"
    home.mkdir()
    env = environment(home, daemon)
    env.update(
        EXPECT_PATH="memory/2026-11-24.md",
        EXPECT_TEXT="Postgres over MySQL",
        FORGET_CITATION="memory/2026-11-26.md#L3-L3",
        FORGET_TEXT="The staging deploy window is Thursday 14:00 UTC",
        TOOL_CITATION="memory/2026-11-26.md#L4-L4",
        TOOL_TEXT="The office plant is named Fernando",
        SUPERSEDED_QUERY="OAuth device flow for the CLI's auth",
    )
    done = subprocess.run(
        ["node", "--test", "test/*.test.mjs"], cwd=PLUGIN, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "ℹ fail 0" in done.stdout and "ℹ pass 14" in done.stdout


def test_memctl_installs_and_removes_the_openclaw_plugin(running) -> None:  # type: ignore[no-untyped-def]
    tmp, daemon = running
    home = tmp / "memctl-home"
    home.mkdir()
    env = environment(home, daemon)

    def memctl(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "memoryd_client.memctl", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)

    installed = memctl("integrations", "install", "openclaw")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert str(home / ".openclaw" / "agents") in installed.stdout
    found = subprocess.run(
        ["openclaw", "memory", "search", "--json", "payment_processor retries"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "memory/2026-11-22.md"
    rows = json.loads(memctl("integrations", "status", "--json").stdout)
    assert next(r for r in rows if r["platform"] == "openclaw")["installed"]
    removed = memctl("integrations", "remove", "openclaw")
    assert removed.returncode == 0, removed.stderr
    config = json.loads((home / ".openclaw" / "openclaw.json").read_text())
    assert config.get("plugins", {}).get("slots", {}).get("memory") != "memoryd"
