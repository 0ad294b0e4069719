"""docs/protocol.md names every RPC method and every parameter the daemon accepts, and no other."""

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
