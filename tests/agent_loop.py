"""An agent platform's real CLI beside a real daemon, as a user sets them up: `memctl integrations install` run
first with the platform's home in a temporary folder, then the daemon, which reads the integration's marker."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import daemon as d
from .conftest import write
from .test_autorecall import NOTES

ROOT = Path(__file__).resolve().parents[1]
NODE_BIN = ROOT / "node_modules" / ".bin"
# transcripts reach the index only through the hooks' syncs: no debounce or size trigger gets there first
QUIET = "session_debounce_seconds = 600\nsession_sync_bytes = 100000000\nsession_sync_messages = 100000"


@dataclass
class Loop:
    daemon: d.Daemon
    env: dict[str, str]
    home: Path
    project: Path
    installed: subprocess.CompletedProcess[str]

    def memctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "memoryd_client.memctl", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=60, env=self.env)

    def run(self, *command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(command),
            capture_output=True,
            text=True,
            timeout=180,
            env={**self.env, **(env or {})},
            cwd=self.project,
        )


def start(tmp: Path, platform: str, home_env: dict[str, str], before: dict[str, str] | None = None) -> Loop:
    """`home_env`: the platform's own variables, relative to its temporary home (CLAUDE_CONFIG_DIR=".claude");
    `before`: files to write in that home before the install (a config the platform needs)."""
    ws, home, data, project = tmp / "ws", tmp / "home", tmp / "data", tmp / "project"
    for path, text in NOTES.items():
        write(ws / path, text)
    for path, text in (before or {}).items():
        write(home / path, text)
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "CLAUDE", "ANTHROPIC", "CODEX"))}
    env.update(HOME=str(home), MEMORYD_DATA_DIR=str(data), PATH=f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}")
    env.update({name: str(home / relative) for name, relative in home_env.items()})
    command = [sys.executable, "-m", "memoryd_client.memctl", "integrations", "install", platform]
    installed = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    daemon = d.start(tmp, ws, data_dir=data, extra=QUIET)
    env["MEMORYD_SOCKET"] = str(daemon.socket)
    return Loop(daemon, env, home, project, installed)
