"""What memctl's commands do, each a function of the parsed command line (memoryd_client.command_line.Parsed) that
returns the exit code: 0, 3 when no daemon runs, 1 for any other failure (a failure is one line on stderr, or
`{"error": {code, message}}` on stdout with --json). Every call goes through the stub, on one connection per run.
memctl never opens an index itself; its commands are declared in memoryd_client.memctl."""

from __future__ import annotations

import sys
import time

from memoryd_client.command_line import Exit, UsageError
from memoryd_client.stub import ClientError, MemoryClient, RPCTimeout

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a fifth of a search's start-up
    from collections.abc import Callable
    from typing import Any, TypeVar

    from memoryd_client.command_line import Parsed

    T = TypeVar("T")


def _client(args: Parsed, deadline: float | None = None) -> MemoryClient:
    return MemoryClient(args["socket"], timeout=args["timeout"], deadline=deadline)


def fail(args: Parsed, exc: ClientError) -> Exit:
    """Say what went wrong (as JSON with --json); the Exit to raise, with its code."""
    from memoryd_client.render import failure, failure_json  # a recall that answers needs neither

    message, code = failure(exc)
    if args["json"]:
        print(failure_json(exc))
    else:
        print(message, file=sys.stderr)
    return Exit(code)


def ask(args: Parsed, call: Callable[[MemoryClient], T], deadline: float | None = None) -> T:
    """One call to the daemon on a connection of its own; a failure is said and ends memctl (Exit)."""
    try:
        with _client(args, deadline) as client:
            return call(client)
    except ClientError as exc:
        raise fail(args, exc) from None


def emit(args: Parsed, data: Any, human: str) -> int:
    if args["json"]:
        import json

        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(human)
    return 0


def _words(words: list[str]) -> str:
    """The words of a query or text, or stdin when it is '-'."""
    return sys.stdin.read() if words == ["-"] else " ".join(words)


def search(args: Parsed) -> int:
    text = _words(args["query"])
    found = ask(args, lambda client: client.search(text, agent=args["agent"], **args.schema_values("search")))
    from memoryd_client.render import search_text

    return emit(args, found.raw, search_text(found))


def recall(args: Parsed) -> int:
    """`--timeout` bounds all of it: reading a prompt from stdin, connecting and the answer."""
    from memoryd_client.protocol.wire import MAX_MESSAGE_BYTES

    if args["log"]:
        return recall_log(args)
    if not args["prompt"]:
        raise UsageError("Missing argument 'PROMPT...'.", args.path)
    seconds = args["timeout"]
    deadline = time.monotonic() + seconds
    prompt = " ".join(args["prompt"])
    if prompt == "-":
        from memoryd_client.command_line import read_stdin

        try:
            prompt = read_stdin(deadline, MAX_MESSAGE_BYTES).decode("utf-8", "replace")
        except TimeoutError:
            raise fail(args, RPCTimeout(f"the prompt on stdin did not end within {seconds} s")) from None
    options = args.schema_values("recall")
    answer = ask(args, lambda client: client.recall(prompt, agent=args["agent"], **options), deadline)
    if args["json"] or answer["block"]:
        emit(args, answer, answer["block"])
    return 0


FORGET_HINT = "to forget a memory: memctl forget <citation>"


def recall_log(args: Parsed) -> int:
    """`memctl recall --log`: each logged recall (time, session, client, the prompt's start), then the memories it
    gave with their dates, and the command that forgets one."""
    options = {"agent": args["agent"], "session": args["session"], **args.schema_values("recall_log")}
    logged = ask(args, lambda client: client.request("recall_log", **options))
    entries = logged["entries"]
    if args["json"] or not entries:
        return emit(args, logged, "no recalls logged")
    lines = []
    for entry in entries:  # the daemon left no control characters in them
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry["time"]))
        where = "  ".join(f"{k} {entry[k]}" for k in ("agent", "session", "client") if entry.get(k))
        lines.append(f"{stamp}  {where}\n  > {entry['prompt']}")
        if entry.get("skipped"):
            lines.append(f"    nothing: {entry['skipped']}")
        for memory in entry.get("memories") or []:
            dated = f"  ({memory['date']})" if memory.get("date") else ""
            lines.append(f"    {memory['citation']}{dated}  score {memory['score']:.2f}")
    lines.append(FORGET_HINT)
    return emit(args, logged, "\n".join(lines))


