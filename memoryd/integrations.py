"""Integration markers: `memctl integrations install` leaves one per platform in the data dir, naming the agent and
the platform's transcript folders; the daemon indexes those as the agent's sessions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from memoryd.settings import AgentConfig
from memoryd_client.protocol.paths import INTEGRATIONS


@dataclass(frozen=True, config=ConfigDict(extra="ignore", strict=True))
class Marker:
    platform: str
    agent: str | None = None
    transcripts: tuple[str, ...] = ()


def read_markers(data_dir: Path) -> tuple[list[Marker], list[str]]:
    """The markers, and a problem line for each one that cannot be read."""
    markers, problems = [], []
    folder = data_dir / INTEGRATIONS
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            markers.append(TypeAdapter(Marker).validate_json(path.read_bytes()))
        except (OSError, ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            problems.append(f"{path}: not an integration marker ({first}); memctl integrations remove fixes it")
    return markers, problems


def with_integrations(
    agents: tuple[AgentConfig, ...], markers: list[Marker]
) -> tuple[tuple[AgentConfig, ...], list[str]]:
    """The agents with each marker's transcript folders among its agent's sessions; problems for a marker whose
    agent is not configured."""
    by_id = {a.id: a for a in agents}
    problems = []
    for marker in markers:
        target = by_id.get(marker.agent) if marker.agent else agents[0]
        if target is None:
            problems.append(f"integration {marker.platform}: agent {marker.agent!r} is not configured")
            continue
        folders = tuple(Path(p).expanduser() for p in marker.transcripts)
        added = tuple(f for f in folders if f not in target.sessions_dirs)
        if added:
            sources = target.sources if "sessions" in target.sources else (*target.sources, "sessions")
            by_id[target.id] = replace(target, sessions_dirs=(*target.sessions_dirs, *added), sources=sources)
    return tuple(by_id[a.id] for a in agents), problems
