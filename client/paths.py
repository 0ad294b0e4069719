"""Where the daemon's socket lives by default (shared by memoryd and its clients)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "memoryd"


def default_socket_path() -> Path:
    """$MEMORYD_SOCKET, else $XDG_RUNTIME_DIR/memoryd/memoryd.sock, else a per-user fallback."""
    explicit = os.environ.get("MEMORYD_SOCKET")
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_NAME / "memoryd.sock"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / APP_NAME / "memoryd.sock"
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / APP_NAME / "run" / "memoryd.sock"
