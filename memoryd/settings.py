"""The config schema: every setting, its type and its one default (the dataclasses below), checked strictly by
pydantic when memoryd.config loads a file."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, ConfigDict, Field

from memoryd.postgres_urls import mask_password
from memoryd_client.protocol.schema import FUSIONS, MAX_RESULTS, RECALL_BUDGET, SOURCES

APP_NAME = "memoryd"
DEFAULT_AGENT = "main"
# Chosen by measurement over SciFact, XQuAD (vi, en, zh, th) and LoCoMo: docs/design.md, "The default model".
DEFAULT_LOCAL_MODEL = "multilingual-e5-small"
DEFAULT_MODEL_FILE = f"{DEFAULT_LOCAL_MODEL}.q4_0.gguf"
T = TypeVar("T")


class ConfigError(ValueError):
    """The configuration cannot be used as written."""


# Every table is validated strictly (see `Problems.check`): numbers must be numbers, booleans booleans, arrays arrays,
# and unknown keys are errors. The dataclasses below are the schema and hold the only copy of each default; the
# docstring under each field is its description (pydantic reads it: use_attribute_docstrings), from which
# docs/configuration.md is written (python -m memoryd.settings_doc).
STRICT = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Fusion = Literal[FUSIONS]  # type: ignore[valid-type]  # the protocol's tuple: pydantic reads it, mypy wants literals


def _known_provider(name: str) -> str:
    from memoryd.embeddings.registry import provider_names  # the registry's names, plugins included

    known = provider_names()
    if name not in known:
        raise ValueError(f"unknown provider {name!r}; known: {', '.join(known)}")
    return name


Provider = Annotated[str, AfterValidator(_known_provider)]  # built-ins and `memoryd.embeddings` plugins


@dataclass(frozen=True)
class ChunkingConfig:
    """How notes are cut into chunks, each indexed and cited on its own. Changing any of it rebuilds the index."""

    __pydantic_config__ = STRICT
    tokens: Annotated[int, Field(ge=16, le=8192)] = 400
    """Size of a chunk, in tokens."""
    overlap: Annotated[int, Field(ge=0)] = 80
    """Tokens a chunk repeats from the one before it; less than `tokens`."""
    windows: bool = True
    """Also embed each chunk's windows of a few sentences (about 64 tokens), so that search scores a chunk by its
    best window too: a first index takes about 2.6 times as long (docs/design.md, "Vectors for parts of a chunk")."""


@dataclass(frozen=True)
class QueryConfig:
    """How searches rank: the defaults of the `search` call's options and of fusion."""

    __pydantic_config__ = STRICT
    max_results: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = 6
    """Results a search returns unless it asks for another number."""
    min_score: Annotated[float, Field(ge=0, le=1)] = 0.2
    """Results scoring below this are dropped."""
    vector_weight: NonNegative = 0.5
    """Weight of the vector (embedding) side in fusion; it and `text_weight` cannot both be 0."""
    text_weight: NonNegative = 0.5
    """Weight of the keyword (BM25) side in fusion."""
    candidate_multiplier: Annotated[int, Field(ge=1, le=100)] = 4
    """Candidates gathered for fusion: this many times `max_results`."""
    window_weight: Annotated[float, Field(ge=0, le=1)] = 0.5
    """A vector hit's similarity: this share from its best window's cosine, the rest from the whole chunk's; 0: the
    chunk's alone."""
    fusion: Fusion = "adaptive"
    """How keyword and vector hits are combined: `adaptive` (each side weighed by how much it stands out),
    `weighted` (fixed weights) or `rrf` (reciprocal rank fusion)."""
    rrf_k: Annotated[int, Field(ge=1)] = 60
    """rrf: the constant k of 1 / (k + rank)."""
    confidence_span: Positive = 2.0
    """adaptive: how fast the vector side earns its full weight (standard deviations past the noise ceiling)."""
    evidence_floor: NonNegative = 0.4  # python -m research.crosslingual_study: every set and language pair
    """adaptive: keyword hits holding less of the query than this (the best hit's BM25 over the query's own) hand
    their weight to a confident vector side (docs/design.md)."""
    evidence_span: NonNegative = 0.6
    """adaptive: the span above `evidence_floor` over which the keyword side takes its weight back; 0: off."""
    snippet_chars: Annotated[int, Field(ge=40, le=100_000)] = 700
    """Length of a result's snippet, in characters (per chunk, for a result that joins several)."""
    decay: bool = False
    """Favour recent memories. Off by default: measured neutral on SciFact, and old notes can be what you need."""
    half_life_days: Positive = 30.0
    """decay: the age at which an episodic memory's score is halved; semantic ones last 6 times as long,
    procedural 12, lore and `evergreen` files never decay."""
    evergreen: tuple[str, ...] = ("MEMORY.md", "memory.md")
    """Files that never decay: a path in the workspace, or a file name."""
    mmr: bool = False
    """Diversify the results (maximal marginal relevance), so that near-duplicates do not fill the page."""
    mmr_lambda: Annotated[float, Field(ge=0, le=1)] = 0.5
    """mmr: relevance against diversity (1: relevance only)."""
    access_weight: NonNegative = 0.0
    """Favour memories that searches returned often (score x (1 + weight x ln(1 + hits))); 0: off."""


