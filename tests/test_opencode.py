"""The OpenCode integration against the real OpenCode CLI (npm opencode-ai, installed by `make node-deps`), its
model answered by a local server that speaks OpenAI's Chat Completions API: one command installs memoryd's plugin
and MCP server; a turn gets memories in its system prompt; the plugin writes the session where memoryd indexes
it; one command removes what was added and nothing else."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from . import agent_loop
from . import daemon as d
from .fake_models import FakeChat

pytestmark = pytest.mark.slow
OPENCODE = agent_loop.NODE_BIN / "opencode"


def provider(url: str) -> str:
    fake = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": url, "apiKey": "x"}}
    return json.dumps({"provider": {"fake": {**fake, "models": {"m1": {"name": "m1"}}}}, "model": "fake/m1"})


@dataclass
class Setup(agent_loop.Loop):
    api: FakeChat = field(default_factory=FakeChat)

    def opencode(self, prompt: str) -> subprocess.CompletedProcess[str]:
        return self.run(str(OPENCODE), "run", prompt)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    assert OPENCODE.exists(), "the OpenCode CLI is missing: make node-deps installs it"
    api = FakeChat()
    homes = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share", "XDG_CACHE_HOME": ".cache"}
    config = {".config/opencode/opencode.json": provider(api.url)}
    loop = agent_loop.start(tmp_path_factory.mktemp("opencode"), "opencode", homes, before=config)
    found = Setup(loop.daemon, loop.env, loop.home, loop.project, loop.installed, api)
    yield found
    api.close()
    d.cleanup(loop.daemon)


def test_a_turn_gets_memories_and_the_session_is_captured(setup: Setup) -> None:
    settings = json.loads((setup.home / ".config" / "opencode" / "opencode.json").read_text())
    assert settings["mcp"]["memoryd"]["command"][1:2] == ["mcp"] and settings["model"] == "fake/m1"
    turn = setup.opencode("Which database does Alice prefer for the billing service?")
    assert turn.returncode == 0, turn.stdout + turn.stderr
    sent = setup.api.sent_texts()[-1]
    assert "<memoryd-recall>" in sent and "memory/2026-11-24.md#L" in sent and "Postgres over MySQL" in sent
    found = json.loads(setup.memctl("--json", "search", "Alice billing database", "--source", "sessions").stdout)
    assert any("transcripts/opencode/ses_" in r["path"] and "Alice" in r["snippet"] for r in found["results"])
    assert "<memoryd-recall>" not in json.dumps(found)
    quiet = setup.opencode("thanks, looks good")
    assert quiet.returncode == 0 and "<memoryd-recall>" not in setup.api.sent_texts()[-1]


def test_remove_takes_out_only_what_install_put_in(setup: Setup) -> None:
    removed = setup.memctl("integrations", "remove", "opencode")
    assert removed.returncode == 0, removed.stderr
    folder = setup.home / ".config" / "opencode"
    assert not (folder / "plugin" / "memoryd.js").exists()
    settings = json.loads((folder / "opencode.json").read_text())
    assert "mcp" not in settings and settings["provider"]["fake"]["options"]["baseURL"] == setup.api.url
