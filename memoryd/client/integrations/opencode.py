"""OpenCode: a plugin module in its plugin folder, and the MCP server in opencode.json."""

from __future__ import annotations

import json
import os

from memoryd.client.integrations.common import memctl_command
from memoryd.client.integrations.files import read_json, write_json, write_text
from memoryd.protocol.paths import default_data_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def opencode_config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "opencode")


def install_opencode(agent: str | None) -> dict[str, Any]:
    """A plugin module in OpenCode's plugin folder (recall into the turn's system prompt, transcripts written
    where memoryd indexes them, a reminder to save durable facts before a compaction) and the MCP server in
    opencode.json."""
    from importlib.resources import files

    folder = opencode_config_dir()
    transcripts = os.path.join(default_data_dir(), "transcripts", "opencode")
    os.makedirs(transcripts, exist_ok=True)
    source = files("memoryd.client").joinpath("assets", "opencode-memoryd.js").read_text(encoding="utf-8")
    memctl = memctl_command()
    values = {
        "__MEMCTL__": json.dumps(memctl),
        "__AGENT_ARGS__": json.dumps(["--agent", agent] if agent else []),
        "__TRANSCRIPTS__": json.dumps(transcripts),
    }
    for placeholder, value in values.items():
        source = source.replace(placeholder, value)
    plugin = os.path.join(folder, "plugin", "memoryd.js")
    write_text(plugin, source)
    notes, edited = [], []
    if os.path.exists(os.path.join(folder, "opencode.jsonc")):
        notes.append("opencode.jsonc holds comments memoryd will not rewrite: add the MCP server yourself (README)")
    else:
        config = os.path.join(folder, "opencode.json")
        settings = read_json(config)
        servers = settings.setdefault("mcp", {})
        if isinstance(servers, dict) and "memoryd" not in servers:
            command = [memctl, "mcp", "--autostart", *(["--agent", agent] if agent else [])]
            servers["memoryd"] = {"type": "local", "command": command, "enabled": True}
            settings.setdefault("$schema", "https://opencode.ai/config.json")
            write_json(config, settings)
            edited.append(config)
    return {"folders": [], "files": [plugin], "edited": edited, "transcripts": [transcripts], "notes": notes}


def remove_opencode(marker: dict[str, Any]) -> list[str]:
    removed = []
    for config in marker.get("edited", []):
        settings = read_json(config)
        servers = settings.get("mcp")
        if isinstance(servers, dict) and servers.pop("memoryd", None) is not None:
            if not servers:
                del settings["mcp"]
            write_json(config, settings)
            removed.append(f"{config}: mcp.memoryd")
    return removed
