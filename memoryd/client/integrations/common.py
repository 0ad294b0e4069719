"""What every installer needs: this memctl's path, memoryd's version, the hooks' time limits."""

from __future__ import annotations

import os
import shutil
import sys

HOOK_SECONDS = 5  # the platform's own time limit for one hook (the hook itself gives up sooner)
SYNC_HOOK_SECONDS = 30


def memctl_command() -> str:
    """This memctl, as an absolute path a platform can run without the user's PATH."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "memctl")
    return beside if os.access(beside, os.X_OK) else (shutil.which("memctl") or "memctl")


def version() -> str:
    from memoryd import __version__

    return __version__
