"""Every RPC method and its parameters, written once. The daemon validates requests against it
(memoryd_client.protocol.validation), the stub checks option names with it, memctl builds its options and help from it,
the MCP bridge its tool schemas, and docs/protocol.md its parameter tables (`python -m memoryd_client.protocol.doc`).

A method is a class of typed attributes (memoryd_client.protocol.request); an instance is one request, as the
library and the search engine take it. Imports nothing (memctl's fast path reads it on every call), so types are the
annotations' strings: `str`, `int`, `float` (any finite number), `bool`, `list[str]`, joined with `|`; `| None` marks
it optional."""

from __future__ import annotations

from memoryd_client.protocol.limits import MAX_CLIENT_CHARS, MAX_PATH_CHARS, MAX_PROMPT_CHARS, MAX_SESSION_CHARS
from memoryd_client.protocol.request import Request, param

MAX_RESULTS = 200
RECALL_BUDGET = (64, 20_000)  # tokens a recall block may be given (the request's and the config's bounds)
RECALL_LOG_LIMIT, RECALL_LOG_MAX = 20, 1000  # recalls `recall_log` answers by default, and at most
NOTES_LIMIT, NOTES_MAX = 500, 100_000  # files `notes` lists by default, and at most
MAX_WAIT_SECONDS = 3600.0
DEFAULT_WAIT_SECONDS = 120.0  # how long `sync` and `reindex(wait)` wait unless told otherwise
MODES = ("hybrid", "keyword", "vector")
FUSIONS = ("adaptive", "weighted", "rrf")
SOURCES = ("memory", "sessions")
MEMORY_TYPES = ("episodic", "semantic", "procedural", "lore")
CLIENTS = ("claude-code", "codex", "opencode", "openclaw")  # integrations `status` counts by name
OTHER_CLIENT = "other"  # what `status` counts every other client name as

AGENT_HELP = "Agent id (default: the daemon's default agent)."
CLIENT_HELP = (
    f"Which integration asks ({', '.join(CLIENTS)}; any other name counts as {OTHER_CLIENT}): `status` says when "
    "each last did."
)


class Ping(Request):
    method, lane, idempotent = "ping", "inline", True
    summary = "Whether the daemon answers, and what it is."
    returns = "{pong, version, pid, uptime_s, agents, default_agent, socket, reload_error, rss_mb, ...}"


class Search(Request):
    method, idempotent = "search", True
    summary = "Hybrid search: ranked snippets with `path#Lstart-Lend` citations."
    returns = (
        "{results: [...], mode, provider, model, took_ms, fusion, degraded, restored_query, partial, embedded, agent, "
        "agents, skipped}"
    )
    query: str = param(help="What to recall, in any language; exact names and identifiers work too.", cli=None)
    max_results: int | None = param(
        None, "How many results (default: the agent's, 6).", ge=1, le=MAX_RESULTS, cli=("-n", "--max-results")
    )
    min_score: float | None = param(None, "Drop results scoring below this (default: the agent's, 0.2).")
    mode: str = param("hybrid", "Which side runs: both fused, or one.", choices=MODES, mcp=False)
    sources: list[str] | None = param(
        None, "Only these sources: memory (notes), sessions (conversations).", choices=SOURCES, cli=("--source",)
    )
    fusion: str | None = param(
        None, "How the two sides are fused (default: the agent's, adaptive).", choices=FUSIONS, mcp=False
    )
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)
    agents: list[str] | None = param(
        None,
        "Search these agents' memories together (shared namespaces among them); each result names its agent.",
        cli=("--agents",),
    )
    path: str | None = param(
        None,
        "Only files under this prefix (memory/people/) or matching this glob (memory/2026-*).",
        max_length=MAX_PATH_CHARS,
        path=True,
    )
    after: str | float | None = param(None, "Only memories from this date on (YYYY-MM-DD, ISO time or epoch seconds).")
    before: str | float | None = param(None, "Only memories up to the end of this date.")
    type: str | list[str] | None = param(None, "Only memories of this type, or these.", choices=MEMORY_TYPES)
    explain: bool = param(False, "Add how each score was made to every result.", mcp=False)
    mmr: bool | None = param(None, "Diversify near-duplicate results (default: the agent's setting).", mcp=False)
    decay: bool | None = param(None, "Favour recent memories (default: the agent's setting).", mcp=False)


