"""docs/protocol.md names every RPC method and every parameter the daemon accepts, and no other; the Neovim
plugin's own list of methods safe to resend is the protocol's."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from memoryd.service.methods import METHODS, RENAMED

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"


def test_the_protocol_doc_lists_each_methods_parameters() -> None:
    headings = dict(re.findall(r"^### `(\w+)\(([^)]*)\)`", DOC.read_text(), re.M))
    assert set(headings) == set(METHODS)
    shown = {v: k for k, v in RENAMED.items()}
    for name, func in METHODS.items():
        params = [shown.get(p, p) for p in list(inspect.signature(func).parameters)[1:]]  # after the manager
        documented = [p.strip().rstrip("?") for p in headings[name].split(",") if p.strip()]
        assert sorted(documented) == sorted(params), name


def test_the_plugins_resend_list_is_the_protocols() -> None:
    """Lua keeps its own short list of methods that only read; it must be the protocol's."""
    import re

    from memoryd.protocol.wire import IDEMPOTENT

    lua = (DOC.parents[1] / "editors" / "nvim" / "lua" / "memoryd" / "init.lua").read_text()
    listed = re.search(r"local idempotent = \{([^}]*)\}", lua)
    assert listed is not None
    assert set(re.findall(r"(\w+) = true", listed.group(1))) == set(IDEMPOTENT)
