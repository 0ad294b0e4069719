"""`memctl integrations install|remove|status`: what each prints, and the daemon told to read the markers again.
A failure to install or remove is one line, `Error: ...`, and exit code 1."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

from memoryd_client import integrations as places
from memoryd_client.protocol.paths import running_daemon
from memoryd_client.stub import ClientError, MemoryClient

if TYPE_CHECKING:
    from memoryd_client.command_line import Parsed


def _reload_daemon() -> str:
    """Ask a running daemon to read the integration markers again (SIGHUP), and say what happened."""
    holder = running_daemon()
    if not holder:
        return "memoryd is not running; it indexes the transcripts when it starts (memoryd run)"
    try:
        os.kill(int(holder["pid"]), signal.SIGHUP)
    except (OSError, ValueError, KeyError) as exc:
        return f"could not signal memoryd (pid {holder.get('pid')}): {exc}; restart it to index the transcripts"
    return f"memoryd (pid {holder['pid']}) reloaded"


def install(args: Parsed) -> int:
    """Install the platform's integration and say what it wrote."""
    try:
        marker = places.install(args["platform"], args["agent"])
    except (OSError, ValueError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    for path in marker["files"]:
        print(f"wrote {path}")
    for path in marker.get("edited", []):
        print(f"edited {path}")
    for note in marker.get("notes", []):
        print(f"note: {note}")
    for folder in marker["transcripts"]:
        print(f"transcripts: {folder} (indexed as the agent's sessions)")
    print(_reload_daemon())
    return 0


def remove(args: Parsed) -> int:
    """Remove the platform's integration: the files it installed, nothing else."""
    try:
        removed = places.remove(args["platform"])
    except (OSError, ValueError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    for path in removed:
        print(f"removed {path}")
    print(_reload_daemon() if removed else f"{args['platform']} was not installed")
    return 0


def status(args: Parsed) -> int:
    """Which integrations are installed, and when their hooks last reached the daemon."""
    try:
        with MemoryClient(args["socket"], timeout=5) as client:
            heard: dict[str, Any] = client.ping().get("integrations") or {}
    except ClientError as exc:
        heard, down = {}, str(exc)
    else:
        down = ""
    rows = []
    for platform in sorted(places.INSTALLERS):
        marker = places.installed(platform)
        seen = heard.get(platform) or {}
        rows.append({"platform": platform, "installed": marker is not None, **seen})
    if args["json"]:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        state = "installed" if row["installed"] else "not installed"
        if row.get("last_seen"):
            ago = time.time() - row["last_seen"]
            state += f"; hooks reached the daemon {ago:.0f} s ago ({row['calls']} calls since it started)"
        elif row["installed"]:
            state += "; no hook has reached the daemon since it started" + (f" ({down})" if down else "")
        print(f"{row['platform']:12s} {state}")
    return 0