@dataclass(frozen=True)
class RecallConfig:
    """Automatic recall (`memctl recall`, the agent hooks): what is put before a prompt, and when nothing is."""

    __pydantic_config__ = STRICT
    budget: Annotated[int, Field(ge=RECALL_BUDGET[0], le=RECALL_BUDGET[1])] = 1000
    """Tokens of the injected block, estimated high."""
    max_results: Annotated[int, Field(ge=1, le=50)] = 8
    """Memories in the block at most."""
    chatter_margin: Annotated[float, Field(ge=-2, le=2)] | None = None  # measured: python -m research.recall_study
    """A prompt whose vector is this much nearer memoryd's small-talk phrases than its memory questions gets
    nothing. Unset: the margin measured for the default local model, and no such check for other models."""
    min_evidence: NonNegative = 0.2
    """The best hit must hold this much of the prompt by keyword..."""
    min_vector_margin: float = 0.0
    """...or its vector stand this far past the cosine noise ceiling; else nothing is recalled."""


@dataclass(frozen=True)
class EmbeddingConfig:
    """Which model turns text into vectors. Changing the provider or model rebuilds the index."""

    __pydantic_config__ = STRICT
    provider: Provider = "auto"
    """`auto`: the local model if it has been prepared, else the first of OpenAI, Gemini and Voyage with a key in
    the environment. `none`: keyword search only. `hash` is lexical, not semantic: for tests, or where no model can
    be had."""
    model: str = ""
    """Remote: the model's name. Default per provider: text-embedding-3-small (openai), gemini-embedding-001,
    voyage-3.5-lite, nomic-embed-text (ollama). local: a model `memoryd model prepare` built, by name, optionally
    with its weight format ("embeddinggemma-300m", "embeddinggemma-300m:f16"), when `model_path` is unset."""
    model_path: str = ""
    """local: any GGUF embedding model. Default: the prepared multilingual-e5-small,
    `<data_dir>/models/multilingual-e5-small.q4_0.gguf`."""
    fallback: Provider = "none"
    """Used when the provider fails; the primary is tried again every 10 minutes. Each switch rebuilds the index
    atomically in the new vector space."""
    fallback_model: str = ""
    """The fallback's model name (default per provider, as `model`)."""
    fallback_base_url: str = ""
    """The fallback's server (default: its provider's)."""
    api_key: str = ""
    """Remote: the key; else OPENAI_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY), VOYAGE_API_KEY. A fallback reads
    its key from the environment only. Never logged; `config check` masks it."""
    base_url: str = ""
    """Remote: another server, e.g. any OpenAI-compatible one (`http://127.0.0.1:8080/v1`)."""
    dims: Annotated[int, Field(ge=0)] = 0
    """Dimensions to ask a remote model for, where its API can shorten vectors (0: the model's own; hash: 256)."""
    batch_size: Annotated[int, Field(ge=0)] = 0
    """Accepted, not used: remote calls are batched within each API's own limits."""
    timeout: Positive = 30.0
    """Remote: seconds to wait for one request."""
    max_retries: Annotated[int, Field(ge=0, le=20)] = 4
    """Remote: retries on 429, 5xx and timeouts, with exponential backoff and jitter (a Retry-After is honoured)."""
    batch_api: bool = False
    """OpenAI and Gemini: large first indexes through the providers' asynchronous batch jobs."""
    threads: Annotated[int, Field(ge=0, le=256)] = 0
    """local: llama.cpp threads for indexing (0: every core); queries always use every core."""
    query_prefix: str | None = None
    """local and ollama: text put before queries. Unset: the model's own, from the model file that memoryd built
    (E5: "query: "), else its family's (docs/configuration.md#model-prompts: EmbeddingGemma, Qwen3-Embedding,
    nomic-embed, E5, ...)."""
    document_prefix: str | None = None
    """local and ollama: text put before documents. Unset: the model's own, as for `query_prefix` (E5:
    "passage: ")."""


