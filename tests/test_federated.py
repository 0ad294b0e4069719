"""One search over several agents: merged by score through a real daemon, each hit naming its agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.search.federated import Skipped, merge
from memoryd.search.hybrid import SearchResponse
from memoryd.search.results import SearchResult
from memoryd_client.stub import RemoteError
from tests.conftest import write
from tests.daemon import cleanup, start


def _response(*hits: tuple[str, float]) -> SearchResponse:
    results = [
        SearchResult(path, 1, 2, score, None, score, "text", "memory", f"{path}#L1-L2", i, 1, 2)
        for i, (path, score) in enumerate(hits)
    ]
    return SearchResponse(results, "keyword", None, None, 1.0, "adaptive")


def test_merge_orders_by_score_and_names_agents() -> None:
    answered = [
        ("me", _response(("a.md", 0.9), ("b.md", 0.3))),
        ("team", _response(("c.md", 0.95), ("d.md", 0.3), ("e.md", 0.1))),
    ]
    out = merge(answered, [Skipped("secret", "forbidden", "not granted")], 4, 2.5)
    assert [(r["agent"], r["path"]) for r in out["results"]] == [
        ("team", "c.md"),
        ("me", "a.md"),
        ("me", "b.md"),  # a tie keeps the order the agents were asked in
        ("team", "d.md"),
    ]
    assert out["agents"] == ["me", "team"] and out["took_ms"] == 2.5
    assert out["skipped"] == [{"agent": "secret", "code": "forbidden", "message": "not granted"}]
    assert "secret: forbidden" in out["degraded"]


def _two_agents(tmp: Path) -> tuple[Path, Path, str]:
    mine, team = tmp / "mine", tmp / "team"
    write(mine / "MEMORY.md", "# Me\n\nI prefer the quokka release train for the billing service.\n")
    write(mine / "memory" / "other.md", "# Other\n\nNothing about trains or billing here at all.\n")
    write(team / "MEMORY.md", "# Team\n\nThe team moved the quokka cache to Valkey after the outage.\n")
    agents = "".join(
        f'[[agents]]\nid = "{name}"\nworkspace = "{path}"\n[agents.embedding]\nprovider = "hash"\n'
        for name, path in (("me", mine), ("team", team))
    )
    return mine, team, agents


@pytest.mark.slow
def test_daemon_searches_several_agents(tmp_path: Path) -> None:
    mine, _, agents = _two_agents(tmp_path)
    daemon = start(tmp_path, mine, extra=agents, agent=False)
    try:
        with daemon.client() as client:
            both = client.search("quokka", agents=["me", "team"], mode="keyword")
            assert {(hit.extra["agent"], hit.path) for hit in both} == {("me", "MEMORY.md"), ("team", "MEMORY.md")}
            assert both.raw["agents"] == ["me", "team"] and both.raw["skipped"] == []
            team_hit = next(hit for hit in both if hit.extra["agent"] == "team")
            assert "Valkey" in client.get(team_hit.path, agent="team")["text"]
            alone = client.search("quokka", mode="keyword")
            assert [hit.extra.get("agent") for hit in alone] == [None]  # one agent: hits as before
            with pytest.raises(RemoteError) as unknown:
                client.search("quokka", agents=["me", "nobody"])
            assert unknown.value.code == "not_found"
        env = {**os.environ, "MEMORYD_SOCKET": str(daemon.socket)}
        memctl = [sys.executable, "-m", "memoryd_client.memctl"]
        shown = subprocess.run(
            [*memctl, "search", "quokka", "--agents", "me", "--agents", "team", "--mode", "keyword"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "(agent team)" in shown and "(agent me)" in shown
        raw = subprocess.run(
            [*memctl, "--json", "search", "quokka", "--agents", "team"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert [hit["agent"] for hit in json.loads(raw)["results"]] == ["team"]
    finally:
        cleanup(daemon)
