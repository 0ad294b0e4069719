"""The Neovim plugin in editors/nvim, run headless against a real daemon."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from . import daemon as d
from .conftest import write

NVIM = shutil.which("nvim")
PLUGIN = Path(__file__).resolve().parents[1] / "editors" / "nvim"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        NVIM is None and not os.environ.get("CI"), reason="`make test` installs Neovim (apt-get install neovim)"
    ),
]


def run_nvim(script: str, tmp_path: Path) -> None:
    file = tmp_path / "script.vim"
    file.write_text(script)
    subprocess.run(
        [NVIM or "nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-S", str(file)],
        check=True,
        timeout=60,
        capture_output=True,
    )


def test_plugin_search_write_and_health(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    daemon = d.start(tmp_path, workspace)
    out = tmp_path / "out.json"
    try:
        run_nvim(
            f"""
set rtp+={PLUGIN}
runtime plugin/memoryd.lua
lua require('memoryd').setup({{socket = '{daemon.socket}', open_quickfix = false}})
MemorySearch JWT expiry
let g:qf = getqflist()
let g:names = map(copy(g:qf), 'bufname(v:val.bufnr)')
enew
call setline(1, ['Decided: the staging database is called otter.', 'It runs Postgres 16.'])
1,2MemoryWrite
MemorySearch otter staging
let g:qf2 = getqflist()
checkhealth memoryd
let g:health = join(getline(1, '$'), "\\n")
call writefile([json_encode({{'qf': g:qf, 'names': g:names, 'qf2': g:qf2, 'health': g:health}})], '{out}')
qa!
""",
            tmp_path,
        )
        result = json.loads(out.read_text())
        first = result["qf"][0]
        assert len(result["qf"]) == 1 and (first["lnum"], first["end_lnum"]) == (1, 2)
        assert first["text"].startswith("[") and first["text"].endswith("] # Auth")
        assert Path(result["names"][0]).resolve() == (workspace / "MEMORY.md").resolve()
        assert result["qf2"][0]["text"].endswith("Decided: the staging database is called otter.")
        health = result["health"]
        assert "daemon 0.1.0" in health and "agent main: 2 files" in health and "hybrid search with hash" in health
        notes = list((workspace / "memory").glob("*.md"))
        assert len(notes) == 1 and "It runs Postgres 16." in notes[0].read_text()
    finally:
        d.cleanup(daemon)
