"""The marker an install leaves in memoryd's data dir: the platform's transcript folders for the daemon, and for
remove everything the install touched. It is written before anything else is touched."""

from __future__ import annotations

import json
import os
from typing import Any

from memoryd_client.protocol.paths import INTEGRATIONS, default_data_dir


def markers_dir(data_dir: str | None = None) -> str:
    return os.path.join(data_dir or default_data_dir(), INTEGRATIONS)


def marker_path(platform: str, data_dir: str | None = None) -> str:
    return os.path.join(markers_dir(data_dir), f"{platform}.json")


def parse_marker(data: bytes | None) -> dict[str, Any] | None:
    try:
        marker = json.loads(data) if data is not None else None
    except ValueError:
        return None
    return marker if isinstance(marker, dict) else None


def encode_marker(marker: dict[str, Any]) -> bytes:
    return (json.dumps(marker, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def strings(marker: dict[str, Any], key: str) -> list[str]:
    found = marker.get(key)
    return [s for s in found if isinstance(s, str)] if isinstance(found, list) else []


def written(marker: dict[str, Any]) -> dict[str, list[str]]:
    """The files memoryd wrote whole, each with the digests of what it wrote there."""
    found = marker.get("written")
    if not isinstance(found, dict):
        return {}
    return {p: [d for d in ds if isinstance(d, str)] for p, ds in found.items() if isinstance(ds, list)}


def created(marker: dict[str, Any], path: str) -> list[list[str]]:
    """The keys memoryd added to the JSON file at path."""
    found = marker.get("created")
    keys = found.get(path) if isinstance(found, dict) else None
    if not isinstance(keys, list):
        return []
    return [k for k in keys if isinstance(k, list) and k and all(isinstance(part, str) for part in k)]
