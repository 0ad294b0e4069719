"""The Codex integration against the real Codex CLI (npm @openai/codex, installed by `make node-deps`), its model
answered by a local server that speaks OpenAI's Responses API: one command installs the hooks, trusts them the
way Codex itself hashes them and adds the MCP server; a turn gets memories; the rollout is indexed when the
session ends; one command removes what was added and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memoryd.sources.transcripts import LineErrors, turns_of

from . import agent_loop
from . import daemon as d
from .fake_models import FakeResponses

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.slow
CODEX = agent_loop.NODE_BIN / "codex"
FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "codex.jsonl"
PROVIDER = """model = "gpt-test"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "{url}"
wire_api = "responses"
env_key = "FAKE_KEY"
"""


def test_codexs_rollout_format_gives_its_turns_only() -> None:
    """A rollout the real CLI wrote (trimmed): the prompt and the reply; not the developer instructions, the
    environment context Codex puts in a user turn, or the events around them."""
    lines = list(enumerate(FIXTURE.read_text(encoding="utf-8").splitlines(), 1))
    errors = LineErrors()
    turns = [(t.role, t.text) for t in turns_of(lines, errors)]
    assert turns == [("user", "what did we decide about auth?"), ("assistant", "Noted.")]
    assert errors.count == 0


@dataclass
class Setup(agent_loop.Loop):
    api: FakeResponses = field(default_factory=FakeResponses)

    def codex(self, prompt: str) -> subprocess.CompletedProcess[str]:
        return self.run(str(CODEX), "exec", "--skip-git-repo-check", prompt, env={"FAKE_KEY": "x"})


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    assert CODEX.exists(), "the Codex CLI is missing: make node-deps installs it"
    api = FakeResponses()
    config = {".codex/config.toml": PROVIDER.format(url=api.url)}
    loop = agent_loop.start(tmp_path_factory.mktemp("codex"), "codex", {"CODEX_HOME": ".codex"}, before=config)
    found = Setup(loop.daemon, loop.env, loop.home, loop.project, loop.installed, api)
    yield found
    api.close()
    d.cleanup(loop.daemon)


def test_install_trusts_its_hooks_and_keeps_the_users_config(setup: Setup) -> None:
    config = tomllib.loads((setup.home / ".codex" / "config.toml").read_text())
    assert config["model_providers"]["fake"]["wire_api"] == "responses"
    assert config["mcp_servers"]["memoryd"]["args"][:1] == ["mcp"]
    trusted = config["hooks"]["state"]
    assert len(trusted) == 4 and all(v["trusted_hash"].startswith("sha256:") for v in trusted.values())
    assert "note:" not in setup.installed.stdout


def test_a_turn_gets_memories_and_the_session_is_captured(setup: Setup) -> None:
    turn = setup.codex("Which database does Alice prefer for the billing service?")
    assert turn.returncode == 0, turn.stderr
    sent = setup.api.sent_texts()[-1]
    assert "<memoryd-recall>" in sent and "memory/2026-11-24.md#L" in sent and "Postgres over MySQL" in sent
    found = json.loads(setup.memctl("--json", "search", "Alice billing database", "--source", "sessions").stdout)
    assert any("rollout-" in r["path"] and "Alice" in r["snippet"] for r in found["results"])
    assert "<memoryd-recall>" not in json.dumps(found)
    quiet = setup.codex("thanks, looks good")
    assert quiet.returncode == 0 and "<memoryd-recall>" not in setup.api.sent_texts()[-1]


def test_remove_takes_out_only_what_install_put_in(setup: Setup) -> None:
    removed = setup.memctl("integrations", "remove", "codex")
    assert removed.returncode == 0, removed.stderr
    codex = setup.home / ".codex"
    assert not (codex / "hooks.json").exists()  # install created it for memoryd's hooks alone
    config = tomllib.loads((codex / "config.toml").read_text())
    assert "mcp_servers" not in config and "hooks" not in config
    assert config["model_providers"]["fake"]["base_url"] == setup.api.url