@dataclass(frozen=True)
class DaemonConfig:
    """The [daemon] table: when the daemon syncs, and what it may spend."""

    __pydantic_config__ = STRICT
    debounce_seconds: NonNegative = 1.5
    """Quiet time after a note is saved before it is synced."""
    session_debounce_seconds: NonNegative = 5.0
    """Transcripts: quiet time before a sync..."""
    session_sync_bytes: Annotated[int, Field(ge=1)] = 100_000
    """...unless this many bytes were appended..."""
    session_sync_messages: Annotated[int, Field(ge=1)] = 50
    """...or this many lines."""
    sync_on_search: bool = True
    """A search first syncs changes still waiting for their debounce."""
    sync_interval_seconds: NonNegative = 0.0
    """An extra periodic sync (0: off)."""
    reconcile_seconds: NonNegative = 300.0
    """A periodic scan for anything a watcher missed (0: off)."""
    model_idle_minutes: NonNegative = 15.0
    """Unload the local model after this long unused (0: never); reloading takes about a second."""
    index_nice: Annotated[int, Field(ge=0, le=19)] = 10
    """Priority of sync and reindex threads, and of the threads they start (Linux)."""
    sqlite_memory_mb: NonNegative = 64.0
    """Soft cap on SQLite's memory in the whole daemon, every index's page caches together (0: none)."""
    ui: bool = True
    """Serve the local web page (`memctl ui` opens it): loopback only, for this user alone, with a token."""
    ui_port: Annotated[int, Field(ge=0, le=65535)] = 0
    """The web page's port on 127.0.0.1; 0: a free one, new at each start (`memctl ui` asks the daemon which), so
    that several users' daemons on one machine never compete for a port. Read at start."""
    metrics_port: Annotated[int, Field(ge=0, le=65535)] = 0
    """Serve Prometheus metrics at http://127.0.0.1:PORT/metrics (request times by method, errors, each agent's
    files, chunks, embedding backlog, store health, role and replica lag), for this user's processes only; 0: off.
    Read at start."""
    metrics_users: tuple[str, ...] = ()
    """Local users besides this one whose processes may read the metrics (a Prometheus running as `prometheus`)."""


READ_CONNECTIONS = 8  # to each PostgreSQL server, per agent (max_connections)