def parse_location(spec: str) -> tuple[str, int | None, int | None]:
    """PATH, PATH:FROM or PATH:FROM-TO, or a citation PATH#LFROM-LTO as search prints it: (path, first line, line
    count). Only the end of the spec is read as a line range, so a path holding "-L" or ":" keeps its name.
    ValueError for a range that ends before it starts."""
    import re

    match = re.match(
        r"^(?P<path>.+?)(?:#L(?P<cite_from>\d+)(?:-L(?P<cite_to>\d+))?|:(?P<from>\d+)(?:-(?P<to>\d+))?)$", spec
    )
    if match is None:
        return spec, None, None
    start = match.group("cite_from") or match.group("from")
    end = match.group("cite_to") or match.group("to")
    first = int(start)
    if match.group("cite_from") and not end:
        end = start  # a citation of one line
    count = int(end) - first + 1 if end else None
    if count is not None and count < 1:
        raise ValueError(f"range {start}-{end} ends before it starts")
    return match.group("path"), first, count


def get(args: Parsed) -> int:
    try:
        path, first, count = parse_location(args["location"])
    except ValueError as exc:
        raise UsageError(f"Invalid value for 'LOCATION': {exc}", args.path) from None
    got = ask(args, lambda client: client.get(path, first, count, agent=args["agent"]))
    return emit(args, got, got["text"])


def write(args: Parsed) -> int:
    body = sys.stdin.read() if args["text"] == "-" else args["text"]
    done = ask(args, lambda client: client.write(body, agent=args["agent"], **args.schema_values("write")))
    from memoryd_client.render import write_text

    return emit(args, done, write_text(done))


def status_line(agent: dict[str, Any]) -> str:
    """One agent's state, as `memctl status` prints it."""
    from memoryd_client.render import plural

    vec = (
        f"{agent.get('provider')}/{agent.get('model')} ({agent.get('dims')}d)"
        if agent.get("vector_available")
        else f"keyword-only: {agent.get('fallback_reason')}"
    )
    if agent.get("index_error"):
        if agent.get("store_kind") == "postgresql":  # the server is away or refuses: nothing is being rebuilt
            return f"{agent['agent']}: store unavailable: {agent['index_error']}" + _shared_store(agent)
        return f"{agent['agent']}: index unreadable, being rebuilt: {agent['index_error']}"
    counts = (
        f"{plural(agent['files'], 'file')}, {plural(agent['chunks'], 'chunk')}, {agent['embedded_chunks']} embedded"
    )
    lines = [
        f"{agent['agent']}: {counts}",
        f"  workspace {agent['workspace']}",
        f"  vectors   {vec}",
        f"  fts       {'yes' if agent.get('fts_available') else 'no'}   watcher {agent.get('watcher')}",
    ]
    for key in ("sync_progress", "reindex"):
        job = agent.get(key)
        if job and job.get("state") == "running":
            eta = f", eta {job['eta_s']}s" if job.get("eta_s") is not None else ""
            lines.append(f"  {job['kind']}: {job['done']}/{job['total']}{eta}")
    lane = agent.get("embedding") or {}
    if lane.get("waiting"):
        why = (
            f" (paused {lane['paused']})"
            if lane.get("paused")
            else f" (failed: {lane['error']})"
            if lane.get("error")
            else ""
        )
        lines.append(f"  embedding: {lane['waiting']} chunks wait for vectors; keyword search has them{why}")
    missing = ((agent.get("last_sync_report") or {}).get("missing_roots")) or []
    if missing:
        lines.append(f"  missing: {', '.join(missing)} (its notes stay indexed until it returns)")
    languages = agent.get("languages") or {}
    if len(languages) > 1:  # one language needs no mention; several are ranked on one scale
        held = ", ".join(f"{lang} {n}" for lang, n in sorted(languages.items(), key=lambda kv: -kv[1]))
        lines.append(f"  languages: {held} chunks")
    if agent.get("needs_reindex"):
        lines.append(f"  needs reindex: {agent['needs_reindex']}")
    if agent.get("store_kind") == "postgresql":
        lines.append(_shared_store(agent).lstrip("\n"))
    if agent.get("sync_error"):
        lines.append(f"  last sync failed: {agent['sync_error']}")
    return "\n".join(lines)


