"""docs/protocol.md's method headings and parameter tables, written from memoryd_client.protocol.schema.

    python -m memoryd_client.protocol.doc [docs/protocol.md]    # rewrite the blocks between <!-- schema:NAME --> marks

A test fails when the file and the schema disagree."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from memoryd_client.protocol.request import Param, Request
from memoryd_client.protocol.schema import METHODS

BLOCK = re.compile(r"<!-- schema:(\w+) -->\n.*?<!-- /schema -->\n", re.S)


def _type(spec: Param) -> str:
    one = " \\| ".join(f"`{c}`" for c in spec.choices) if spec.choices else spec.scalar
    if spec.many and "str" in spec.types:
        return f"one or a list of {one}"
    kinds = []
    for kind in spec.types:
        if kind == "list[str]":
            kinds.append(f"list of {one}" if spec.choices else "list of str")
        elif kind != "None":
            kinds.append(one if kind == spec.scalar else kind)
    return " or ".join(kinds)


def _default(spec: Param) -> str:
    if spec.required:
        return "required"
    if spec.default is None:
        return "–"
    return f"`{str(spec.default).lower() if isinstance(spec.default, bool) else spec.default}`"


def _bounds(spec: Param) -> str:
    low = "" if spec.ge is None else f"{spec.ge:g} ≤ "
    high = "" if spec.le is None else f" ≤ {spec.le:g}"
    return f" ({low}x{high})" if low or high else ""


def block(method: type[Request]) -> str:
    args = ", ".join(p.wire + ("" if p.required else "?") for p in method.params)
    lines = [
        f"<!-- schema:{method.method} -->",
        f"### `{method.method}({args})` → `{method.returns}`",
        "",
        method.summary + (" Only reads: safe to resend." if method.idempotent else ""),
        "",
    ]
    if method.params:
        lines += ["| parameter | type | default | meaning |", "|---|---|---|---|"]
        lines += [f"| `{p.wire}` | {_type(p)}{_bounds(p)} | {_default(p)} | {p.help} |" for p in method.params]
        lines.append("")
    lines.append("<!-- /schema -->")
    return "\n".join(lines) + "\n"


def render(text: str) -> str:
    """The document with every schema block written anew from the schema."""
    return BLOCK.sub(lambda m: block(METHODS[m.group(1)]), text)


def documented(text: str) -> list[str]:
    return BLOCK.findall(text)


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "docs/protocol.md")
    text = path.read_text(encoding="utf-8")
    missing = sorted(set(METHODS) - set(documented(text)))
    if missing:
        print(f"{path}: no <!-- schema:NAME --> block for {', '.join(missing)}", file=sys.stderr)
        return 1
    path.write_text(render(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
