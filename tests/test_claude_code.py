"""The Claude Code integration against the real Claude Code CLI (npm @anthropic-ai/claude-code, installed by
`make node-deps`), its model answered by a local server that speaks Anthropic's Messages API: one command installs
the plugin, Claude Code's own validator accepts it, a turn gets memories through the UserPromptSubmit hook, the
transcript is indexed when the session ends, and one command removes it all."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memoryd.sources.transcripts import LineErrors, turns_of

from . import agent_loop
from . import daemon as d
from .fake_models import FakeAnthropic

pytestmark = pytest.mark.slow
CLAUDE = agent_loop.NODE_BIN / "claude"
FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code.jsonl"


def test_claude_codes_transcript_format_gives_its_turns_only() -> None:
    """A transcript the real CLI wrote (trimmed): the user's prompt and the reply, none of the request copies,
    attachments or bookkeeping lines around them."""
    lines = list(enumerate(FIXTURE.read_text(encoding="utf-8").splitlines(), 1))
    errors = LineErrors()
    turns = [(t.role, t.text) for t in turns_of(lines, errors)]
    assert turns == [("user", "What does Alice prefer for invoices?"), ("assistant", "OK from fake")]
    assert errors.count == 0


@dataclass
class Setup(agent_loop.Loop):
    api: FakeAnthropic = field(default_factory=FakeAnthropic)

    def claude(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(str(CLAUDE), *args, env={"ANTHROPIC_BASE_URL": self.api.url, "ANTHROPIC_API_KEY": "sk-ant-x"})


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    assert CLAUDE.exists(), "the Claude Code CLI is missing: make node-deps installs it"
    loop = agent_loop.start(tmp_path_factory.mktemp("claude"), "claude-code", {"CLAUDE_CONFIG_DIR": ".claude"})
    found = Setup(loop.daemon, loop.env, loop.home, loop.project, loop.installed)
    yield found
    found.api.close()
    d.cleanup(loop.daemon)


def test_the_plugin_passes_claude_codes_own_validation(setup: Setup) -> None:
    plugin = setup.home / ".claude" / "skills" / "memoryd"
    checked = subprocess.run(
        [str(CLAUDE), "plugin", "validate", "--strict", str(plugin)], capture_output=True, text=True, env=setup.env
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    listed = json.loads(
        subprocess.run(
            [str(CLAUDE), "plugin", "list", "--json"], capture_output=True, text=True, env=setup.env, check=True
        ).stdout
    )
    ours = [p for p in listed if p["id"] == "memoryd@skills-dir"]
    assert ours and ours[0]["enabled"]


def test_a_turn_gets_memories_and_the_session_is_captured(setup: Setup) -> None:
    turn = setup.claude("-p", "Which database does Alice prefer for the billing service?")
    assert turn.returncode == 0, turn.stderr
    sent = setup.api.sent_texts()[-1]
    assert "<memoryd-recall>" in sent and "memory/2026-11-24.md#L" in sent and "Postgres over MySQL" in sent
    transcripts = list((setup.home / ".claude" / "projects").rglob("*.jsonl"))
    assert transcripts, "Claude Code wrote no transcript"
    found = json.loads(setup.memctl("--json", "search", "Alice billing database", "--source", "sessions").stdout)
    assert any(r["path"].endswith(".jsonl") and "Alice" in r["snippet"] for r in found["results"])
    assert "<memoryd-recall>" not in json.dumps(found)  # what recall injected is not captured as new words
    quiet = setup.claude("-p", "thanks, looks good")
    assert quiet.returncode == 0 and "<memoryd-recall>" not in setup.api.sent_texts()[-1]
    heard = json.loads(setup.memctl("integrations", "status", "--json").stdout)
    row = next(r for r in heard if r["platform"] == "claude-code")
    assert row["installed"] and row["calls"] >= 3


def test_remove_takes_out_what_install_put_in(setup: Setup) -> None:
    removed = setup.memctl("integrations", "remove", "claude-code")
    assert removed.returncode == 0 and "skills/memoryd" in removed.stdout
    assert not (setup.home / ".claude" / "skills" / "memoryd").exists()
    listed = subprocess.run(
        [str(CLAUDE), "plugin", "list", "--json"], capture_output=True, text=True, env=setup.env, check=True
    ).stdout
    assert "memoryd@skills-dir" not in listed
    assert "claude-code" not in os.listdir(Path(setup.env["MEMORYD_DATA_DIR"]) / "integrations")
