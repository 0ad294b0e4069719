"""One schema per method: docs/protocol.md, memctl's options, the MCP tools and the daemon all follow
memoryd_client.protocol.schema; the Neovim plugin's own list of methods safe to resend is the protocol's."""

from __future__ import annotations

import re
from pathlib import Path

from memoryd.daemon.methods import IMPLEMENTATIONS
from memoryd_client.memctl import help_text
from memoryd_client.protocol import doc, schema

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"


def test_the_protocol_doc_is_written_from_the_schema() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert sorted(doc.documented(text)) == sorted(schema.METHODS)
    assert doc.render(text) == text, "docs/protocol.md is stale: run python -m memoryd_client.protocol.doc"


def test_a_changed_schema_makes_the_doc_stale() -> None:
    text = DOC.read_text(encoding="utf-8")
    spec = schema.Search.by_wire()["max_results"]
    saved = spec.help
    spec.help = "something else"
    try:
        assert doc.render(text) != text
    finally:
        spec.help = saved


def test_every_method_has_one_implementation() -> None:
    assert IMPLEMENTATIONS.keys() == schema.METHODS.keys()


def test_memctl_offers_the_schemas_search_options_with_their_help() -> None:
    shown = help_text("search")
    for spec in schema.Search.params:
        if spec.cli is None:
            continue
        flag = (spec.cli or (f"--{spec.wire.replace('_', '-')}",))[-1]
        assert flag in shown, flag
        assert spec.help.split(" (")[0][:30] in " ".join(shown.split()), spec.wire


def test_the_plugins_resend_list_is_the_protocols() -> None:
    """Lua keeps its own short list of methods that only read; it must be the protocol's."""
    lua = (DOC.parents[1] / "editors" / "nvim" / "lua" / "memoryd" / "init.lua").read_text()
    listed = re.search(r"local idempotent = \{([^}]*)\}", lua)
    assert listed is not None
    assert set(re.findall(r"(\w+) = true", listed.group(1))) == set(schema.IDEMPOTENT)
