"""The config schema: every setting, its type and its one default (the dataclasses below), checked strictly by
pydantic when memoryd.config loads a file."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, ConfigDict, Field

from memoryd_client.protocol.schema import FUSIONS, MAX_RESULTS, RECALL_BUDGET, SOURCES

APP_NAME = "memoryd"
DEFAULT_AGENT = "main"
# Chosen by measurement over SciFact, XQuAD (vi, en, zh, th) and LoCoMo: see the README.
DEFAULT_LOCAL_MODEL = "multilingual-e5-small"
DEFAULT_MODEL_FILE = f"{DEFAULT_LOCAL_MODEL}.q4_0.gguf"
T = TypeVar("T")


class ConfigError(ValueError):
    """The configuration cannot be used as written."""


# Every table is validated strictly (see `Problems.check`): numbers must be numbers, booleans booleans, arrays arrays,
# and unknown keys are errors. The dataclasses below are the schema and hold the only copy of each default.
STRICT = ConfigDict(extra="forbid", strict=True)
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Fusion = Literal[FUSIONS]  # type: ignore[valid-type]


def _known_provider(name: str) -> str:
    from memoryd.embeddings.registry import provider_names  # the registry's names, plugins included

    known = provider_names()
    if name not in known:
        raise ValueError(f"unknown provider {name!r}; known: {', '.join(known)}")
    return name


Provider = Annotated[str, AfterValidator(_known_provider)]  # built-ins and `memoryd.embeddings` plugins


@dataclass(frozen=True)
class ChunkingConfig:
    __pydantic_config__ = STRICT
    tokens: Annotated[int, Field(ge=16, le=8192)] = 400
    overlap: Annotated[int, Field(ge=0)] = 80
    # a vector for each window of a few sentences beside the chunk's own (search scores by both): a first index
    # takes about 2.6 times as long (docs/design.md, "Vectors for parts of a chunk")
    windows: bool = True


@dataclass(frozen=True)
class QueryConfig:
    __pydantic_config__ = STRICT
    max_results: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = 6
    min_score: Annotated[float, Field(ge=0, le=1)] = 0.2
    vector_weight: NonNegative = 0.5
    text_weight: NonNegative = 0.5
    candidate_multiplier: Annotated[int, Field(ge=1, le=100)] = 4
    # a vector candidate's similarity: this share from its best window's cosine, the rest from its own
    window_weight: Annotated[float, Field(ge=0, le=1)] = 0.5
    fusion: Fusion = "adaptive"
    rrf_k: Annotated[int, Field(ge=1)] = 60
    confidence_span: Positive = 2.0  # adaptive: standard deviations past the noise ceiling for full vector trust
    # adaptive: keyword evidence (the best hit's BM25 over the query's) below which the vector side takes the
    # keyword side's weight (as far as it is confident), and the span over which it hands it back; span 0: off
    # (python -m bench.crosslingual_study: every set and language pair, docs/design.md)
    evidence_floor: NonNegative = 0.4
    evidence_span: NonNegative = 0.6
    snippet_chars: Annotated[int, Field(ge=40, le=100_000)] = 700
    decay: bool = False  # off by default: measured neutral on SciFact, and old notes can be what you need
    half_life_days: Positive = 30.0
    evergreen: tuple[str, ...] = ("MEMORY.md", "memory.md")
    mmr: bool = False
    mmr_lambda: Annotated[float, Field(ge=0, le=1)] = 0.5
    access_weight: NonNegative = 0.0


@dataclass(frozen=True)
class RecallConfig:
    """Automatic recall (`memctl recall`, the agent hooks): what is put before a prompt, and when nothing is."""

    __pydantic_config__ = STRICT
    budget: Annotated[int, Field(ge=RECALL_BUDGET[0], le=RECALL_BUDGET[1])] = (
        1000  # tokens of the injected block, estimated high
    )
    max_results: Annotated[int, Field(ge=1, le=50)] = 8
    # a prompt whose vector is this much nearer memoryd's small-talk phrases than its memory questions gets
    # nothing; None: the margin measured for the default local model, no such check for others (bench.recall_study)
    chatter_margin: Annotated[float, Field(ge=-2, le=2)] | None = None
    # the best hit must hold this much of the prompt by keyword, or its vector stand this far past the noise
    min_evidence: NonNegative = 0.2
    min_vector_margin: float = 0.0


@dataclass(frozen=True)
class EmbeddingConfig:
    __pydantic_config__ = STRICT
    provider: Provider = "auto"
    model: str = ""
    model_path: str = ""
    fallback: Provider = "none"
    fallback_model: str = ""
    fallback_base_url: str = ""
    api_key: str = ""
    base_url: str = ""
    dims: Annotated[int, Field(ge=0)] = 0
    batch_size: Annotated[int, Field(ge=0)] = 0
    timeout: Positive = 30.0
    max_retries: Annotated[int, Field(ge=0, le=20)] = 4
    batch_api: bool = False
    threads: Annotated[int, Field(ge=0, le=256)] = 0  # local: llama.cpp threads for indexing (0: every core)
    # Text put before queries and documents; None keeps what the model file says (E5: "query: ", "passage: ").
    query_prefix: str | None = None
    document_prefix: str | None = None


@dataclass(frozen=True)
class DaemonConfig:
    """The [daemon] table."""

    __pydantic_config__ = STRICT
    debounce_seconds: NonNegative = 1.5
    session_debounce_seconds: NonNegative = 5.0
    session_sync_bytes: Annotated[int, Field(ge=1)] = 100_000
    session_sync_messages: Annotated[int, Field(ge=1)] = 50
    sync_on_search: bool = True
    sync_interval_seconds: NonNegative = 0.0
    reconcile_seconds: NonNegative = 300.0
    model_idle_minutes: NonNegative = 15.0  # unload the local model after this long unused (0: never)
    index_nice: Annotated[int, Field(ge=0, le=19)] = 10  # priority of sync and reindex threads (Linux)
    sqlite_memory_mb: NonNegative = 64.0  # soft cap on SQLite's memory in the whole daemon (0: none)


@dataclass(frozen=True)
class AgentTable:
    """One [[agents]] entry as written; `sessions_dir` alone may be a string, meaning a list of one."""

    __pydantic_config__ = STRICT
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]+$", max_length=64)]
    workspace: Annotated[str, Field(min_length=1)]
    store: str | None = None  # an index file, or a postgresql:// URL
    read_url: str | None = None  # PostgreSQL: a streaming replica that answers searches
    namespace: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]+$", max_length=32)] | None = None
    readers: tuple[Annotated[str, Field(min_length=1, max_length=63)], ...] = ()  # roles granted read
    extra_paths: tuple[Annotated[str, Field(min_length=1)], ...] = ()
    sources: tuple[Literal[SOURCES], ...] = ("memory",)  # type: ignore[valid-type]
    sessions_dir: str | tuple[str, ...] = ()
    redact: tuple[str, ...] = ()
    embedding: dict[str, Any] | None = None
    query: dict[str, Any] | None = None
    chunking: dict[str, Any] | None = None
    recall: dict[str, Any] | None = None


@dataclass(frozen=True)
class DefaultsTable:
    """[defaults]: embedding, query and chunking settings every agent starts from."""

    __pydantic_config__ = STRICT
    embedding: dict[str, Any] | None = None
    query: dict[str, Any] | None = None
    chunking: dict[str, Any] | None = None
    recall: dict[str, Any] | None = None


@dataclass(frozen=True)
class ConfigFile:
    """The whole file: its top-level keys and tables."""

    __pydantic_config__ = STRICT
    data_dir: str | None = None
    socket: str | None = None
    daemon: dict[str, Any] | None = None
    defaults: dict[str, Any] | None = None
    agents: tuple[dict[str, Any], ...] | None = None


def mask_password(url: str | None) -> str | None:
    """A connection URL or conninfo string with its password hidden."""
    if not url:
        return url
    url = re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", url)
    return re.sub(r"^(\w+://[^:/@]*):[^/]*@", r"\1:***@", url)


@dataclass(frozen=True)
class PostgresStore:
    """Where an agent's memory lives when it is shared through PostgreSQL."""

    url: str  # credentials from the URL, PGPASSFILE or PGPASSWORD, never printed
    namespace: str
    read_url: str | None = None
    readers: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentConfig:
    id: str
    workspace: Path
    store: Path  # the SQLite index, or (with `postgres`) where this daemon's hold on the agent is recorded
    extra_paths: tuple[Path, ...] = ()
    sources: tuple[str, ...] = ("memory",)
    sessions_dirs: tuple[Path, ...] = ()
    redact: tuple[str, ...] = ()  # extra regular expressions whose matches never reach the index or a provider
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    postgres: PostgresStore | None = None


