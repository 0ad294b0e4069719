"""The metrics endpoint (`[daemon] metrics_port`): off by default; on, Prometheus text with every method's timings
and errors and each agent's state, parsed by prometheus_client's own parser, for this user's processes only."""

from __future__ import annotations

import os
import socket
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from memoryd_client.stub import RemoteError

from . import daemon as d
from .conftest import python_for_anyone, run_as, write

pytestmark = pytest.mark.slow  # real daemon processes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        text = answer.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


OTHER_USER_PROBE = """
import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).status)
except Exception as exc:
    print("refused", type(exc).__name__)
"""


# Another user's connection from a local port whose earlier socket lies in TIME_WAIT (owned by uid 0 in
# /proc/net/tcp): the owner check once read that row and took the connection for root's.
TIME_WAIT_PROBE = """
import socket, sys, time
port = int(sys.argv[1])
decoy = socket.socket(); decoy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
decoy.bind(("127.0.0.2", port)); decoy.listen(8)
answers = []
for _ in range(5):
    first = socket.socket(); first.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    first.bind(("127.0.0.1", 0)); local = first.getsockname()[1]
    first.connect(("127.0.0.2", port)); accepted, _ = decoy.accept()
    first.close(); accepted.close(); time.sleep(0.05)
    again = socket.socket(); again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    again.bind(("127.0.0.1", local)); again.settimeout(5)
    again.connect(("127.0.0.1", port)); again.sendall(b"GET /metrics HTTP/1.0\\r\\n\\r\\n")
    try:
        answers.append(again.recv(12).decode(errors="replace") or "closed")
    except OSError:
        answers.append("closed")
print(",".join(answers))
"""


def test_metrics_time_every_method_and_show_each_agent(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "memory" / "ops.md", "# Ops\n\nThe deploy agent moved the cache to Valkey.\n")
    port = _free_port()
    daemon = d.start(tmp_path, workspace, extra=f"metrics_port = {port}\n")
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        with daemon.client() as client:
            assert client.status()["daemon"]["metrics"] == {"url": url, "error": None}
        with daemon.client() as client:
            for _ in range(3):
                assert client.search("valkey").results
            client.recall("what cache do we use now?")
            with pytest.raises(RemoteError):
                client.get("../outside.md")
        found = _samples(url)
        assert found[("memoryd_request_duration_seconds_count", (("method", "search"),))] >= 3
        assert found[("memoryd_request_duration_seconds_count", (("method", "recall"),))] == 1
        assert found[("memoryd_request_errors_total", (("code", "invalid_params"), ("method", "get")))] == 1
        assert found[("memoryd_files", (("agent", "main"),))] == daemon.status()["files"] >= 1
        assert found[("memoryd_store_up", (("agent", "main"),))] == 1
        assert found[("memoryd_role", (("agent", "main"), ("role", "writer")))] == 1
        assert found[("memoryd_embedding_backlog", (("agent", "main"),))] == 0
        assert found[("memoryd_resident_memory_bytes", ())] > 10 * 2**20
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        assert "Valkey" not in text and "valkey" not in text  # nothing of memory's text
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10)
    finally:
        d.cleanup(daemon)


def test_metrics_are_off_by_default(tmp_path: Path, workspace: Path) -> None:
    daemon = d.start(tmp_path, workspace)
    try:
        with daemon.client() as client:
            assert client.status()["daemon"]["metrics"]["url"] is None
    finally:
        d.cleanup(daemon)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a probe as another user")
def test_another_user_may_scrape_only_when_named(tmp_path: Path, workspace: Path) -> None:
    """Another local user's connection is closed, unless `metrics_users` names that user; a name no local user
    has is a config error."""
    import pwd

    from memoryd.config import ConfigError, load_config

    nobody = pwd.getpwuid(65534).pw_name
    port = _free_port()
    (tmp_path / "closed").mkdir()
    closed = d.start(tmp_path / "closed", workspace, extra=f"metrics_port = {port}\n")
    try:
        probe = run_as(65534, 65534, [python_for_anyone(), "-c", OTHER_USER_PROBE, f"http://127.0.0.1:{port}/metrics"])
        assert probe.stdout.startswith("refused"), probe.stdout + probe.stderr
        spoof = run_as(65534, 65534, [python_for_anyone(), "-c", TIME_WAIT_PROBE, str(port)])
        assert spoof.stdout.strip() == ",".join(["closed"] * 5), spoof.stdout + spoof.stderr
    finally:
        d.cleanup(closed)
    daemon = d.start(tmp_path, workspace, extra=f'metrics_port = {port}\nmetrics_users = ["{nobody}"]\n')
    try:
        probe = run_as(65534, 65534, [python_for_anyone(), "-c", OTHER_USER_PROBE, f"http://127.0.0.1:{port}/metrics"])
        assert probe.stdout.strip() == "200", probe.stdout + probe.stderr
    finally:
        d.cleanup(daemon)
    bad = tmp_path / "bad.toml"
    bad.write_text('[daemon]\nmetrics_users = ["no-such-user-here"]\n')
    with pytest.raises(ConfigError, match="metrics_users: no local user 'no-such-user-here'"):
        load_config(bad)
