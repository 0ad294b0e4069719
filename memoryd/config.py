"""Configuration: TOML file, environment overrides and zero-config defaults."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

from client.paths import default_socket_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

APP_NAME = "memoryd"
DEFAULT_AGENT = "main"
SOURCES = ("memory", "sessions")
FUSIONS = ("adaptive", "weighted", "rrf")
PROVIDERS = ("auto", "local", "openai", "gemini", "voyage", "ollama", "hash", "none")
# Chosen by measurement over SciFact, XQuAD (vi, en, zh, th) and LoCoMo: see the README.
DEFAULT_LOCAL_MODEL = "multilingual-e5-small"
DEFAULT_MODEL_FILE = f"{DEFAULT_LOCAL_MODEL}.q4_0.gguf"


class ConfigError(ValueError):
    """The configuration cannot be used as written."""


@dataclass(frozen=True)
class ChunkingConfig:
    tokens: int = 400
    overlap: int = 80


@dataclass(frozen=True)
class QueryConfig:
    max_results: int = 6
    min_score: float = 0.2
    vector_weight: float = 0.5
    text_weight: float = 0.5
    candidate_multiplier: int = 4
    fusion: str = "adaptive"
    rrf_k: int = 60
    confidence_span: float = 2.0  # adaptive: standard deviations past the noise ceiling for full vector trust
    snippet_chars: int = 700
    decay: bool = False  # off by default: measured neutral on SciFact, and old notes can be what you need
    half_life_days: float = 30.0
    evergreen: tuple[str, ...] = ("MEMORY.md", "memory.md")
    mmr: bool = False
    mmr_lambda: float = 0.5
    access_weight: float = 0.0


@dataclass(frozen=True)
class EmbeddingConfig:
    provider: str = "auto"
    model: str = ""
    model_path: str = ""
    fallback: str = "none"
    fallback_model: str = ""
    fallback_base_url: str = ""
    api_key: str = ""
    base_url: str = ""
    dims: int = 0
    batch_size: int = 0
    timeout: float = 30.0
    max_retries: int = 4
    batch_api: bool = False
    # Text put before queries and documents; None keeps what the model file says (E5: "query: ", "passage: ").
    query_prefix: str | None = None
    document_prefix: str | None = None


@dataclass(frozen=True)
class AgentConfig:
    id: str
    workspace: Path
    store: Path
    extra_paths: tuple[Path, ...] = ()
    sources: tuple[str, ...] = ("memory",)
    sessions_dirs: tuple[Path, ...] = ()
    redact: tuple[str, ...] = ()  # extra regular expressions whose matches never reach the index or a provider
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)


@dataclass(frozen=True)
class Config:
    data_dir: Path
    socket: Path
    agents: tuple[AgentConfig, ...]
    debounce_seconds: float = 1.5
    session_debounce_seconds: float = 5.0
    session_sync_bytes: int = 100_000
    session_sync_messages: int = 50
    sync_on_search: bool = True
    sync_interval_seconds: float = 0.0
    reconcile_seconds: float = 300.0
    source_path: Path | None = None

    @property
    def default_agent(self) -> AgentConfig:
        return self.agents[0]

    def agent(self, agent_id: str | None) -> AgentConfig:
        if agent_id is None:
            return self.default_agent
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        known = ", ".join(a.id for a in self.agents)
        raise ConfigError(f"unknown agent {agent_id!r} (configured: {known})")


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_workspace() -> Path:
    return default_data_dir() / "workspace"


def default_model_path(data_dir: Path) -> Path:
    return data_dir / "models" / DEFAULT_MODEL_FILE


def _with_model_path(embedding: EmbeddingConfig, data_dir: Path, base: Path | None) -> EmbeddingConfig:
    if embedding.model_path:
        return replace(embedding, model_path=str(_expand(embedding.model_path, base)))
    return replace(embedding, model_path=str(default_model_path(data_dir)))


def _expand(value: str | os.PathLike[str], base: Path | None = None) -> Path:
    path = Path(os.path.expandvars(os.path.expanduser(str(value))))
    if not path.is_absolute() and base is not None:
        path = base / path
    return path.absolute()


def _section(cls: type, raw: Any, where: str) -> Any:
    """Build a frozen dataclass from a TOML table, rejecting unknown keys and wrong types."""
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    values = {}
    defaults = cls()
    for key, value in raw.items():
        default = getattr(defaults, key)
        expected = str if default is None else type(default)  # the optional fields are all strings
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if expected is tuple and isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = tuple(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"{where}.{key} must be {expected.__name__}, got {type(value).__name__}")
        values[key] = value
    return cls(**values)


def _merge(base: dict[str, Any] | None, override: dict[str, Any] | None) -> dict[str, Any] | None:
    if base is None:
        return override
    if override is None:
        return base
    return {**base, **override}


def _validate_agent(agent: AgentConfig) -> None:
    if not agent.id or not all(c.isalnum() or c in "-_." for c in agent.id):
        raise ConfigError(f"agent id {agent.id!r} must be letters, digits, '-', '_' or '.'")
    for source in agent.sources:
        if source not in SOURCES:
            raise ConfigError(f"agent {agent.id}: unknown source {source!r} (use {', '.join(SOURCES)})")
    q, c, e = agent.query, agent.chunking, agent.embedding
    if q.fusion not in FUSIONS:
        raise ConfigError(f"agent {agent.id}: fusion must be one of {', '.join(FUSIONS)}")
    if q.max_results < 1 or q.candidate_multiplier < 1:
        raise ConfigError(f"agent {agent.id}: max_results and candidate_multiplier must be >= 1")
    if q.vector_weight < 0 or q.text_weight < 0 or q.vector_weight + q.text_weight <= 0:
        raise ConfigError(f"agent {agent.id}: fusion weights must be >= 0 and not both 0")
    if c.tokens < 16 or not 0 <= c.overlap < c.tokens:
        raise ConfigError(f"agent {agent.id}: chunking needs tokens >= 16 and 0 <= overlap < tokens")
    if q.half_life_days <= 0 or not 0 <= q.mmr_lambda <= 1:
        raise ConfigError(f"agent {agent.id}: half_life_days must be > 0 and mmr_lambda within 0..1")
    for pattern in agent.redact:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"agent {agent.id}: bad redact pattern {pattern!r}: {exc}") from None
    for name in (e.provider, e.fallback):
        if name not in PROVIDERS:
            raise ConfigError(f"agent {agent.id}: unknown embedding provider {name!r}")


def _agent_from_table(raw: dict[str, Any], defaults: dict[str, Any], data_dir: Path, base: Path | None) -> AgentConfig:
    if "id" not in raw or "workspace" not in raw:
        raise ConfigError("every [[agents]] entry needs 'id' and 'workspace'")
    allowed = {
        "id",
        "workspace",
        "store",
        "extra_paths",
        "sources",
        "sessions_dir",
        "redact",
        "embedding",
        "query",
        "chunking",
    }
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ConfigError(f"agent {raw['id']}: unknown key(s) {', '.join(unknown)}")
    agent_id = str(raw["id"])
    workspace = _expand(raw["workspace"], base)
    store = _expand(raw["store"], base) if raw.get("store") else data_dir / "agents" / agent_id / "index.sqlite"
    sessions = raw.get("sessions_dir", [])
    if isinstance(sessions, str):
        sessions = [sessions]
    agent = AgentConfig(
        id=agent_id,
        workspace=workspace,
        store=store,
        extra_paths=tuple(_expand(p, workspace) for p in raw.get("extra_paths", [])),
        sources=tuple(raw.get("sources", ["memory"])),
        sessions_dirs=tuple(_expand(p, workspace) for p in sessions),
        redact=tuple(str(p) for p in raw.get("redact", [])),
        embedding=_with_model_path(
            _section(
                EmbeddingConfig, _merge(defaults.get("embedding"), raw.get("embedding")), f"agent {agent_id} embedding"
            ),
            data_dir,
            base,
        ),
        query=_section(QueryConfig, _merge(defaults.get("query"), raw.get("query")), f"agent {agent_id} query"),
        chunking=_section(
            ChunkingConfig, _merge(defaults.get("chunking"), raw.get("chunking")), f"agent {agent_id} chunking"
        ),
    )
    _validate_agent(agent)
    return agent


def quickstart_agent(workspace: Path, data_dir: Path, agent_id: str = DEFAULT_AGENT, **overrides: Any) -> AgentConfig:
    """One agent for a workspace given on the command line, with no config file."""
    agent = AgentConfig(
        id=agent_id, workspace=_expand(workspace), store=data_dir / "agents" / agent_id / "index.sqlite"
    )
    agent = replace(agent, **overrides) if overrides else agent
    agent = replace(agent, embedding=_with_model_path(agent.embedding, data_dir, None))
    _validate_agent(agent)
    return agent


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    socket: str | os.PathLike[str] | None = None,
) -> Config:
    """Load the config; explicit arguments beat environment variables, which beat the file."""
    explicit = path is not None or "MEMORYD_CONFIG" in os.environ
    config_path = _expand(path or os.environ.get("MEMORYD_CONFIG") or default_config_path())
    raw: dict[str, Any] = {}
    if config_path.exists():
        try:
            raw = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{config_path}: {exc}") from exc
    elif explicit and workspace is None:
        raise ConfigError(f"config file {config_path} does not exist")
    base = config_path.parent if config_path.exists() else None

    data = _expand(data_dir or os.environ.get("MEMORYD_DATA_DIR") or raw.get("data_dir") or default_data_dir(), base)
    sock = _expand(socket or os.environ.get("MEMORYD_SOCKET") or raw.get("socket") or default_socket_path(), base)
    daemon = raw.get("daemon", {})
    defaults = raw.get("defaults", {})

    if workspace is not None:
        tables = [{"id": DEFAULT_AGENT, "workspace": str(workspace)}]
        base = None
    else:
        tables = raw.get("agents") or [{"id": DEFAULT_AGENT, "workspace": str(default_workspace())}]
    if not isinstance(tables, list):
        raise ConfigError("'agents' must be an array of tables ([[agents]])")
    agents = tuple(_agent_from_table(t, defaults, data, base) for t in tables)
    ids = [a.id for a in agents]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"agent ids must be unique: {ids}")
    stores = [a.store for a in agents]
    if len(set(stores)) != len(stores):
        raise ConfigError("every agent needs its own store file")
    try:
        return Config(
            data_dir=data,
            socket=sock,
            agents=agents,
            debounce_seconds=float(daemon.get("debounce_seconds", 1.5)),
            session_debounce_seconds=float(daemon.get("session_debounce_seconds", 5.0)),
            session_sync_bytes=int(daemon.get("session_sync_bytes", 100_000)),
            session_sync_messages=int(daemon.get("session_sync_messages", 50)),
            sync_on_search=bool(daemon.get("sync_on_search", True)),
            sync_interval_seconds=float(daemon.get("sync_interval_seconds", 0.0)),
            reconcile_seconds=float(daemon.get("reconcile_seconds", 300.0)),
            source_path=config_path if config_path.exists() else None,
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[daemon]: {exc}") from exc
