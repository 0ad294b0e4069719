"""What memctl prints: a failure as one line and its exit code (or as JSON), and search results."""

from __future__ import annotations

from memoryd_client.stub import ClientError, DaemonNotRunning, RemoteError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from memoryd_client.protocol.results import SearchResults


def failure(exc: ClientError) -> tuple[str, int]:
    """The line for stderr, and the exit code: 3 when no daemon runs, 1 for any other failure."""
    message = str(exc) if not isinstance(exc, RemoteError) else f"{exc.message} ({exc.code})"
    if isinstance(exc, RemoteError) and exc.code == "too_many_connections":
        message = f"memoryd is running but busy: {message}; try again"
    return f"memctl: {message}", 3 if isinstance(exc, DaemonNotRunning) else 1


def failure_json(exc: ClientError) -> str:
    """The error as JSON, for `--json` callers: {"error": {"code", "message"}}."""
    import json

    code = exc.code if isinstance(exc, RemoteError) else "not_running" if isinstance(exc, DaemonNotRunning) else "error"
    message = exc.message if isinstance(exc, RemoteError) else str(exc)
    return json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def hit_citation(citation: str, extra: dict[str, Any] | None) -> str:
    """A result's citation, naming its agent when the search went over several (`memctl get -a AGENT` reads it)."""
    agent = (extra or {}).get("agent")
    return f"{citation}  (agent {agent})" if agent else citation


def dated(date: str | None, superseded: str | None) -> str:
    """A hit's date after its citation, and that its note marks it superseded."""
    if superseded:
        return f"  ({date}; superseded {superseded})" if date else f"  (superseded {superseded})"
    return f"  ({date})" if date else ""


def search_text(found: SearchResults) -> str:
    """Score, citation and the first lines of the snippet per hit, then how the search ran."""
    lines = []
    for hit in found.results:
        snippet = "\n".join("    " + ln for ln in hit.snippet.strip().splitlines()[:6])
        lines.append(
            f"{hit.score:.3f}  {hit_citation(hit.citation, hit.extra)}{dated(hit.date, hit.superseded)}\n{snippet}"
        )
        explain = (hit.extra or {}).get("explain")
        if explain:
            lines[-1] += "\n    " + explain_line(explain)
    footer = f"({plural(len(found.results), 'result')}, {found.mode}, {found.took_ms:.1f} ms)"
    if found.raw.get("partial"):
        footer += (
            f"  note: still embedding ({found.raw.get('embedded')} chunks have vectors; the rest match by keyword)"
        )
    if found.raw.get("restored_query"):
        footer += f"  searched by meaning as: {found.raw['restored_query']}"
    if found.raw.get("degraded"):
        footer += f"  note: {found.raw['degraded']}"
    return "\n\n".join([*lines, footer]) if lines else f"no results {footer}"


def explain_line(e: dict[str, Any]) -> str:
    def num(value: Any) -> str:
        return "-" if value is None else f"{value:.3f}"

    parts = [
        f"vector {num(e.get('vector_score'))}",
        f"text {num(e.get('text_score'))}",
        f"fused {num(e.get('fused'))}",
        f"decay {num(e.get('decay'))}",
        f"importance {num(e.get('importance'))}",
        f"access {e.get('access_hits', 0)}x{num(e.get('access_factor'))}",
    ]
    if e.get("mmr_step") is not None:
        parts.append(f"mmr #{e['mmr_step']} (penalty {num(e.get('mmr_penalty'))})")
    return "[" + ", ".join(parts) + f" -> {num(e.get('final'))}]"


def write_text(done: Mapping[str, Any], wrote: str = "wrote") -> str:
    """A write's answer in a line: where it went, or the entry that already says it; the statement it marked
    superseded; and a note saved but not yet searchable."""
    if done.get("duplicate_of"):
        text = f"already in memory as {done['duplicate_of']}; nothing written"
    else:
        text = f"{wrote} {done['citation']}"
    if done.get("superseded"):
        text += f"; marked {done['superseded']} superseded"
    if done.get("indexed") is False:
        text += f" (saved, not searchable yet: {done.get('index_error') or 'not indexed'})"
    return text


def forget_text(done: dict[str, Any], again: str = "call again with confirm={token}") -> str:
    """A forget's answer as a tool reads it: what went, the matches to confirm (`again`: how, with the token), or why
    nothing changed."""
    if done.get("conflict") and done.get("current"):
        current = done["current"]
        return f"Nothing forgotten: {done['conflict']}. Current text of {current['citation']}:\n{current['text']}"
    if done.get("matches") is not None:
        if not done["matches"]:
            return "Nothing matched; nothing forgotten."
        shown = "\n".join(f"- {m['citation']}: {m['snippet'].strip()[:200]}" for m in done["matches"])
        how = again.format(token=done["confirm"])
        return f"{done.get('conflict', '')}\nThese would be forgotten:\n{shown}\nTo forget them, {how}"
    gone = done["forgotten"]
    if not isinstance(gone, list):
        late = done.get("indexed") is False  # the note is changed; the index, not yet: search may still show it
        return f"Forgotten: {gone}" + (f" (not out of the index yet: {done.get('index_error')})" if late else "")
    refused = [r["conflict"] for r in done.get("results", []) if r.get("conflict")]  # changed in between
    text = f"Forgotten: {', '.join(g for g in gone if g) or 'nothing'}"
    return text + (f"\nNot forgotten ({len(refused)}): " + "; ".join(refused) if refused else "")
