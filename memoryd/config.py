"""Configuration: TOML file, environment overrides and zero-config defaults. The schema is memoryd.settings."""

from __future__ import annotations

import difflib
import json
import os
import pwd
import re
import sys
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import platformdirs
from pydantic import TypeAdapter, ValidationError

from memoryd.integrations import read_markers, with_integrations
from memoryd.postgres_urls import mask_password, url_problem
from memoryd.settings import (
    APP_NAME,
    DEFAULT_AGENT,
    DEFAULT_LOCAL_MODEL,
    DEFAULT_MODEL_FILE,
    READ_CONNECTIONS,
    STRICT,
    AgentConfig,
    AgentTable,
    ChunkingConfig,
    Config,
    ConfigError,
    ConfigFile,
    DaemonConfig,
    DefaultsTable,
    EmbeddingConfig,
    Fusion,
    NonNegative,
    Positive,
    PostgresStore,
    Provider,
    QueryConfig,
    RecallConfig,
)
from memoryd.sources.redact import redact_pattern_error
from memoryd_client.protocol.paths import default_socket_path
from memoryd_client.protocol.schema import FUSIONS, SOURCES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

T = TypeVar("T")
__all__ = [
    "APP_NAME",
    "DEFAULT_AGENT",
    "DEFAULT_LOCAL_MODEL",
    "DEFAULT_MODEL_FILE",
    "FUSIONS",
    "SOURCES",
    "STRICT",
    "AgentConfig",
    "AgentTable",
    "ChunkingConfig",
    "Config",
    "ConfigError",
    "ConfigFile",
    "DaemonConfig",
    "DefaultsTable",
    "EmbeddingConfig",
    "Fusion",
    "NonNegative",
    "Positive",
    "Provider",
    "QueryConfig",
    "RecallConfig",
    "default_config_path",
    "default_data_dir",
    "default_model_path",
    "default_workspace",
    "load_config",
    "missing_paths",
    "quickstart_agent",
]


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_workspace() -> Path:
    return default_data_dir() / "workspace"


def default_model_path(data_dir: Path) -> Path:
    return data_dir / "models" / DEFAULT_MODEL_FILE


def _with_model_path(embedding: EmbeddingConfig, data_dir: Path, base: Path | None) -> EmbeddingConfig:
    """The local model's file: `model_path` as given, else the prepared model `model` names, else the default.

    A `model` naming a model memoryd prepares means that local model: with provider `auto` too, which then never
    falls to a remote provider (the notes stay on this machine, and no remote API is asked for a local name)."""
    from memoryd.embeddings.models.recipes import RECIPES, model_path

    name, _, quant = embedding.model.partition(":")
    prepared = embedding.provider in ("local", "auto") and name in RECIPES
    if prepared:
        if quant and quant not in RECIPES[name].quants:
            raise ConfigError(
                f"embedding.model {embedding.model!r}: {name} is prepared as {' or '.join(RECIPES[name].quants)}"
            )
        embedding = replace(embedding, provider="local")
    elif embedding.provider == "local" and embedding.model and not embedding.model_path:
        close = difflib.get_close_matches(name, list(RECIPES), n=1, cutoff=0.8)
        if close:
            raise ConfigError(f"embedding.model {embedding.model!r} is not a model memoryd prepares: {close[0]}?")
    if embedding.model_path:
        return replace(embedding, model_path=str(_expand(embedding.model_path, base)))
    if prepared:
        return replace(embedding, model_path=str(model_path(data_dir, name, quant or None)))
    return replace(embedding, model_path=str(default_model_path(data_dir)))


def _expand(value: str | os.PathLike[str], base: Path | None = None) -> Path:
    path = Path(os.path.expandvars(os.path.expanduser(str(value))))
    if not path.is_absolute() and base is not None:
        path = base / path
    return path.absolute()