def _shared_store(agent: dict[str, Any]) -> str:
    """A PostgreSQL agent's role, who writes its namespace, the primary's health and the replica's state."""
    health = agent.get("store_health") or {}
    writer = agent.get("writer") or {}
    who = (
        f"pid {writer.get('pid')} ({writer.get('role')}{', this daemon' if writer.get('this_daemon') else ''})"
        if writer
        else "nobody"
    )
    ok = "ok" if health.get("ok", True) else f"failing: {health.get('error')}"
    if health.get("ok", True) and ((agent.get("sessions") or {}).get("primary") or {}).get("tls"):
        ok += ", TLS"
    lines = [f"\n  store     namespace {agent.get('namespace')}, {agent.get('role')}; written by {who}; primary {ok}"]
    replica, lag = agent.get("replica"), agent.get("replica_lag_s") or {}
    if replica:
        behind = f", {lag.get('seconds')} s behind" if lag.get("seconds") else ""
        lines.append(f"  replica   {replica.get('state')}{behind}; searches read the {replica.get('reads_from')}")
    return "\n".join(lines)


def status(args: Parsed) -> int:
    state = ask(args, lambda client: client.status(args["agent"]))
    daemon = state["daemon"]
    head = f"memoryd {daemon['version']} pid {daemon['pid']} up {daemon['uptime_s']}s on {daemon['socket']}"
    if daemon.get("reload_error"):
        head += f"\nconfig reload failed, the previous config still runs: {daemon['reload_error']}"
    return emit(args, state, "\n".join([head, *(status_line(a) for a in state["agents"])]))


def sync(args: Parsed) -> int:
    done = ask(args, lambda client: client.sync(args["agent"], force=args["force"]))
    if not done.get("done", True):
        job = done.get("progress") or {}
        print(
            f"memctl: still syncing after the wait ({job.get('done', 0)}/{job.get('total', 0)} files)", file=sys.stderr
        )
        return 1
    report = done.get("report") or {}
    return emit(
        args,
        done,
        f"{done['agent']}: {report.get('files_indexed', 0)} indexed, "
        f"{report.get('files_deleted', 0)} deleted, {report.get('files_unchanged', 0)} unchanged "
        f"in {report.get('seconds', 0):.2f}s" + (f"; error: {done['error']}" if done.get("error") else ""),
    )


def reindex(args: Parsed) -> int:
    try:
        with _client(args) as client:
            started = client.reindex(args["agent"])
            if args["no_wait"]:
                return emit(args, started, f"reindex {'started' if started['started'] else 'already running'}")
            job = _follow(client, started["agent"], sys.stderr.isatty() and not args["json"])
    except ClientError as exc:
        raise fail(args, exc) from None
    if job.get("state") != "done":
        print(f"memctl: reindex {job.get('state')}: {job.get('error')}", file=sys.stderr)
        return 1
    return emit(args, job, f"reindexed {started['agent']}: {job['total']} files in {job['elapsed_s']}s")


def _follow(client: MemoryClient, agent: str, show: bool) -> dict[str, Any]:
    """Poll status until the reindex ends, drawing a progress bar on a terminal."""
    started = time.monotonic()
    try:
        while True:
            job: dict[str, Any] = client.status(agent)["agents"][0].get("reindex") or {}
            if show and job.get("total"):
                _progress(job["done"], job["total"], time.monotonic() - started)
            if job.get("state") != "running":
                return job
            time.sleep(0.3)
    finally:
        if show:
            sys.stderr.write("\n")