@dataclass(frozen=True)
class AgentTable:
    """One [[agents]] entry: an agent's memory, where its index lives, and its own settings."""

    __pydantic_config__ = STRICT
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]+$", max_length=64)]
    """The agent's name (`--agent`, `agents` in a search); unique."""
    workspace: Annotated[str, Field(min_length=1)]
    """The folder of its notes: `MEMORY.md`, `memory.md` and `memory/**/*.md`."""
    store: str | None = None
    """Its index: a SQLite file (default `<data_dir>/agents/<id>/index.sqlite`), or a `postgresql://` URL
    (docs/postgresql.md; a password from PGPASSWORD, ~/.pgpass or a `${VAR}` in the URL)."""
    read_url: str | None = None
    """PostgreSQL: a streaming replica that answers searches."""
    namespace: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]+$", max_length=32)] | None = None
    """PostgreSQL: the namespace in the database (default: the agent id, which then may have at most 32
    characters)."""
    readers: tuple[Annotated[str, Field(min_length=1, max_length=63)], ...] = ()
    """PostgreSQL: roles granted read access to the namespace."""
    max_connections: Annotated[int, Field(ge=1, le=1000)] | None = None
    """PostgreSQL: the most read connections the daemon opens for this agent to each server (the primary, and the
    replica), default 8; a read waits for a free one, up to 10 s. Besides them: one for writes and one that hears
    other daemons' commits."""
    extra_paths: tuple[Annotated[str, Field(min_length=1)], ...] = ()
    """More Markdown files or folders to index (relative to the workspace)."""
    sources: tuple[Literal[SOURCES], ...] = ("memory",)  # type: ignore[valid-type]  # a tuple: see Fusion
    """What is indexed: `memory` (the notes), `sessions` (conversation transcripts, which needs `sessions_dir`)."""
    sessions_dir: str | tuple[str, ...] = ()
    """Folders of `.jsonl` transcripts (relative to the workspace); one folder may be a string."""
    redact: tuple[str, ...] = ()
    """Extra secret patterns masked before text reaches the index or a provider: regular expressions in RE2's
    syntax (no lookaround or backreferences)."""
    embedding: dict[str, Any] | None = None
    """The agent's [agents.embedding] table, over [defaults.embedding]."""
    query: dict[str, Any] | None = None
    """The agent's [agents.query] table, over [defaults.query]."""
    chunking: dict[str, Any] | None = None
    """The agent's [agents.chunking] table, over [defaults.chunking]."""
    recall: dict[str, Any] | None = None
    """The agent's [agents.recall] table, over [defaults.recall]."""


@dataclass(frozen=True)
class DefaultsTable:
    """[defaults]: embedding, query, chunking and recall settings every agent starts from."""

    __pydantic_config__ = STRICT
    embedding: dict[str, Any] | None = None
    """Keys of [agents.embedding] for every agent."""
    query: dict[str, Any] | None = None
    """Keys of [agents.query] for every agent."""
    chunking: dict[str, Any] | None = None
    """Keys of [agents.chunking] for every agent."""
    recall: dict[str, Any] | None = None
    """Keys of [agents.recall] for every agent."""


@dataclass(frozen=True)
class ConfigFile:
    """The whole file: its top-level keys and tables."""

    __pydantic_config__ = STRICT
    data_dir: str | None = None
    """Where the indexes (one SQLite file per agent) and models are kept, with the hooks' log, the MCP HTTP token
    and the integrations' markers. Default: `~/.local/share/memoryd` (`$XDG_DATA_HOME/memoryd`; macOS:
    `~/Library/Application Support/memoryd`); MEMORYD_DATA_DIR and `--data-dir` override it."""
    socket: str | None = None
    """The daemon's Unix socket. Default: `$XDG_RUNTIME_DIR/memoryd/memoryd.sock`, else
    `~/.local/state/memoryd/run/memoryd.sock` (macOS: `~/Library/Application Support/memoryd/memoryd.sock`);
    MEMORYD_SOCKET and `--socket` override it."""
    daemon: dict[str, Any] | None = None
    """The [daemon] table."""
    defaults: dict[str, Any] | None = None
    """The [defaults] table."""
    agents: tuple[dict[str, Any], ...] | None = None
    """The [[agents]] tables; none: one agent, `main`, whose workspace is `<data_dir>/workspace`."""


@dataclass(frozen=True)
class PostgresStore:
    """Where an agent's memory lives when it is shared through PostgreSQL."""

    url: str  # credentials from the URL, PGPASSFILE or PGPASSWORD, never printed
    namespace: str
    read_url: str | None = None
    readers: tuple[str, ...] = ()
    max_connections: int = READ_CONNECTIONS


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
    ui: bool = DaemonConfig.ui
    ui_port: int = DaemonConfig.ui_port
    metrics_port: int = DaemonConfig.metrics_port
    metrics_users: tuple[str, ...] = DaemonConfig.metrics_users
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
