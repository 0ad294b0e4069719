"""Codex's config.toml: memoryd's MCP server and its hooks' trust as one marked block at the end, holding only what
the user's own config does not declare already, and written only when the whole result parses."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from memoryd_client.integrations.common import agent_args
from memoryd_client.integrations.files import IntegrationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

BLOCK_START = "# >>> memoryd: written by `memctl integrations install codex`; removed by `... remove codex`"
BLOCK_END = "# <<< memoryd"
START_LINE = re.compile(rf"^{re.escape(BLOCK_START)}\r?(?:\n|$)", re.M)
END_LINE = re.compile(rf"^{re.escape(BLOCK_END)}\r?(?:\n|$)", re.M)
UNTRUSTED = "Codex's trust for memoryd's hooks could not be added to {path}: accept them in codex (/hooks)"


def load_toml(path: str, text: str) -> dict[str, Any]:
    try:
        settings: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise IntegrationError(f"{path} is not valid TOML ({exc}): fix it, then run this again") from None
    return settings


def without_block(path: str, text: str, newline_added: bool) -> str:
    """text without memoryd's block (and the line break install put before it when the file did not end with one)."""
    while start := START_LINE.search(text):
        end = END_LINE.search(text, start.end())
        if end is None:
            line = text.count("\n", 0, start.start()) + 1
            raise IntegrationError(
                f"{path}: memoryd's block (line {line}) has no {BLOCK_END!r} line: put it back, or delete the block"
            )
        before, after = text[: start.start()], text[end.end() :]
        if newline_added and not after:
            before = before[:-2] if before.endswith("\r\n") else before.removesuffix("\n")
        text = before + after
    return text


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, but for DEL, which TOML wants escaped)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def with_block(
    path: str, text: str, memctl: str, agent: str | None, trusted: dict[str, str]
) -> tuple[str, bool, list[str]]:
    """text with memoryd's block; whether a line break had to go before it; notes. The result parses, and holds
    memoryd's MCP server unless the user's config declares one named memoryd already."""
    settings = load_toml(path, text)
    servers, hooks = settings.get("mcp_servers"), settings.get("hooks")
    declared = isinstance(servers, dict) and "memoryd" in servers
    state = hooks.get("state") if isinstance(hooks, dict) else None
    fresh = {k: v for k, v in trusted.items() if not (isinstance(state, dict) and k in state)}
    notes = [f"{path} already declares an MCP server named memoryd: left as it is"] if declared else []
    server: dict[str, str | list[str]] = {"command": memctl, "args": ["mcp", "--autostart", *agent_args(agent)]}
    problem = ""
    for trust in [fresh, {}] if fresh else [{}]:
        lines = [] if declared else ["[mcp_servers.memoryd]", *(f"{k} = {_toml_value(v)}" for k, v in server.items())]
        for key, digest in trust.items():
            lines += [f"[hooks.state.{toml_string(key)}]", f"trusted_hash = {toml_string(digest)}"]
        if not lines:
            return text, False, notes
        newline = "\r\n" if "\r\n" in text else "\n"
        joined = bool(text) and not text.endswith("\n")
        result = text + (newline if joined else "") + newline.join([BLOCK_START, *lines, BLOCK_END]) + newline
        try:
            parsed = tomllib.loads(result)
        except tomllib.TOMLDecodeError as exc:
            problem = str(exc)
            continue
        if declared or parsed.get("mcp_servers", {}).get("memoryd") == server:
            return result, joined, notes + ([UNTRUSTED.format(path=path)] if fresh and not trust else [])
        problem = "its tables would merge with memoryd's"
    raise IntegrationError(
        f"{path}: memoryd's MCP server cannot be added to it ({problem}): declare `mcp_servers.memoryd` yourself "
        '(command: this memctl, args: ["mcp", "--autostart"]), then install again'
    )


def _toml_value(value: str | list[str]) -> str:
    return toml_string(value) if isinstance(value, str) else "[" + ", ".join(toml_string(v) for v in value) + "]"
