"""A client that is not ours: Neovim's built-in msgpack-rpc talks to the daemon unchanged."""

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
# Outside CI a missing Neovim skips; in CI (`make test` installs it) it must be there.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        NVIM is None and not os.environ.get("CI"), reason="neovim is installed by `make test` (apt-get install neovim)"
    ),
]

SCRIPT = """
local out = {{}}
local function run()
local chan = vim.fn.sockconnect('pipe', '{socket}', {{rpc = true}})
out.search = vim.fn.rpcrequest(chan, 'search', {{query = 'JWT expiry', mode = 'keyword'}})
out.positional = vim.fn.rpcrequest(chan, 'get', 'MEMORY.md', 2, 1)
local ok, err = pcall(vim.fn.rpcrequest, chan, 'no_such_method', {{}})
out.error_ok = ok
out.error = tostring(err)
out.status = vim.fn.rpcrequest(chan, 'status')
vim.fn.chanclose(chan)
end
local ok, err = pcall(run)
if not ok then out.script_error = tostring(err) end
vim.fn.writefile({{vim.fn.json_encode(out)}}, '{out}')
vim.cmd('qa!')
"""


def test_neovim_rpcrequest(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    daemon = d.start(tmp_path, workspace)
    try:
        script = tmp_path / "client.lua"
        out = tmp_path / "out.json"
        script.write_text(SCRIPT.format(socket=daemon.socket, out=out))
        subprocess.run(
            [NVIM, "--headless", "-u", "NONE", "-n", "-c", f"luafile {script}"],
            timeout=60,
            check=True,
            capture_output=True,
        )
        result = json.loads(out.read_text())
        assert "script_error" not in result, result["script_error"]
        assert result["search"]["results"][0]["citation"] == "MEMORY.md#L1-L2"
        assert result["positional"]["text"] == "We decided to use JWT with 24h expiry."
        assert result["error_ok"] is False and "no_such_method" in result["error"]
        assert result["status"]["agents"][0]["files"] == 1
    finally:
        d.cleanup(daemon)