class Problems(list[str]):
    """Every error found in a config, gathered so that one `config check` reports them all."""

    def check(self, schema: type[T], raw: Any, where: str) -> T | None:
        """A table checked against its schema, or None (its problems recorded) when it does not pass: each
        problem with its key, a misspelt key with the nearest valid one. TOML goes through JSON so that arrays
        can fill tuples under strict typing."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            self.append(f"{where or 'the file'} must be a table")
            return None
        try:
            return TypeAdapter(schema).validate_json(json.dumps(raw, default=str))
        except ValidationError as exc:
            self.extend(_problem(schema, error, where) for error in exc.errors())
            return None

    def raise_any(self) -> None:
        if self:
            raise ConfigError("\n".join(dict.fromkeys(self)))


def _problem(schema: type, error: Any, where: str) -> str:
    loc = [str(part) for part in error["loc"]]
    key = ".".join([where, *loc]) if where else ".".join(loc)
    if error["type"] in ("unexpected_keyword_argument", "extra_forbidden") and loc:
        known = [f.name for f in fields(schema)]
        near = difflib.get_close_matches(loc[-1], known, n=1)
        return f"{key}: unknown key" + (f" (did you mean {near[0]!r}?)" if near else f" (known: {', '.join(known)})")
    return f"{key}: {error['msg'].lower()}"


def _merge(base: dict[str, Any] | None, override: dict[str, Any] | None) -> dict[str, Any] | None:
    if base is None:
        return override
    if override is None:
        return base
    return {**base, **override}


def _agent_problems(agent: AgentConfig) -> list[str]:
    """Checks that span fields (each field alone is checked by its schema)."""
    problems = []
    if not agent.id or not all(c.isalnum() or c in "-_." for c in agent.id):
        problems.append(f"agent id {agent.id!r} must be letters, digits, '-', '_' or '.'")
    for source in agent.sources:
        if source not in SOURCES:
            problems.append(f"agent {agent.id}: unknown source {source!r} (use {', '.join(SOURCES)})")
    if "sessions" in agent.sources and not agent.sessions_dirs:
        problems.append(f"agent {agent.id}: sources include 'sessions' but no sessions_dir says where transcripts are")
    q, c = agent.query, agent.chunking
    if agent.postgres is not None:
        for name, url in (("store", agent.postgres.url), ("read_url", agent.postgres.read_url)):
            why = url_problem(url) if url else None
            if why:
                problems.append(f"agent {agent.id}: {name}: {why}")
    if q.fusion not in FUSIONS:
        problems.append(f"agent {agent.id}: fusion must be one of {', '.join(FUSIONS)}")
    if q.vector_weight + q.text_weight <= 0:
        problems.append(f"agent {agent.id}: query.vector_weight and query.text_weight cannot both be 0")
    if c.overlap >= c.tokens:
        problems.append(f"agent {agent.id}: chunking.overlap must be less than chunking.tokens")
    for pattern in agent.redact:
        why = redact_pattern_error(pattern)
        if why:
            problems.append(f"agent {agent.id}: bad redact pattern {pattern!r}: {why}")
    return problems


def _validate_agent(agent: AgentConfig) -> None:
    problems = Problems(_agent_problems(agent))
    problems.raise_any()


def _agent_from_table(
    raw: Any, defaults: DefaultsTable, data_dir: Path, base: Path | None, where: str, problems: Problems
) -> AgentConfig | None:
    table = problems.check(AgentTable, raw, where)
    written = raw if isinstance(raw, dict) else {}
    label = f"{where} ({written.get('id', '?')})"

    def part(name: str) -> dict[str, Any] | None:  # checked here even when the table around it is not valid
        value = written.get(name)
        return value if isinstance(value, dict) else None

    embedding = problems.check(EmbeddingConfig, _merge(defaults.embedding, part("embedding")), f"{label}.embedding")
    query = problems.check(QueryConfig, _merge(defaults.query, part("query")), f"{label}.query")
    chunking = problems.check(ChunkingConfig, _merge(defaults.chunking, part("chunking")), f"{label}.chunking")
    recall = problems.check(RecallConfig, _merge(defaults.recall, part("recall")), f"{label}.recall")
    if table is None or embedding is None or query is None or chunking is None or recall is None:
        return None
    if table.store and not is_postgres_url(table.store) and _misread_url(table.store):
        problems.append(
            f"{label}: store: neither a postgresql:// URL nor a file path (write a PostgreSQL store as"
            " postgresql://user@host/database; SQLAlchemy's postgresql+psycopg:// and conninfo strings are not read)"
        )
    postgres_only = table.read_url or table.namespace or table.readers or table.max_connections
    if not (table.store and is_postgres_url(table.store)) and postgres_only:
        problems.append(f"{label}: read_url, namespace, readers and max_connections need a postgresql:// store")
    elif table.store and is_postgres_url(table.store) and not table.namespace and len(table.id) > 32:
        problems.append(f"{label}: an id over 32 characters cannot name a PostgreSQL namespace; set namespace")
    workspace = _expand(table.workspace, base)
    sessions = (table.sessions_dir,) if isinstance(table.sessions_dir, str) else table.sessions_dir
    agent = AgentConfig(
        id=table.id,
        workspace=workspace,
        store=_expand(table.store, base)
        if table.store and not is_postgres_url(table.store)
        else data_dir / "agents" / table.id / "index.sqlite",
        postgres=_postgres(table),
        extra_paths=tuple(_expand(p, workspace) for p in table.extra_paths),
        sources=table.sources,
        sessions_dirs=tuple(_expand(p, workspace) for p in sessions),
        redact=table.redact,
        embedding=_with_model_path(embedding, data_dir, base),
        query=query,
        chunking=chunking,
        recall=recall,
    )
    problems.extend(_agent_problems(agent))
    return agent


def _user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def _misread_url(store: str) -> bool:
    """A `store` meant as a database but not written as a postgresql:// URL, which would be taken for a file path
    (one named after the password)."""
    return "://" in store or store != store.strip() or re.search(r"(?i)\b(ssl)?password\s*=", store) is not None


def is_postgres_url(value: str) -> bool:
    return value.startswith(POSTGRES_SCHEMES)


def _postgres(table: AgentTable) -> PostgresStore | None:
    """The PostgreSQL store of an agent whose `store` is a URL (environment variables in it are expanded, so that
    a password can come from one)."""
    if not table.store or not is_postgres_url(table.store):
        return None
    read_url = os.path.expandvars(table.read_url) if table.read_url else None
    return PostgresStore(
        os.path.expandvars(table.store),
        table.namespace or table.id,
        read_url,
        table.readers,
        table.max_connections or READ_CONNECTIONS,
    )


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
    check_paths: bool = False,
) -> Config:
    """Load the config; explicit arguments beat environment variables, which beat the file. With `check_paths`,
    what it names that is not there (`missing_paths`) is an error too, reported with every other one."""
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

    problems = Problems()
    file = problems.check(ConfigFile, raw, "")
    if file is None:  # a misspelt top-level key: check the tables that are there all the same
        file = ConfigFile(**{f.name: raw.get(f.name) for f in fields(ConfigFile) if isinstance(raw.get(f.name), dict)})
    data = _expand(data_dir or os.environ.get("MEMORYD_DATA_DIR") or file.data_dir or default_data_dir(), base)
    sock = _expand(socket or os.environ.get("MEMORYD_SOCKET") or file.socket or default_socket_path(), base)
    daemon = problems.check(DaemonConfig, file.daemon, "[daemon]") or DaemonConfig()
    defaults = problems.check(DefaultsTable, file.defaults, "[defaults]") or DefaultsTable()
    problems.extend(
        f"[daemon] metrics_users: no local user {user!r}" for user in daemon.metrics_users if not _user(user)
    )

    if workspace is not None:
        tables: tuple[Any, ...] = ({"id": DEFAULT_AGENT, "workspace": str(workspace)},)
        base = None
    else:
        tables = file.agents or ({"id": DEFAULT_AGENT, "workspace": str(default_workspace())},)
    found = [_agent_from_table(t, defaults, data, base, f"agents[{i}]", problems) for i, t in enumerate(tables)]
    agents = tuple(a for a in found if a is not None)
    if agents:
        markers, unreadable = read_markers(data)
        agents, unplaced = with_integrations(agents, markers)
        problems.extend([*unreadable, *unplaced])
    ids = [a.id for a in agents]
    if len(set(ids)) != len(ids):
        problems.append(f"agent ids must be unique: {ids}")
    stores = [a.store for a in agents]
    if len(set(stores)) != len(stores):
        problems.append("every agent needs its own store file")
    shared = [(mask_password(a.postgres.url), a.postgres.namespace) for a in agents if a.postgres]
    if len(set(shared)) != len(shared):
        problems.append("every agent needs its own PostgreSQL namespace")
    if check_paths:
        problems.extend(missing_paths(agents, data))
    problems.raise_any()
    return Config(
        data_dir=data,
        socket=sock,
        agents=agents,
        **asdict(daemon),
        source_path=config_path if config_path.exists() else None,
        workspace_option=_expand(workspace) if workspace is not None else None,
    )


def missing_paths(agents: tuple[AgentConfig, ...], data_dir: Path) -> list[str]:
    """What the config names that is not there: a workspace (other than the default one, which is made on first
    run), a sessions folder, a local model file other than the default one (which `--prepare-model` builds)."""
    problems = []
    for agent in agents:
        if agent.workspace != default_workspace() and not agent.workspace.is_dir():
            what = "is not a folder" if agent.workspace.exists() else "does not exist"
            problems.append(f"agent {agent.id}: workspace {agent.workspace} {what}")
        if "sessions" in agent.sources:
            for folder in agent.sessions_dirs:
                if not folder.is_dir():
                    problems.append(f"agent {agent.id}: sessions_dir {folder} does not exist")
        model = Path(agent.embedding.model_path)
        if agent.embedding.provider == "local" and model != default_model_path(data_dir) and not model.is_file():
            from memoryd.embeddings.models.recipes import prepare_command

            command = prepare_command(data_dir, model)
            fix = f" (run: {command})" if command else ""
            problems.append(f"agent {agent.id}: embedding.model_path {model} does not exist{fix}")
    return problems
