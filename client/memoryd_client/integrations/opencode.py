"""OpenCode: a plugin module in its plugin folder, and the MCP server in its opencode.json (or opencode.jsonc)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from memoryd_client.integrations.common import agent_args, memctl_command
from memoryd_client.integrations.files import decode, digest, missing_folders
from memoryd_client.integrations.jsonc import Document, Keys, plain
from memoryd_client.integrations.marker import created, strings, written
from memoryd_client.integrations.owned import check_ours, leave_edited
from memoryd_client.integrations.plan import Plan
from memoryd_client.integrations.transaction import Transaction
from memoryd_client.protocol.paths import default_data_dir

PLACEHOLDER = re.compile(r"__(?:MEMCTL|AGENT_ARGS|TRANSCRIPTS)__")
SERVER: Keys = ["mcp", "memoryd"]


def opencode_config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "opencode")


def plugin_source(memctl: str, agent: str | None, transcripts: str) -> str:
    from importlib.resources import files

    source = (files("memoryd_client") / "assets" / "opencode-memoryd.js").read_text(encoding="utf-8")
    values = {
        "__MEMCTL__": json.dumps(memctl),
        "__AGENT_ARGS__": json.dumps(agent_args(agent)),
        "__TRANSCRIPTS__": json.dumps(transcripts),
    }
    return PLACEHOLDER.sub(lambda found: values[found.group()], source)


def _servers(marker: dict[str, Any]) -> dict[str, Any]:
    """The MCP server entry memoryd added, by config file."""
    found = marker.get("mcp_servers")
    return {p: v for p, v in found.items() if isinstance(p, str)} if isinstance(found, dict) else {}


def plan_opencode(agent: str | None, previous: dict[str, Any], tx: Transaction) -> Plan:
    """A plugin module in OpenCode's plugin folder (recall into the turn's system prompt, transcripts written
    where memoryd indexes them, a reminder to save durable facts before a compaction) and the MCP server in
    opencode.jsonc when there is one, else opencode.json (OpenCode reads both as JSONC: comments stay)."""
    folder = opencode_config_dir()
    transcripts = os.path.join(default_data_dir(), "transcripts", "opencode")
    memctl = memctl_command()
    plugin = os.path.join(folder, "plugin", "memoryd.js")
    source = plugin_source(memctl, agent, transcripts).encode("utf-8")
    before = written(previous)
    check_ours(plugin, before.get(plugin, []))
    jsonc = os.path.join(folder, "opencode.jsonc")
    config = jsonc if os.path.lexists(jsonc) else os.path.join(folder, "opencode.json")
    text = decode(config, tx.read(config))
    doc = Document(config, "{}\n" if text is None else text, comments=True)
    doc.container([], is_object=True)
    doc.container(["mcp"], is_object=True)
    server = {"type": "local", "command": [memctl, "mcp", "--autostart", *agent_args(agent)], "enabled": True}
    existing, ours_before = doc.find(SERVER), _servers(previous).get(config)
    ours = existing is None or plain(existing) == ours_before
    notes = [] if ours else [f"{config} already has an MCP server named memoryd: left as it is"]
    added = []
    if ours:
        _drop_server(doc)
        if doc.find(["mcp"]) is None:
            doc.add([], {"memoryd": server}, key="mcp")
            added.append(["mcp"])
        else:
            doc.add(["mcp"], server, key="memoryd")

    def apply() -> list[str]:
        tx.make_folders(os.path.dirname(plugin))
        tx.write(plugin, source)
        if ours:
            tx.make_folders(folder)
            tx.write(config, doc.text.encode("utf-8"))
        tx.make_folders(transcripts)
        return []

    edited = [config] if ours else []
    return Plan(
        apply,
        files=[plugin],
        written={plugin: [digest(source)]},
        edited=edited,
        created={config: added} if edited else {},
        new_files=[config] if ours and text is None else [],
        folders=sorted({*missing_folders(os.path.dirname(plugin)), *missing_folders(transcripts)}),
        transcripts=[transcripts],
        notes=notes,
        extra={"mcp_servers": {config: server} if ours else {}},
    )


def _drop_server(doc: Document) -> None:
    servers = doc.find(["mcp"])
    if servers is None or not servers.is_object:
        return
    for index, child in enumerate(servers.children or []):
        if child.key == "memoryd":
            doc.drop(["mcp"], index)
            return


def remove_opencode(marker: dict[str, Any], tx: Transaction) -> list[str]:
    """The MCP server out of the config it went into, when it is still the one memoryd added."""
    removed = []
    for config, server in _servers(marker).items():
        text = decode(config, tx.read(config))
        if text is None:
            continue
        doc = Document(config, text, comments=True)
        existing = doc.find(SERVER) if doc.root.is_object else None
        if existing is not None and plain(existing) == server:
            _drop_server(doc)
            removed.append(f"{config}: mcp.memoryd")
        elif existing is not None:
            removed.append(f"nothing from {config}: its mcp.memoryd changed since memoryd added it, so it stays")
        for keys in sorted(created(marker, config), key=len, reverse=True):
            doc.drop_if_empty(list(keys))
        removed += leave_edited(config, text, doc.text, doc.root.children == [], strings(marker, "new_files"), tx)
    return removed
