"""Codex: hooks in its hooks.json (Claude Code's formats), trusted as Codex hashes them, and the MCP server in its
config.toml (one marked block)."""

from __future__ import annotations

import json
import os
import shutil
import threading

from memoryd.client.integrations.common import HOOK_SECONDS, SYNC_HOOK_SECONDS, memctl_command, version
from memoryd.client.integrations.files import read_json, read_text, write_json, write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def codex_home() -> str:
    return os.path.expanduser(os.environ.get("CODEX_HOME") or "~/.codex")


CODEX_EVENTS = {  # Codex's hook events, which take Claude Code's input and output formats
    "UserPromptSubmit": ("user-prompt-submit", HOOK_SECONDS),
    "SessionStart": ("session-start", HOOK_SECONDS),
    "PreCompact": ("pre-compact", SYNC_HOOK_SECONDS),
    "SessionEnd": ("session-end", SYNC_HOOK_SECONDS),
}
BLOCK_START = "# >>> memoryd: written by `memctl integrations install codex`; removed by `... remove codex`"
BLOCK_END = "# <<< memoryd"


def _ours(group: Any, memctl_marker: str) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(memctl_marker in str(h.get("command", "")) for h in hooks)


def install_codex(agent: str | None) -> dict[str, Any]:
    """Hooks in Codex's hooks.json (beside any others there), the MCP server and the hooks' trust in its
    config.toml (one marked block), and its rollouts (`sessions/`) as the agent's transcripts."""
    home = codex_home()
    memctl = memctl_command()
    where = f" --agent '{agent}'" if agent else ""
    hooks_path = os.path.join(home, "hooks.json")
    existing = read_json(hooks_path)
    table = existing.get("hooks", {})
    if not isinstance(table, dict):
        raise ValueError(f"{hooks_path}: 'hooks' is not an object: fix or move it, then install again")
    for event, (name, seconds) in CODEX_EVENTS.items():
        groups = [g for g in table.get(event, []) if not _ours(g, " hook codex ")]
        command = f"'{memctl}' hook codex {name}{where}"
        groups.append({"hooks": [{"type": "command", "command": command, "timeout": seconds}]})
        table[event] = groups
    write_json(hooks_path, {**existing, "hooks": table})
    config = os.path.join(home, "config.toml")
    _strip_block(config)
    text = read_text(config)
    lines = [BLOCK_START]
    if "[mcp_servers.memoryd]" not in text:
        args = json.dumps(["mcp", "--autostart", *(["--agent", agent] if agent else [])])
        lines += ["[mcp_servers.memoryd]", f"command = {json.dumps(memctl)}", f"args = {args}"]
    trusted, note = codex_trust(home)
    for key, digest in trusted.items():
        lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}"]
    lines.append(BLOCK_END)
    write_text(config, text + ("\n" if text and not text.endswith("\n") else "") + "\n".join(lines) + "\n")
    sessions = os.path.join(home, "sessions")
    os.makedirs(sessions, exist_ok=True)
    notes = [note] if note else []
    return {"folders": [], "files": [], "edited": [hooks_path, config], "transcripts": [sessions], "notes": notes}


REVIEW = "Codex runs new hooks once you review them: start `codex` and accept memoryd's hooks (/hooks)"


def codex_trust(home: str, seconds: float = 30.0) -> tuple[dict[str, str], str]:
    """The trust entries of memoryd's hooks as Codex itself hashes them (its app server's `hooks/list`), and a
    note when they could not be had: Codex runs a new hook only once it is trusted."""
    import subprocess

    codex = shutil.which("codex")
    if codex is None:
        return {}, f"codex is not on PATH, so its hooks could not be trusted here. {REVIEW}"
    hello = {"clientInfo": {"name": "memoryd", "version": version()}}
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [home]}},
    ]
    try:
        server = subprocess.Popen(
            [codex, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "CODEX_HOME": home},
        )
    except OSError as exc:
        return {}, f"codex app-server could not start ({exc}). {REVIEW}"
    watchdog = threading.Timer(seconds, server.kill)  # it answers in well under a second; never wait forever
    watchdog.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(json.dumps(c) + "\n" for c in calls))
        server.stdin.flush()
        for line in server.stdout:  # the stdin stays open until the answer: at its end the server quits
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == 2:
                hooks = [h for entry in (message.get("result") or {}).get("data", []) for h in entry.get("hooks", [])]
                ours = {h["key"]: h["currentHash"] for h in hooks if " hook codex " in str(h.get("command", ""))}
                if ours:
                    return ours, ""
                break
    except OSError:
        pass
    finally:
        watchdog.cancel()
        server.kill()
        server.wait()
    return {}, f"codex app-server did not list memoryd's hooks. {REVIEW}"


def _strip_block(config: str) -> bool:
    """Take out the block install wrote; whether there was one."""
    text = read_text(config)
    start, end = text.find(BLOCK_START), text.find(BLOCK_END)
    if not 0 <= start < end:
        return False
    write_text(config, text[:start] + text[end + len(BLOCK_END) :].lstrip("\n"))
    return True


def remove_codex(marker: dict[str, Any]) -> list[str]:
    home = codex_home()
    removed = []
    hooks_path = os.path.join(home, "hooks.json")
    existing = read_json(hooks_path)
    table = existing.get("hooks")
    if isinstance(table, dict):
        for event in list(table):
            kept = [g for g in table[event] if not _ours(g, " hook codex ")] if isinstance(table[event], list) else None
            if kept is not None and len(kept) != len(table[event]):
                removed.append(f"{hooks_path}: {event}")
                if kept:
                    table[event] = kept
                else:
                    del table[event]
        write_json(hooks_path, existing)
    config = os.path.join(home, "config.toml")
    if _strip_block(config):
        removed.append(f"{config}: memoryd's MCP server and hook trust")
    return removed
