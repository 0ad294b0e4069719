"""Claude Code: a plugin in its skills folder, which it loads as `memoryd@skills-dir`."""

from __future__ import annotations

import json
import os
from typing import Any

from memoryd_client.integrations.common import (
    HOOK_SECONDS,
    SYNC_HOOK_SECONDS,
    agent_args,
    hook_command,
    memctl_command,
    version,
)
from memoryd_client.integrations.files import digest, missing_folders
from memoryd_client.integrations.marker import written
from memoryd_client.integrations.owned import check_ours, refuse_links
from memoryd_client.integrations.plan import Plan
from memoryd_client.integrations.transaction import Transaction

PLUGIN_NAME = "memoryd"


def claude_home() -> str:
    return os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude")


SKILL = """---
name: memoryd
description: Long-term memory of past sessions, decisions and notes. Use when the user asks what was decided,
  said or done before ("what did we decide about...", "last time", "remind me"), or before re-deciding
  something that may have been settled.
---

# memoryd

Relevant memories are added to prompts on their own, in a `<memoryd-recall>` block: read it first and cite what
you use as `path#Lx-Ly`. When that is not enough, `memory_search` finds more (any language; exact names work),
`memory_get` reads a cited file's lines, and `memory_write` saves a decision, a preference or a fact worth
keeping, one self-contained statement each. Before your context is compacted, save what must outlive it.
"""


README = """# memoryd for Claude Code

Installed by `memctl integrations install claude-code`; removed by `memctl integrations remove claude-code`.
Every prompt gets the memories that bear on it from the memoryd daemon (nothing for small talk or bare commands,
nothing it already showed in the session), a new session gets the latest dated notes, and the transcript is
synced before a compaction and at the end so the next session can recall it. The MCP server adds memory_search,
memory_get, memory_write and memory_status. A hook never blocks Claude Code: with the daemon down it adds
nothing and logs why (`memctl hook --log`).
"""


def claude_code_files(memctl: str, agent: str | None) -> dict[str, Any]:
    """The plugin's files, by path inside the plugin folder (Claude Code's plugin and hooks formats)."""
    chosen = agent_args(agent)

    def hook(event: str, seconds: int) -> list[dict[str, Any]]:
        command = hook_command(memctl, "claude-code", event, agent)
        return [{"hooks": [{"type": "command", "command": command, "timeout": seconds}]}]

    return {
        ".claude-plugin/plugin.json": {
            "name": PLUGIN_NAME,
            "version": version(),
            "description": "memoryd: memories recalled into every prompt, sessions captured, memory tools over MCP.",
            "author": {"name": "memoryd"},
            "license": "MIT",
            "skills": ["./"],
        },
        "hooks/hooks.json": {
            "description": "memoryd: recall on every prompt, recent notes at start, sync before compaction and at end",
            "hooks": {
                "UserPromptSubmit": hook("user-prompt-submit", HOOK_SECONDS),
                "SessionStart": hook("session-start", HOOK_SECONDS),
                "PreCompact": hook("pre-compact", SYNC_HOOK_SECONDS),
                "SessionEnd": hook("session-end", SYNC_HOOK_SECONDS),
            },
        },
        ".mcp.json": {"mcpServers": {PLUGIN_NAME: {"command": memctl, "args": ["mcp", "--autostart", *chosen]}}},
        "SKILL.md": SKILL,
        "README.md": README,
    }


def _encoded(content: str | dict[str, Any]) -> bytes:
    text = content if isinstance(content, str) else json.dumps(content, indent=2, ensure_ascii=False) + "\n"
    return text.encode("utf-8")


def plan_claude_code(agent: str | None, previous: dict[str, Any], tx: Transaction) -> Plan:
    """The plugin goes where Claude Code loads plugins of its own skills folder (`memoryd@skills-dir`), in a folder
    that holds nothing memoryd did not write."""
    root = os.path.join(claude_home(), "skills", PLUGIN_NAME)
    files = {os.path.join(root, r): _encoded(c) for r, c in claude_code_files(memctl_command(), agent).items()}
    folders = sorted({os.path.dirname(path) for path in files})
    refuse_links(folders)
    before = written(previous)
    for path in files:
        check_ours(path, before.get(path, []))
    transcripts = os.path.join(claude_home(), "projects")  # watched from now on, before Claude Code's first session

    def apply() -> list[str]:
        for path, data in files.items():
            tx.make_folders(os.path.dirname(path))
            tx.write(path, data)
        tx.make_folders(transcripts)
        return []

    created = [f for folder in [*folders, transcripts] for f in missing_folders(folder)]
    return Plan(
        apply,
        files=list(files),
        written={path: [digest(data)] for path, data in files.items()},
        folders=sorted(set(created)),
        transcripts=[transcripts],
    )
