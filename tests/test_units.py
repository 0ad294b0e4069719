from __future__ import annotations

import plistlib
from pathlib import Path

from memoryd.daemon.units import install, render, uninstall

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_service_files_are_what_the_installer_writes() -> None:
    systemd = render("systemd", "%h/.local/bin/memoryd", [], Path.home())
    assert (ROOT / "systemd" / "memoryd.service").read_text() == systemd.text
    launchd = render("launchd", "/usr/local/bin/memoryd", [], Path("/Users/you"))
    assert (ROOT / "launchd" / "dev.memoryd.plist").read_text() == launchd.text


def test_units_are_valid_and_restart(tmp_path: Path) -> None:
    unit = render("systemd", "/opt/bin/memoryd", ["--config", "/etc/m.toml"], tmp_path).text
    assert "ExecStart=/opt/bin/memoryd run --config /etc/m.toml" in unit and "Restart=on-failure" in unit
    plist = plistlib.loads(render("launchd", "/opt/bin/memoryd", ["--workspace", "/w"], tmp_path).text.encode())
    assert plist["ProgramArguments"] == ["/opt/bin/memoryd", "run", "--workspace", "/w"]
    assert plist["RunAtLoad"] is True and plist["KeepAlive"] is True


def test_install_and_uninstall_write_into_home(tmp_path: Path) -> None:
    written, note = install(["--workspace", "/w"], home=tmp_path, activate=False)
    assert written.path.is_relative_to(tmp_path) and written.path.exists() and note == "written"
    assert "run --workspace /w" in written.path.read_text()
    path, note = uninstall(home=tmp_path, activate=False)
    assert note == "removed" and not path.exists()


def test_install_says_so_when_systemd_refuses(tmp_path: Path) -> None:
    """No user session bus (a container, ssh without lingering): the install fails loudly, not 'enabled'.
    systemd's user manager cannot run here, so a stand-in `systemctl` answers as it does without a bus."""
    import os
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "systemctl"
    fake.write_text("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n")
    fake.chmod(0o755)
    workspace = tmp_path / "notes"
    workspace.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(
        [sys.executable, "-m", "memoryd.daemon.cli", "service", "install", "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1, done
    assert "Failed to connect to bus" in done.stderr and "systemctl --user enable --now memoryd" in done.stderr
    unit = tmp_path / ".config" / "systemd" / "user" / "memoryd.service"
    assert f"run --workspace {workspace}" in unit.read_text()  # written, with the workspace it was given
