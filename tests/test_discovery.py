from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryd.config import quickstart_agent
from memoryd.sources.discovery import PathOutsideSources, discover, resolve_source_path

from .conftest import write


def test_finds_memory_files_and_extra_paths(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# root")
    write(ws / "memory.md", "# lower")
    write(ws / "memory" / "2026-01-05.md", "day")
    write(ws / "memory" / "deep" / "nested" / "x.markdown", "deep")
    write(ws / "memory" / "notes.txt", "not markdown")
    write(ws / "memory" / "node_modules" / "pkg" / "README.md", "ignored")
    write(ws / "memory" / ".git" / "x.md", "ignored")
    write(ws / "memory" / ".venv" / "y.md", "ignored")
    write(ws / "README.md", "not memory")
    extra_dir = write(tmp_path / "extra" / "a.md", "extra a").parent
    extra_file = write(tmp_path / "single.md", "single")
    write(tmp_path / "skip.txt", "no")
    agent = quickstart_agent(ws, tmp_path / "data", extra_paths=(extra_dir, extra_file, tmp_path / "skip.txt"))
    paths = [f.path for f in discover(agent)]
    assert paths == sorted(
        [
            "MEMORY.md",
            "memory.md",
            "memory/2026-01-05.md",
            "memory/deep/nested/x.markdown",
            str(extra_dir / "a.md"),
            str(extra_file),
        ]
    )


def test_symlinks_are_skipped_and_real_paths_deduplicated(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    target = write(ws / "memory" / "real.md", "real")
    outside = write(tmp_path / "outside" / "secret.md", "secret")
    os.symlink(target, ws / "memory" / "link.md")
    os.symlink(outside, ws / "memory" / "escape.md")
    os.symlink(tmp_path / "outside", ws / "memory" / "linkdir")
    agent = quickstart_agent(ws, tmp_path / "data", extra_paths=(ws / "memory",))
    assert [f.path for f in discover(agent)] == ["memory/real.md"]


def test_sessions_only_agent_has_no_markdown(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "x")
    agent = quickstart_agent(ws, tmp_path / "data", sources=("sessions",), sessions_dirs=(ws / "sessions",))
    assert discover(agent) == []


def test_path_resolution_refuses_escapes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "memory" / "ok.md", "fine")
    write(ws / "MEMORY.md", "root")
    write(ws / "other.md", "not a source")
    secret = write(tmp_path / "secret.md", "secret")
    os.symlink(secret, ws / "memory" / "sneaky.md")
    agent = quickstart_agent(ws, tmp_path / "data")
    assert resolve_source_path(agent, "memory/ok.md") == (ws / "memory" / "ok.md").resolve()
    assert resolve_source_path(agent, "MEMORY.md") == (ws / "MEMORY.md").resolve()
    assert resolve_source_path(agent, str(ws / "memory" / "ok.md")) == (ws / "memory" / "ok.md").resolve()
    for bad in [
        "../secret.md",
        "memory/../../secret.md",
        str(secret),
        "memory/sneaky.md",
        "other.md",
        "/etc/passwd",
        "",
        "memory/missing.md",
        "memory",
    ]:
        with pytest.raises(PathOutsideSources):
            resolve_source_path(agent, bad)
