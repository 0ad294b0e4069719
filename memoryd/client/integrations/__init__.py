"""`memctl integrations install|remove|status PLATFORM`: put memoryd in an agent platform's loop with one command.

Installing writes the platform's own files (a Claude Code plugin, Codex's hooks and config, an OpenCode plugin;
OpenClaw's plugin through OpenClaw's CLI) with this memctl's absolute path in them, and a marker in memoryd's data
dir that names the platform's transcript folder: the daemon reads the markers when it starts (or on SIGHUP) and
indexes those transcripts as the agent's sessions. Removing deletes what installing wrote and nothing else."""

from __future__ import annotations

import json
import os
import shutil
import time

from memoryd.client.integrations.claude_code import install_claude_code
from memoryd.client.integrations.codex import install_codex, remove_codex
from memoryd.client.integrations.files import write_json
from memoryd.client.integrations.openclaw import install_openclaw, remove_openclaw
from memoryd.client.integrations.opencode import install_opencode, remove_opencode
from memoryd.protocol.paths import INTEGRATIONS, default_data_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def markers_dir(data_dir: str | None = None) -> str:
    return os.path.join(data_dir or default_data_dir(), INTEGRATIONS)


def marker_path(platform: str, data_dir: str | None = None) -> str:
    return os.path.join(markers_dir(data_dir), f"{platform}.json")


INSTALLERS = {
    "claude-code": install_claude_code,
    "codex": install_codex,
    "opencode": install_opencode,
    "openclaw": install_openclaw,
}
REMOVERS = {"codex": remove_codex, "opencode": remove_opencode, "openclaw": remove_openclaw}


def install(platform: str, agent: str | None = None, data_dir: str | None = None) -> dict[str, Any]:
    placed = INSTALLERS[platform](agent)
    marker = {"platform": platform, "agent": agent, "installed_at": round(time.time(), 3), **placed}
    write_json(marker_path(platform, data_dir), marker)
    return marker


def installed(platform: str, data_dir: str | None = None) -> dict[str, Any] | None:
    try:
        with open(marker_path(platform, data_dir), encoding="utf-8") as fh:
            marker = json.load(fh)
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def remove(platform: str, data_dir: str | None = None) -> list[str]:
    """Delete what install wrote (its folders, its files, its entries in files it edited) and the marker; what
    was removed."""
    marker = installed(platform, data_dir) or {}
    removed = REMOVERS[platform](marker) if platform in REMOVERS and marker else []
    for folder in marker.get("folders", []):
        if os.path.isdir(folder):
            shutil.rmtree(folder)
            removed.append(folder)
    for path in marker.get("files", []):
        if os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    if os.path.exists(marker_path(platform, data_dir)):
        os.remove(marker_path(platform, data_dir))
        removed.append(marker_path(platform, data_dir))
    return removed