def _progress(done: int, total: int, seconds: float) -> None:
    width = 36
    filled = width * done // max(total, 1)
    eta = f"  eta {seconds / done * (total - done):.0f}s" if 0 < done < total else ""
    sys.stderr.write(f"\rreindexing  [{'#' * filled}{'-' * (width - filled)}]  {done}/{total}{eta}\x1b[K")
    sys.stderr.flush()


def agents(args: Parsed) -> int:
    listed = ask(args, lambda client: client.agents())
    lines = (f"{'*' if a['default'] else ' '} {a['id']:12s} {a['workspace']}" for a in listed)
    return emit(args, listed, "\n".join(lines))


def notes(args: Parsed) -> int:
    options = {"agent": args["agent"], **args.schema_values("notes")}
    listed = ask(args, lambda client: client.request("notes", **options))
    lines = [f"{n['date']}  {n['size']:>9,}  {n['path']}" for n in listed["notes"]]
    if len(listed["notes"]) < listed["total"]:
        lines.append(f"(the newest {len(listed['notes'])} of {listed['total']}: --limit N for more)")
    for chunk in listed.get("chunks") or []:
        lines.append(f"  chunk L{chunk['start_line']}-L{chunk['end_line']}  {chunk['heading']}".rstrip())
    return emit(args, listed, "\n".join(lines))


UI_URL = r"http://127\.0\.0\.1:\d{1,5}/"
UI_TOKEN = r"[A-Za-z0-9_-]{43}"


def ui(args: Parsed) -> int:
    """Open the page with this start's token. The browser is given a file only this user can read that leads to
    the page with the token in the address's fragment, never the token itself: a command line is readable by every
    local user (/proc/PID/cmdline) for as long as the browser runs."""
    import os
    import re
    import stat

    socket_path, info = ask(args, lambda client: (client.socket_path, client.ping()))
    if os.stat(socket_path).st_uid != os.getuid():
        print(f"Error: {socket_path} belongs to another user; not asking it for a token", file=sys.stderr)
        return 1
    page = info.get("ui") or {}
    if not page.get("url"):
        why = page.get("error") or "a daemon from before the web page"
        print(f"Error: the daemon serves no web page: {why}", file=sys.stderr)
        return 1
    url, path = str(page["url"]), str(page.get("token_file") or "")
    if not re.fullmatch(UI_URL, url) or os.path.basename(path) != "ui.token":
        print(f"Error: the daemon's answer is not a memoryd page ({url}, {path})", file=sys.stderr)
        return 1
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, encoding="utf-8") as fh:
            found = os.fstat(fh.fileno())
            token = fh.read(100).strip()
    except OSError as exc:
        print(f"Error: cannot read the page's token {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    private = stat.S_ISREG(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o077
    if not private or not re.fullmatch(UI_TOKEN, token):
        print(f"Error: {path} is not a private token file of yours; restart the daemon", file=sys.stderr)
        return 1
    address = f"{url}#token={token}"
    if args["print_url"] or args["json"]:
        return emit(args, {"url": address}, address)
    from memoryd_client.integrations.files import IntegrationError, replace_file

    opener = os.path.join(os.path.dirname(path), "ui-open.html")
    try:
        replace_file(opener, f'<!doctype html><meta http-equiv="refresh" content="0;url={address}">\n'.encode(), 0o600)
    except IntegrationError as exc:
        print(f"Error: {exc}; or: memctl ui --print", file=sys.stderr)
        return 1
    import webbrowser
    from pathlib import Path

    if not webbrowser.open(Path(opener).as_uri()):  # quoted: macOS's data dir has a space
        print(f"Open {url} with the token in {path}, or: memctl ui --print", file=sys.stderr)
        return 1
    return 0


def mcp(args: Parsed) -> int:
    try:
        from memoryd_client.mcp_bridge import serve
    except ImportError as exc:
        print(f"Error: the MCP SDK is not installed ({exc}); pip install 'memoryd[mcp]'", file=sys.stderr)
        return 1
    serve(args["socket"], args["agent"], args["budget"], args["autostart"], args["http_port"])
    return 0


def prompt(args: Parsed) -> int:
    from memoryd_client.prompt import RECALL_PROMPT

    sys.stdout.write(RECALL_PROMPT)
    return 0
