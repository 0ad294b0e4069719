"""`memctl integrations install|remove|status PLATFORM`: put memoryd in an agent platform's loop with one command.

Installing writes the platform's own files (a Claude Code plugin, Codex's hooks and config, an OpenCode plugin;
OpenClaw's plugin through OpenClaw's CLI) with this memctl's absolute path in them, and a marker in memoryd's data
dir that names the platform's transcript folder: the daemon reads the markers when it starts (or on SIGHUP) and
indexes those transcripts as the agent's sessions. An install reads and checks every file before it changes one,
and on any failure puts every file back as it was. Removing takes out what installing put in and nothing else:
install then remove gives back the same bytes, modes and symlinks."""

from __future__ import annotations

import time
from typing import Any

from memoryd_client.integrations.claude_code import plan_claude_code
from memoryd_client.integrations.codex import plan_codex, remove_codex
from memoryd_client.integrations.common import check_agent
from memoryd_client.integrations.files import read_regular
from memoryd_client.integrations.marker import (
    encode_marker,
    marker_path,
    markers_dir,
    parse_marker,
    strings,
    written,
)
from memoryd_client.integrations.openclaw import plan_openclaw, remove_openclaw
from memoryd_client.integrations.opencode import plan_opencode, remove_opencode
from memoryd_client.integrations.owned import remove_folders, remove_partials, remove_written
from memoryd_client.integrations.transaction import Transaction

__all__ = ["INSTALLERS", "install", "installed", "marker_path", "markers_dir", "remove"]

INSTALLERS = {
    "claude-code": plan_claude_code,
    "codex": plan_codex,
    "opencode": plan_opencode,
    "openclaw": plan_openclaw,
}
REMOVERS = {"codex": remove_codex, "opencode": remove_opencode, "openclaw": remove_openclaw}


def install(platform: str, agent: str | None = None, data_dir: str | None = None) -> dict[str, Any]:
    """All of it or nothing: the marker first (as "installing", naming all that will be touched, so that remove
    cleans up after an install that was killed), then the platform's files, then the marker as installed."""
    check_agent(agent)
    marker_file = marker_path(platform, data_dir)
    with Transaction() as tx:
        previous = parse_marker(tx.read(marker_file)) or {}
        plan = INSTALLERS[platform](agent, previous, tx)
        plan.keep_earlier(previous)
        begun = {"platform": platform, "agent": agent, "state": "installing", **plan.record(), "transcripts": []}
        tx.make_folders(markers_dir(data_dir))
        tx.write(marker_file, encode_marker(begun))
        notes = plan.apply()
        marker = {**begun, "state": "installed", "installed_at": round(time.time(), 3), **plan.record()}
        marker["notes"] = [*plan.notes, *notes]
        tx.write(marker_file, encode_marker(marker))
    return marker


def installed(platform: str, data_dir: str | None = None) -> dict[str, Any] | None:
    try:
        return parse_marker(read_regular(marker_path(platform, data_dir)))
    except ValueError:
        return None


def remove(platform: str, data_dir: str | None = None) -> list[str]:
    """Take out what install put in (its entries in files it edited, the files it wrote that still hold what it
    wrote, the folders it created once empty) and the marker, also after an install that did not finish; what was
    removed, and what was left because it changed since. A failure changes nothing and names the file."""
    marker_file = marker_path(platform, data_dir)
    with Transaction() as tx:
        found = tx.read(marker_file)
        if found is None:
            return []
        marker = parse_marker(found) or {}
        removed = REMOVERS[platform](marker, tx) if platform in REMOVERS and marker else []
        removed += remove_written(written(marker), tx)
        touched = [*strings(marker, "files"), *written(marker), *strings(marker, "edited"), marker_file]
        removed += remove_partials(touched, tx)
        removed += remove_folders(strings(marker, "folders"), tx)
        tx.delete(marker_file)
        removed.append(marker_file)
    return removed
