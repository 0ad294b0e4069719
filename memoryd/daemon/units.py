"""Service files that start `memoryd run` at login: a systemd user unit and a launchd agent."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

LABEL = "dev.memoryd"

SYSTEMD_UNIT = """\
[Unit]
Description=memoryd: local memory service for AI agents
After=default.target

[Service]
Type=simple
ExecStart={exe} run{args}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=2
TimeoutStopSec=30

[Install]
WantedBy=default.target
"""

LAUNCHD_PLIST = """\
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{label}</string>
  <key>ProgramArguments</key>
  <array>
    <string>{exe}</string>
    <string>run</string>{plist_args}
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <true/>
  <key>StandardErrorPath</key>
  <string>{log}</string>
</dict>
</plist>
"""


@dataclass(frozen=True)
class ServiceFile:
    kind: str  # systemd or launchd
    path: Path
    text: str


def memoryd_executable() -> str:
    beside = Path(sys.executable).with_name("memoryd")
    return str(beside) if beside.exists() else (shutil.which("memoryd") or "memoryd")


def render(kind: str, exe: str, args: list[str], home: Path) -> ServiceFile:
    if kind == "systemd":
        text = SYSTEMD_UNIT.format(exe=exe, args="".join(f" {a}" for a in args))
        return ServiceFile(kind, home / ".config" / "systemd" / "user" / "memoryd.service", text)
    if kind == "launchd":
        log = home / "Library" / "Logs" / "memoryd.log"
        plist_args = "".join(f"\n    <string>{a}</string>" for a in args)
        text = LAUNCHD_PLIST.format(label=LABEL, exe=exe, plist_args=plist_args, log=log)
        return ServiceFile(kind, home / "Library" / "LaunchAgents" / f"{LABEL}.plist", text)
    raise ValueError(f"unknown service kind {kind!r}")


def platform_kind() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


class ServiceError(RuntimeError):
    """The service manager refused: the message says what failed and how to finish by hand."""


def install(args: list[str], home: Path | None = None, activate: bool = True) -> tuple[ServiceFile, str]:
    """Write the service file for this platform and (optionally) enable it now; returns what was done, or raises
    ServiceError (the file stays written) when systemd or launchd refused."""
    service = render(platform_kind(), memoryd_executable(), args, home or Path.home())
    service.path.parent.mkdir(parents=True, exist_ok=True)
    service.path.write_text(service.text)
    note = "written"
    if activate:
        note = _activate(service)
    return service, note


def uninstall(home: Path | None = None, activate: bool = True) -> tuple[Path, str]:
    service = render(platform_kind(), "memoryd", [], home or Path.home())
    note = "not installed"
    if service.path.exists():
        if activate:
            _run(
                ["systemctl", "--user", "disable", "--now", "memoryd.service"]
                if service.kind == "systemd"
                else ["launchctl", "unload", str(service.path)]
            )  # best effort: the file goes either way
        service.path.unlink()
        note = "removed"
    return service.path, note


def status(home: Path | None = None) -> dict[str, object]:
    service = render(platform_kind(), "memoryd", [], home or Path.home())
    out: dict[str, object] = {"kind": service.kind, "path": str(service.path), "installed": service.path.exists()}
    if service.kind == "systemd" and shutil.which("systemctl"):
        out["active"] = _run(["systemctl", "--user", "is-active", "memoryd.service"])[1].strip() or "unknown"
    return out


def _activate(service: ServiceFile) -> str:
    if service.kind == "systemd":
        if not shutil.which("systemctl"):
            return "written (systemctl not found: enable it with 'systemctl --user enable --now memoryd')"
        for cmd in (["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", "memoryd"]):
            code, output = _run(cmd)
            if code != 0:
                raise ServiceError(
                    f"'{' '.join(cmd)}' failed: {output.strip() or f'exit {code}'}. The unit is written at"
                    f" {service.path}; once a user session runs (log in, or 'loginctl enable-linger'), enable it"
                    " with: systemctl --user enable --now memoryd"
                )
        return "enabled and started"
    if not shutil.which("launchctl"):
        return "written (launchctl not found)"
    code, output = _run(["launchctl", "load", "-w", str(service.path)])
    if code != 0:
        why = output.strip() or f"exit {code}"
        raise ServiceError(f"'launchctl load' failed: {why}; the plist is at {service.path}")
    return "loaded"


def _run(cmd: list[str]) -> tuple[int, str]:
    """The command's exit code and its output (127 and why, when it could not run)."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return done.returncode, done.stdout + done.stderr
