"""Codex: hooks in its hooks.json (Claude Code's formats), trusted as Codex hashes them, and the MCP server in its
config.toml (one marked block, codex_config)."""

from __future__ import annotations

import json
import os
import shutil
import threading
from typing import Any

from memoryd_client.integrations.codex_config import with_block, without_block
from memoryd_client.integrations.common import (
    HOOK_SECONDS,
    SYNC_HOOK_SECONDS,
    hook_command,
    is_hook_command,
    memctl_command,
    version,
)
from memoryd_client.integrations.files import decode, missing_folders
from memoryd_client.integrations.jsonc import Document, plain
from memoryd_client.integrations.marker import created, strings
from memoryd_client.integrations.owned import leave_edited
from memoryd_client.integrations.plan import Plan
from memoryd_client.integrations.transaction import Transaction


def codex_home() -> str:
    return os.path.expanduser(os.environ.get("CODEX_HOME") or "~/.codex")


CODEX_EVENTS = {  # Codex's hook events, which take Claude Code's input and output formats
    "UserPromptSubmit": ("user-prompt-submit", HOOK_SECONDS),
    "SessionStart": ("session-start", HOOK_SECONDS),
    "PreCompact": ("pre-compact", SYNC_HOOK_SECONDS),
    "SessionEnd": ("session-end", SYNC_HOOK_SECONDS),
}


def is_our_group(group: Any) -> bool:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return (
        isinstance(handlers, list)
        and bool(handlers)
        and all(isinstance(h, dict) and is_hook_command(h.get("command"), "codex") for h in handlers)
    )


def check_hooks_shape(doc: Document) -> None:
    """The parts of hooks.json memoryd edits must have Codex's shape: anything else is refused, not guessed at."""
    doc.container([], is_object=True)
    if doc.container(["hooks"], is_object=True) is None:
        return
    for event in CODEX_EVENTS:
        groups = doc.container(["hooks", event], is_object=False)
        for index in range(len(groups.children or []) if groups else 0):
            doc.container(["hooks", event, index], is_object=True)
            handlers = doc.container(["hooks", event, index, "hooks"], is_object=False)
            for handler in range(len(handlers.children or []) if handlers else 0):
                doc.container(["hooks", event, index, "hooks", handler], is_object=True)


def drop_our_groups(doc: Document, event: str) -> int:
    """Take memoryd's groups out of an event's list; how many there were."""
    dropped = 0
    while True:
        groups = doc.find(["hooks", event])
        if groups is None or groups.is_object or groups.children is None:
            return dropped
        ours = [i for i, child in enumerate(groups.children) if is_our_group(plain(child.node))]
        if not ours:
            return dropped
        doc.drop(["hooks", event], ours[0])
        dropped += 1


def add_our_groups(doc: Document, groups: dict[str, dict[str, Any]]) -> list[list[str]]:
    """doc with memoryd's group last in each event's list (an earlier install's taken out); the keys it added."""
    if doc.find(["hooks"]) is None:
        doc.add([], {event: [group] for event, group in groups.items()}, key="hooks")
        return [["hooks"], *(["hooks", event] for event in groups)]
    added = []
    for event, group in groups.items():
        if doc.find(["hooks", event]) is None:
            doc.add(["hooks"], [group], key=event)
            added.append(["hooks", event])
        else:
            drop_our_groups(doc, event)
            doc.add(["hooks", event], group)
    return added


def plan_codex(agent: str | None, previous: dict[str, Any], tx: Transaction) -> Plan:
    """Hooks in Codex's hooks.json (beside any others there), the MCP server and the hooks' trust in its
    config.toml (one marked block), and its rollouts (`sessions/`) as the agent's transcripts."""
    home = codex_home()
    hooks_path, config_path = os.path.join(home, "hooks.json"), os.path.join(home, "config.toml")
    sessions = os.path.join(home, "sessions")
    memctl = memctl_command()
    groups = {
        event: {"hooks": [{"type": "command", "command": hook_command(memctl, "codex", name, agent), "timeout": limit}]}
        for event, (name, limit) in CODEX_EVENTS.items()
    }
    hooks_text = decode(hooks_path, tx.read(hooks_path))
    hooks = Document(hooks_path, "{}\n" if hooks_text is None else hooks_text)
    check_hooks_shape(hooks)
    added = add_our_groups(hooks, groups)
    config_text = decode(config_path, tx.read(config_path))
    user_config = without_block(config_path, config_text or "", config_path in strings(previous, "newline_added"))
    _, joined, notes = with_block(config_path, user_config, memctl, agent, {})

    def apply() -> list[str]:
        tx.make_folders(home)
        tx.write(hooks_path, hooks.text.encode("utf-8"))
        trusted, note = codex_trust(home)
        text, _, trust_notes = with_block(config_path, user_config, memctl, agent, trusted)
        tx.write(config_path, text.encode("utf-8"))
        tx.make_folders(sessions)
        return [n for n in [note, *trust_notes] if n and n not in notes]

    new_files = [path for path, text in [(hooks_path, hooks_text), (config_path, config_text)] if text is None]
    return Plan(
        apply,
        edited=[hooks_path, config_path],
        created={hooks_path: added},
        new_files=new_files,
        folders=sorted({*missing_folders(home), *missing_folders(sessions)}),
        transcripts=[sessions],
        notes=notes,
        extra={
            "hooks_file": hooks_path,
            "config_file": config_path,
            "newline_added": [config_path] if joined else [],
        },
    )


def remove_codex(marker: dict[str, Any], tx: Transaction) -> list[str]:
    """memoryd's hooks out of hooks.json and its block out of config.toml; a file install created goes when
    nothing else is in it."""
    home = codex_home()
    hooks_path = marker.get("hooks_file") or os.path.join(home, "hooks.json")
    config_path = marker.get("config_file") or os.path.join(home, "config.toml")
    return _remove_hooks(str(hooks_path), marker, tx) + _remove_block(str(config_path), marker, tx)


def _remove_hooks(path: str, marker: dict[str, Any], tx: Transaction) -> list[str]:
    text = decode(path, tx.read(path))
    if text is None:
        return []
    doc = Document(path, text)
    is_table = doc.root.is_object and doc.find(["hooks"]) is not None
    removed = [f"{path}: {event}" for event in CODEX_EVENTS if is_table and drop_our_groups(doc, event)]
    for keys in sorted(created(marker, path), key=len, reverse=True):
        doc.drop_if_empty(list(keys))
    return removed + leave_edited(path, text, doc.text, doc.root.children == [], strings(marker, "new_files"), tx)


def _remove_block(path: str, marker: dict[str, Any], tx: Transaction) -> list[str]:
    text = decode(path, tx.read(path))
    if text is None:
        return []
    left = without_block(path, text, path in strings(marker, "newline_added"))
    removed = [f"{path}: memoryd's MCP server and hook trust"] if left != text else []
    return removed + leave_edited(path, text, left, not left.strip(), strings(marker, "new_files"), tx)


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
                ours = {h["key"]: h["currentHash"] for h in hooks if is_hook_command(h.get("command"), "codex")}
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
