from __future__ import annotations

import plistlib
from pathlib import Path

from memoryd.service.units import install, render, uninstall

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
