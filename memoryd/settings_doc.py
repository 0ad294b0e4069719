"""docs/configuration.md's tables of keys, written from memoryd.settings: one schema drives the config file's checks
and its documentation (each key's type, bounds and default from the schema, its meaning from the docstring under
the field).

    python -m memoryd.settings_doc [docs/configuration.md]    # rewrite the blocks between <!-- settings:NAME --> marks

A test (tests/test_config_doc.py) fails when the file and the schema disagree."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import TypeAdapter

from memoryd.embeddings.registry import BUILTIN, SPECIAL
from memoryd.settings import (
    AgentTable,
    ChunkingConfig,
    ConfigFile,
    DaemonConfig,
    DefaultsTable,
    EmbeddingConfig,
    Provider,
    QueryConfig,
    RecallConfig,
)

# block name -> (the table as a config file spells it, its schema), in the order memoryd.config reads them
TABLES: dict[str, tuple[str, type]] = {
    "file": ("Top-level keys", ConfigFile),
    "daemon": ("`[daemon]`", DaemonConfig),
    "defaults": ("`[defaults]`", DefaultsTable),
    "agents": ("`[[agents]]`", AgentTable),
    "embedding": ("`[agents.embedding]`, `[defaults.embedding]`", EmbeddingConfig),
    "query": ("`[agents.query]`, `[defaults.query]`", QueryConfig),
    "chunking": ("`[agents.chunking]`, `[defaults.chunking]`", ChunkingConfig),
    "recall": ("`[agents.recall]`, `[defaults.recall]`", RecallConfig),
}
EXTRA_BLOCKS = ("prompts",)  # blocks written from another table than a settings schema
BLOCK = re.compile(r"<!-- settings:(\w+) -->\n.*?<!-- /settings -->\n", re.S)
KINDS = {"integer": "integer", "number": "number", "boolean": "boolean", "string": "string", "object": "table"}


def _range(prop: dict[str, Any]) -> str | None:
    """`0 ≤ x ≤ 1`, `≥ 0`, `> 0`: the schema's numeric limits, or None."""
    low = next(((prop[k], sign) for k, sign in (("minimum", "≤"), ("exclusiveMinimum", "<")) if k in prop), None)
    high = next(((prop[k], sign) for k, sign in (("maximum", "≤"), ("exclusiveMaximum", "<")) if k in prop), None)
    if low and high:
        return f"{low[0]:g} {low[1]} x {high[1]} {high[0]:g}"
    if low:
        return f"{'≥' if low[1] == '≤' else '>'} {low[0]:g}"
    if high:
        return f"{high[1]} {high[0]:g}"
    return None


def _bounds(prop: dict[str, Any]) -> list[str]:
    """A value's limits in words: its range, length and pattern."""
    parts = [limit] if (limit := _range(prop)) else []
    if prop.get("minLength", 0) > 0:
        parts.append("not empty" if prop["minLength"] == 1 else f"at least {prop['minLength']} characters")
    if "maxLength" in prop:
        parts.append(f"at most {prop['maxLength']} characters")
    if "pattern" in prop:
        parts.append(f"matching `{prop['pattern']}`")
    return parts


def _type(prop: dict[str, Any]) -> str:
    """A key's type as TOML spells it, from its JSON schema."""
    if "anyOf" in prop:
        return " or ".join(_type(p) for p in prop["anyOf"] if p.get("type") != "null")
    if "enum" in prop:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    kind = str(prop.get("type"))
    if kind == "array":
        items = prop.get("items", {})
        if "enum" in items:
            return f"array of {_type(items)}"
        limits = _bounds(items)
        return f"array of {KINDS[str(items.get('type'))]}s" + (f" (each {', '.join(limits)})" if limits else "")
    limits = _bounds(prop)
    return KINDS[kind] + (f" ({', '.join(limits)})" if limits else "")


def _provider() -> str:
    names = [*SPECIAL, *BUILTIN]
    return " \\| ".join(f'`"{name}"`' for name in names) + ", or an installed plugin's name"


def _default(name: str, schema: dict[str, Any]) -> str:
    if name in schema.get("required", ()):
        return "required"
    value = schema["properties"][name].get("default")
    if value is None:
        return "–"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def block(name: str) -> str:
    """One table's block: its heading, what it is for, and a row per key."""
    title, cls = TABLES[name]
    schema = TypeAdapter(cls).json_schema()
    hints = get_type_hints(cls, include_extras=True)
    lines = [f"<!-- settings:{name} -->", f"### {title}", "", _cell(schema.get("description", "")), ""]
    lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, prop in schema["properties"].items():
        kind = _provider() if hints[key] == Provider else _type(prop)
        lines.append(f"| `{key}` | {kind} | {_default(key, schema)} | {_cell(prop.get('description', ''))} |")
    lines += ["", "<!-- /settings -->"]
    return "\n".join(lines) + "\n"


def prompts_block() -> str:
    """The model families whose prompts memoryd knows (memoryd.embeddings.prompts)."""
    from memoryd.embeddings.prompts import FAMILIES

    lines = ["<!-- settings:prompts -->", "### Model prompts", ""]
    lines += [_cell(_PROMPTS_INTRO), ""]
    lines += ["| family | recognised by | query prompt | document prompt |", "|---|---|---|---|"]
    for known in FAMILIES:
        names = ", ".join(f"`{n}`" for n in (*known.architectures, *known.names))
        prompts = (known.query, known.document)
        shown = [_cell(f"`{json.dumps(p, ensure_ascii=False)}`") if p else "none" for p in prompts]
        lines.append(f"| {known.name} | {names} | {shown[0]} | {shown[1]} |")
    lines += ["", "<!-- /settings -->"]
    return "\n".join(lines) + "\n"


_PROMPTS_INTRO = """A model built by `memoryd model prepare` carries its own prompts. Any other GGUF (`model_path`) and
any Ollama model gets its family's, recognised from the GGUF's architecture or from the model's name (GGUF name, file
name, Ollama model); a model of no family here gets none. `query_prefix` and `document_prefix` override them.
`memctl status` says which prompts a model uses and where they come from."""


def render(text: str) -> str:
    """The document with every settings block written anew from the schema."""
    return BLOCK.sub(lambda m: prompts_block() if m.group(1) == "prompts" else block(m.group(1)), text)


def documented(text: str) -> list[str]:
    return BLOCK.findall(text)


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "docs/configuration.md")
    text = path.read_text(encoding="utf-8")
    missing = [name for name in (*TABLES, *EXTRA_BLOCKS) if name not in documented(text)]
    unknown = sorted(set(documented(text)) - set(TABLES) - set(EXTRA_BLOCKS))
    if missing or unknown:
        what = [f"no <!-- settings:NAME --> block for {', '.join(missing)}"] if missing else []
        what += [f"blocks for no table: {', '.join(unknown)}"] if unknown else []
        print(f"{path}: {'; '.join(what)}", file=sys.stderr)
        return 1
    path.write_text(render(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
