"""Where the daemon's socket and data dir are by default, and who holds a lock there (shared by memoryd and its
clients).

Plain strings and `os.path`, not pathlib: memctl's start-up is most of its run time."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


INTEGRATIONS = "integrations"  # in the data dir: one marker per installed integration (memoryd.integrations)


def default_data_dir() -> str:
    """The data dir a daemon started now would use: $MEMORYD_DATA_DIR, else the config file's `data_dir`, else
    where platformdirs puts memoryd's data (as memoryd.config decides it)."""
    explicit = os.environ.get("MEMORYD_DATA_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    configured = _config_data_dir()
    if configured:
        return configured
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", APP_NAME)
    data = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.join(home, ".local", "share")
    return os.path.join(data, APP_NAME)


def _config_data_dir() -> str | None:
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        config_home = os.path.join(home, "Library", "Application Support")
    else:
        config_home = os.environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    default_config = os.path.join(config_home, APP_NAME, "config.toml")
    path = os.path.abspath(os.path.expanduser(os.environ.get("MEMORYD_CONFIG") or default_config))
    try:
        if sys.version_info >= (3, 11):
            import tomllib
        else:
            import tomli as tomllib

        with open(path, "rb") as fh:
            value = tomllib.load(fh).get("data_dir")
    except (OSError, ImportError, ValueError):
        return None
    if not isinstance(value, str) or not value:
        return None
    return os.path.join(os.path.dirname(path), os.path.expandvars(os.path.expanduser(value)))


DATA_DIR_LOCK = "memoryd.lock"  # the daemon's lock on its data dir (memoryd.store.lock), naming its pid and socket


def read_holder(lock_path: str | os.PathLike[str]) -> dict[str, Any]:
    """What the holder of a lock (memoryd.store.lock) wrote into it, {pid, socket, ...}; {} when it is unreadable
    or not yet written."""
    import json

    try:
        with open(lock_path, "rb") as fh:
            data = json.loads(fh.read(4096) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool):
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def running_daemon(data_dir: str | None = None) -> dict[str, Any] | None:
    """The daemon that holds a data dir ({pid, socket, ...} from its lock file), or None when none seems to. Read
    without locking (a probe lock could make a starting daemon think the dir is taken); a file left by a killed
    daemon names a dead pid, and a caller still checks that the socket answers."""
    holder = read_holder(os.path.join(data_dir or default_data_dir(), DATA_DIR_LOCK))
    return holder if pid_alive(holder.get("pid")) and holder.get("socket") else None
