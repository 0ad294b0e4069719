"""Where the daemon's socket lives by default (shared by memoryd and its clients).

Plain strings and `os.path`, not pathlib: memctl's start-up is most of its run time."""

from __future__ import annotations

import os
import sys

APP_NAME = "memoryd"


def default_socket_path() -> str:
    """$MEMORYD_SOCKET, else $XDG_RUNTIME_DIR/memoryd/memoryd.sock, else a per-user fallback."""
    explicit = os.environ.get("MEMORYD_SOCKET")
    if explicit:
        return os.path.expanduser(explicit)
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", APP_NAME, "memoryd.sock")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, APP_NAME, "memoryd.sock")
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    return os.path.join(state, APP_NAME, "run", "memoryd.sock")