class Recall(Request):
    method = "recall"  # not resent: it records what the session was shown
    summary = (
        "The memories worth putting before a prompt, as one block within a token budget, or nothing (small talk, "
        "bare commands, nothing relevant, all already shown in this session)."
    )
    returns = "{agent, block, memories: [{citation, score}], tokens, skipped, took_ms}"
    prompt: str = param(
        help=f"The user's prompt, as the agent got it (at most {MAX_PROMPT_CHARS:,} characters; a long one is read "
        "for its topic: its start and its last question).",
        cli=None,
        max_length=MAX_PROMPT_CHARS,
    )
    session: str | None = param(
        None,
        f"The agent's session id (at most {MAX_SESSION_CHARS} characters): what it was already shown is not shown "
        "again.",
        max_length=MAX_SESSION_CHARS,
    )
    transcript: str | None = param(
        None,
        "The session's own transcript file: its turns are in the agent's context already, never recalled.",
        max_length=MAX_PATH_CHARS,
        path=True,
    )
    budget: int | None = param(
        None,
        "Tokens the block may take, estimated high (default: the agent's, 1000).",
        ge=RECALL_BUDGET[0],
        le=RECALL_BUDGET[1],
    )
    sources: list[str] | None = param(
        None, "Only these sources: memory (notes), sessions (conversations).", choices=SOURCES, cli=("--source",)
    )
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)
    client: str | None = param(None, CLIENT_HELP, cli=None, mcp=False, max_length=MAX_CLIENT_CHARS, known=CLIENTS)


class RecallLog(Request):
    method, lane, idempotent = "recall_log", "bulk", True
    summary = (
        "What automatic recall put before which prompt, latest last: per session and agent, from a log kept on disk."
    )
    returns = (
        "{entries: [{time, agent, session, client, prompt, memories: [{citation, score, date}], tokens, skipped}]}"
    )
    agent: str | None = param(None, "Only this agent's recalls (default: every agent's).", cli=None, mcp=False)
    session: str | None = param(None, "Only this session's recalls.", max_length=MAX_SESSION_CHARS, cli=None, mcp=False)
    limit: int | None = param(
        None, f"How many of the latest recalls (default {RECALL_LOG_LIMIT}).", ge=1, le=RECALL_LOG_MAX, mcp=False
    )
    skipped: bool = param(False, "Also the prompts recall put nothing before, with why.", mcp=False)


class Get(Request):
    method, lane, idempotent = "get", "bulk", True
    summary = "Lines of a memory file, redacted as the index holds them."
    returns = "{path, from, lines, total_lines, text, truncated, hash}"
    path: str = param(
        help="A path inside the agent's memory, as citations give it.", cli=None, max_length=MAX_PATH_CHARS, path=True
    )
    from_: int | None = param(None, "First line, 1-based (default 1).", ge=1, wire="from", cli=None)
    lines: int | None = param(None, "How many lines (default: up to 5,000).", ge=1, cli=None)
    agent: str | None = param(None, "Agent whose memory holds the path (a result names it).", cli=None)


class Write(Request):
    method, lane = "write", "jobs"
    summary = (
        "Append an entry to a Markdown note, fsync it and index it; an entry memory already holds is not written "
        "again (`duplicate_of` names it)."
    )
    returns = "{path, start_line, end_line, citation, indexed, index_error, duplicate_of, superseded}"
    text: str = param(help="What to remember: one self-contained statement.", cli=None, text=True)
    path: str | None = param(
        None, "Note under memory/ (default: memory/YYYY-MM-DD.md).", max_length=MAX_PATH_CHARS, path=True
    )
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)
    type: str | None = param(None, "Memory type of the entry.", choices=MEMORY_TYPES)
    importance: float | None = param(None, "0 (trivia) .. 1 (critical).", ge=0, le=1)
    supersedes: str | None = param(
        None,
        "The citation (path#L3-L5) of an older statement this one replaces: it is struck through, dated and linked "
        "to the new entry.",
        max_length=MAX_PATH_CHARS,
        path=True,
    )
    force: bool = param(False, "Write it even when memory already holds the same text.")


CITATION_HELP = "A citation (path#L3-L5, as search gives it), or a note's path for the whole note."
EXPECT_HELP = "What you saw there: the lines' text, or their hash (sha256:..., from get)."


class Forget(Request):
    method, lane = "forget", "jobs"
    summary = (
        "Forget lines of a note, a whole note, or what a query finds (the first call shows the matches and a "
        "`confirm` token; the second, with it, forgets them). A transcript is never edited: its lines are left out "
        "of the index by a record in the data dir. Undo with `undo`."
    )
    returns = (
        "{forgotten, path, lines, change, indexed, index_error} | {forgotten: null, matches, confirm} | "
        "{forgotten: null, conflict, current}"
    )
    citation: str | None = param(None, CITATION_HELP, max_length=MAX_PATH_CHARS, path=True, cli=None)
    query: str | None = param(None, "Forget what this finds, once confirmed.", max_length=MAX_PATH_CHARS)
    confirm: str | None = param(None, "The token the query's first call gave: forget exactly those matches.")
    expect: str | None = param(None, EXPECT_HELP, cli=("--expect",))
    purge: bool = param(False, "Keep nothing of the forgotten text in the data dir (it cannot be undone).")
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)


