"""OpenClaw: memoryd's memory plugin, linked, enabled and given the memory slot by OpenClaw's own CLI."""

from __future__ import annotations

import os
import shutil
from typing import Any

from memoryd_client.integrations.files import missing_folders
from memoryd_client.integrations.plan import Plan
from memoryd_client.integrations.transaction import Transaction


def openclaw_state_dir() -> str:
    if os.environ.get("OPENCLAW_STATE_DIR"):
        return os.path.expanduser(os.environ["OPENCLAW_STATE_DIR"])
    return os.path.join(os.path.expanduser(os.environ.get("OPENCLAW_HOME") or "~"), ".openclaw")


def openclaw_plugin_dir() -> str:
    from importlib.resources import files

    return str(files("memoryd_client") / "assets" / "openclaw")


def _openclaw(*args: str) -> str:
    """Run the openclaw CLI; its output, or a ValueError that says what failed."""
    import subprocess

    openclaw = shutil.which("openclaw")
    if openclaw is None:
        raise ValueError("openclaw is not on PATH: install OpenClaw (npm i -g openclaw), then run this again")
    try:
        done = subprocess.run([openclaw, *args], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(f"openclaw {' '.join(args[:2])} failed: {exc}") from None
    if done.returncode != 0:
        raise ValueError(f"openclaw {' '.join(args[:2])} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    return done.stdout


def plan_openclaw(agent: str | None, previous: dict[str, Any], tx: Transaction) -> Plan:
    """memoryd's OpenClaw plugin, linked by OpenClaw itself (so it is the plugin of this memoryd, upgraded with
    it), enabled and given the memory slot; OpenClaw's session transcripts indexed as the agent's sessions."""
    transcripts = os.path.join(openclaw_state_dir(), "agents")

    def apply() -> list[str]:
        _openclaw("plugins", "install", "--force", "--accept-capabilities", "--link", openclaw_plugin_dir())
        tx.undo_with("the OpenClaw plugin memoryd", _uninstall)
        _openclaw("plugins", "enable", "memoryd")  # an earlier remove left it disabled
        _openclaw("config", "set", "plugins.slots.memory", "memoryd")
        # the recall before each reply is a before_prompt_build hook, which OpenClaw lets a plugin it did not bundle
        # run only with conversation access: installing memoryd's memory plugin is asking for it
        _openclaw("config", "set", "plugins.entries.memoryd.hooks.allowConversationAccess", "true")
        if agent:
            _openclaw("config", "set", "plugins.entries.memoryd.config.agent", agent)
        tx.make_folders(transcripts)
        return []

    return Plan(apply, folders=missing_folders(transcripts), transcripts=[transcripts])


def _uninstall() -> None:
    _openclaw("plugins", "uninstall", "--force", "memoryd")


def remove_openclaw(marker: dict[str, Any], tx: Transaction) -> list[str]:
    _uninstall()
    return ["the OpenClaw plugin memoryd (OpenClaw's built-in memory takes the slot back)"]
