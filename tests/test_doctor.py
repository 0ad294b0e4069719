"""`memoryd doctor`: a line per check, with what to do, against a real daemon and without one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd_client.stub import MemoryClient

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model


def _doctor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memoryd.daemon.cli", "doctor", *args], capture_output=True, text=True, timeout=120
    )


def test_doctor_reports_each_part_with_and_without_the_daemon(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    daemon = d.start(tmp_path, workspace)
    try:
        live = _doctor("--config", str(daemon.config))
        assert live.returncode == 0, live.stdout + live.stderr
        assert f"ok    daemon: pid {daemon.proc.pid} on {daemon.socket}" in live.stdout
        assert "ok    agent main watcher: watching" in live.stdout
        assert "ok    agent main index: 1 files, 1 chunks" in live.stdout
        other = tmp_path / "other"
        other.mkdir()
        mismatch = _doctor(
            "--workspace", str(other), "--socket", str(daemon.socket), "--data-dir", str(daemon.data_dir)
        )
        assert f"the running daemon serves {workspace}; this config says {other}" in mismatch.stdout
        assert f"ok    agent main workspace: {workspace}" in mismatch.stdout
    finally:
        d.cleanup(daemon)
    offline = _doctor("--config", str(daemon.config))
    assert offline.returncode == 0 and "warn  daemon: not running" in offline.stdout
    assert "agent main index: 1 files, 1 chunks, integrity ok" in offline.stdout
    index = daemon.data_dir / "agents" / "main" / "index.sqlite"
    index.write_bytes(b"not a database" * 100)
    broken = _doctor("--config", str(daemon.config))
    assert broken.returncode == 1 and "FAIL  agent main index" in broken.stdout and "->" in broken.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text(f'[[agents]]\nid = "a"\nworkspace = "{tmp_path / "nowhere"}"\n')
    failed = _doctor("--config", str(bad))
    assert failed.returncode == 1 and "does not exist" in failed.stdout


def test_doctor_says_which_integrations_are_installed_and_whether_their_hooks_called(
    tmp_path: Path, workspace: Path
) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    transcripts = tmp_path / "claude-projects"
    transcripts.mkdir()
    marker = {"platform": "claude-code", "agent": None, "transcripts": [str(transcripts)], "files": []}
    write(tmp_path / "data" / "integrations" / "claude-code.json", json.dumps(marker))
    daemon = d.start(tmp_path, workspace)
    try:
        quiet = _doctor("--config", str(daemon.config))
        assert "warn  integration claude-code: installed, but no hook has reached the daemon" in quiet.stdout
        with MemoryClient(daemon.socket) as client:
            assert "sessions" in client.agents()[0]["sources"]  # the marker's transcripts are the agent's sessions
            client.request("recall", prompt="what did we decide about auth?", client="claude-code")
        heard = _doctor("--config", str(daemon.config))
        assert "ok    integration claude-code: installed; its hooks reached the daemon" in heard.stdout
    finally:
        d.cleanup(daemon)
    write(tmp_path / "data" / "integrations" / "codex.json", "{not json")
    broken = _doctor("--config", str(daemon.config))
    assert broken.returncode == 1 and "codex.json: not an integration marker" in broken.stdout


def test_doctor_says_how_to_prepare_a_named_model_that_is_missing(tmp_path: Path, workspace: Path) -> None:
    config = tmp_path / "config.toml"
    body = f'data_dir = "{tmp_path / "data"}"\nsocket = "{tmp_path / "s.sock"}"\n[[agents]]\nid = "main"\n'
    body += f'workspace = "{workspace}"\n[agents.embedding]\nprovider = "auto"\nmodel = "embeddinggemma-300m:f16"\n'
    config.write_text(body)
    found = _doctor("--config", str(config), "--no-integrity")
    assert found.returncode == 1, "a named model that is not there is a failure, not a quiet fallback"
    assert "embeddinggemma-300m.f16.gguf does not exist" in found.stdout
    assert "memoryd model prepare --model embeddinggemma-300m --quant f16 --accept-terms" in found.stdout
