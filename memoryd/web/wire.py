"""What the page's calls answer, as JSON: results as the RPC gives them (no NaN, bytes as text), and the methods'
parameters, from which the page builds its forms."""

from __future__ import annotations

import json
import math
from typing import Any

from memoryd_client.protocol.schema import METHODS


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, (set, frozenset)):
        return list(value)
    if hasattr(value, "as_dict"):
        return value.as_dict()
    return str(value)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: they go out as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def encode(value: Any) -> bytes:
    return json.dumps(_finite(value), default=_json_default, ensure_ascii=False, allow_nan=False).encode()


def schema_description() -> dict[str, Any]:
    """Every method's parameters, as the page builds its forms from them (the same schema memctl and MCP use)."""
    return {
        name: {
            "summary": method.summary,
            "params": [
                {
                    "name": p.wire,
                    "type": p.scalar,
                    "many": p.many,
                    "optional": p.optional,
                    "required": p.required,
                    "default": None if p.required else p.default,
                    "choices": list(p.choices) if p.choices else None,
                    "ge": p.ge,
                    "le": p.le,
                    "help": p.help,
                }
                for p in method.params
            ],
        }
        for name, method in METHODS.items()
    }