@dataclass(frozen=True)
class Config:
    data_dir: Path
    socket: Path
    agents: tuple[AgentConfig, ...]
    debounce_seconds: float = DaemonConfig.debounce_seconds
    session_debounce_seconds: float = DaemonConfig.session_debounce_seconds
    session_sync_bytes: int = DaemonConfig.session_sync_bytes
    session_sync_messages: int = DaemonConfig.session_sync_messages
    sync_on_search: bool = DaemonConfig.sync_on_search
    sync_interval_seconds: float = DaemonConfig.sync_interval_seconds
    reconcile_seconds: float = DaemonConfig.reconcile_seconds
    model_idle_minutes: float = DaemonConfig.model_idle_minutes
    index_nice: int = DaemonConfig.index_nice
    sqlite_memory_mb: float = DaemonConfig.sqlite_memory_mb
    source_path: Path | None = None
    workspace_option: Path | None = None  # the --workspace it was loaded with (a reload loads it the same way)

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

    def as_dict(self) -> dict[str, Any]:
        """The effective configuration, as `memoryd config check` prints it (API keys masked)."""

        def plain(value: Any) -> Any:
            if isinstance(value, Path):
                return str(value)
            if isinstance(value, (tuple, list)):
                return [plain(v) for v in value]
            if isinstance(value, dict):
                return {
                    k: ("***" if k == "api_key" and v else mask_password(v) if k in ("url", "read_url") else plain(v))
                    for k, v in value.items()
                }
            return value

        return plain(asdict(self))
