"""What every installer needs: this memctl's path, memoryd's version, the hooks' time limits and commands."""

from __future__ import annotations

import os
import shlex
import shutil
import sys

from memoryd_client.hooks import HOOK_LIMIT, SYNC_LIMIT
from memoryd_client.integrations.files import IntegrationError

HOOK_SECONDS = HOOK_LIMIT  # the platform's own time limit for one hook (the hook itself gives up sooner)
SYNC_HOOK_SECONDS = SYNC_LIMIT


def memctl_command() -> str:
    """This memctl, as an absolute path a platform can run without the user's PATH."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "memctl")
    return beside if os.access(beside, os.X_OK) else (shutil.which("memctl") or "memctl")


def version() -> str:
    from memoryd_client import __version__

    return __version__


def check_agent(agent: str | None) -> None:
    """The rule memoryd's config has for agent ids, checked before an id goes into a platform's files."""
    if agent is not None and not (agent and all(c.isalnum() or c in "-_." for c in agent)):
        raise IntegrationError(f"agent id {agent!r} must be letters, digits, '-', '_' or '.'")


def agent_args(agent: str | None) -> list[str]:
    return ["--agent", agent] if agent else []


def hook_command(memctl: str, platform: str, event: str, agent: str | None) -> str:
    """The shell command a platform runs for one hook event."""
    return shlex.join([memctl, "hook", platform, event, *agent_args(agent)])


def is_hook_command(command: object, platform: str) -> bool:
    """Whether a hook's command is one memoryd wrote for platform (whatever memctl path and quoting it has)."""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return words[1:3] == ["hook", platform]