class Update(Request):
    method, lane = "update", "jobs"
    summary = (
        "Replace exactly the cited lines of a note with new text. Nothing is written when they changed since the "
        "caller saw them; the answer then carries their current text."
    )
    returns = "{updated, citation, path, change, indexed, index_error} | {updated: null, conflict, current}"
    citation: str = param(help="The lines to replace: path#L3-L5.", max_length=MAX_PATH_CHARS, path=True, cli=None)
    text: str = param(help="Their new text (empty: remove them).", cli=("--text",), text=True)
    expect: str = param(help=EXPECT_HELP, cli=("--expect",))
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)


class Undo(Request):
    method, lane = "undo", "jobs"
    summary = (
        "Undo the last forget, update or supersede (or the last `count`), newest first; or, with `change`, that one "
        "alone (past a newer change that cannot be undone, such as a purge)."
    )
    returns = "{undone: [change ids], results: [{undone, kind, path, indexed, index_error}]}"
    count: int = param(1, "How many changes to undo.", ge=1, le=100, cli=("-n", "--count"))
    change: int | None = param(None, "Undo this change alone (its id, as `changes` lists it).", ge=1)
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)


class Notes(Request):
    method, lane, idempotent = "notes", "bulk", True
    summary = (
        "The files memory holds, newest first, each with its date; how many each day; a folder's own files and "
        "subfolders; one file's chunks."
    )
    returns = (
        "{agent, notes: [{path, source, date, modified, size}], total, days: {date: files}, folders: {name: files}, "
        "files: [...], files_total, chunks: [{start_line, end_line, heading}]}"
    )
    path: str | None = param(
        None, "Only this file, or the files in this folder.", max_length=MAX_PATH_CHARS, path=True, cli=("--path",)
    )
    day: str | None = param(None, "Only the files of this day (YYYY-MM-DD).", max_length=10, cli=("--day",))
    limit: int = param(NOTES_LIMIT, "How many of the newest.", ge=1, le=NOTES_MAX, cli=("-n", "--limit"))
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)


class Changes(Request):
    method, lane, idempotent = "changes", "control", True
    summary = "The latest changes memoryd made to the notes (forget, update, supersede), newest first."
    returns = "{changes: [{id, kind, path, time, citation, new_citation, lines, purged, undone}]}"
    limit: int = param(20, "How many.", ge=1, le=500, cli=("-n", "--limit"))
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)


class Status(Request):
    method, lane, idempotent = "status", "control", True
    summary = "Daemon and index state per agent."
    returns = "{daemon: {...}, agents: [...]}"
    agent: str | None = param(None, "Only this agent (default: every agent).", cli=None, mcp=False)


class Sync(Request):
    method, lane = "sync", "jobs"
    summary = "Bring the index up to date now, and wait for it."
    returns = "{agent, done, report, progress, error}"
    force: bool = param(False, "Re-read every file, not only changed ones.")
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)
    timeout: float | None = param(
        None, f"Seconds to wait (default {DEFAULT_WAIT_SECONDS:.0f}).", ge=0, le=MAX_WAIT_SECONDS, cli=None
    )
    vectors: bool = param(True, "Also wait for the vectors the embedding lane adds.", cli=None)
    client: str | None = param(None, CLIENT_HELP, cli=None, mcp=False, max_length=MAX_CLIENT_CHARS, known=CLIENTS)


class Reindex(Request):
    method, lane = "reindex", "jobs"
    summary = "Rebuild the index atomically; searches keep being answered meanwhile."
    returns = "{agent, started, done, progress}"
    wait: bool = param(False, "Answer when it is over (or after `timeout`).", cli=None)
    agent: str | None = param(None, AGENT_HELP, cli=None, mcp=False)
    timeout: float | None = param(
        None, f"Seconds to wait (default {DEFAULT_WAIT_SECONDS:.0f}).", ge=0, le=MAX_WAIT_SECONDS, cli=None
    )


class Agents(Request):
    method, lane, idempotent = "agents", "control", True
    summary = "The daemon's agents."
    returns = "[{id, workspace, sources, default}]"


METHODS: dict[str, type[Request]] = {
    m.method: m
    for m in (
        Ping,
        Search,
        Recall,
        RecallLog,
        Get,
        Write,
        Forget,
        Update,
        Undo,
        Notes,
        Changes,
        Status,
        Sync,
        Reindex,
        Agents,
    )
}
IDEMPOTENT = frozenset(name for name, m in METHODS.items() if m.idempotent)
