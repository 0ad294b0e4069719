"""memctl's commands (click). memctl never opens an index itself; its entry point is memoryd_client.memctl."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from memoryd_client.protocol.schema import METHODS, Param
from memoryd_client.render import failure, failure_json, plural, search_text
from memoryd_client.stub import ClientError, MemoryClient

T = TypeVar("T")
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Ctx:
    def __init__(self, socket: str | None, agent: str | None, as_json: bool, timeout: float) -> None:
        self.socket, self.agent, self.as_json, self.timeout = socket, agent, as_json, timeout

    def client(self) -> MemoryClient:
        return MemoryClient(self.socket, timeout=self.timeout)


def _common(func):  # type: ignore[no-untyped-def]
    """--agent, --socket and --json on every command (also accepted before the command name)."""
    func = click.option("--json", "as_json", is_flag=True, default=None, help="Print the raw JSON result.")(func)
    func = click.option("--socket", default=None, envvar="MEMORYD_SOCKET", help="Daemon socket path.")(func)
    func = click.option("--agent", "-a", default=None, help="Agent id (default: the daemon's default agent).")(func)
    return func


def _ctx(obj: Ctx, agent: str | None, socket: str | None, as_json: bool | None) -> Ctx:
    return Ctx(socket or obj.socket, agent or obj.agent, obj.as_json if as_json is None else as_json, obj.timeout)


def _emit(ctx: Ctx, data: Any, human: str) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2) if ctx.as_json else human)


def _fail(exc: ClientError, ctx: Ctx | None = None) -> NoReturn:
    message, code = failure(exc)
    if ctx is not None and ctx.as_json:
        click.echo(failure_json(exc))
    else:
        click.echo(message, err=True)
    sys.exit(code)


def _ask(ctx: Ctx, call: Callable[[MemoryClient], T]) -> T:
    """One call to the daemon on a connection of its own; a client error is printed (as JSON with --json) and
    ends memctl with its exit code."""
    try:
        with ctx.client() as client:
            return call(client)
    except ClientError as exc:
        _fail(exc, ctx)


@click.group(context_settings=CONTEXT)
@click.option("--socket", default=None, envvar="MEMORYD_SOCKET", help="Daemon socket path.")
@click.option("--agent", "-a", default=None, help="Agent id.")
@click.option("--json", "as_json", is_flag=True, help="Print raw JSON.")
@click.option(
    "--timeout",
    type=click.FloatRange(0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds to wait for an answer.",
)
@click.pass_context
def main(ctx: click.Context, socket: str | None, agent: str | None, as_json: bool, timeout: float) -> None:
    """Search, read and write an agent's memory through the memoryd daemon."""
    ctx.obj = Ctx(socket, agent, as_json, timeout)


def _click_type(spec: Param) -> Any:
    if spec.choices:
        return click.Choice(spec.choices)
    if spec.scalar == "int":
        return click.IntRange(spec.ge, spec.le)
    if spec.scalar == "float" and "str" not in spec.types:
        return click.FloatRange(spec.ge, spec.le)
    return str


def schema_options(method: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """memctl's options for a method's parameters, with their help, as memoryd_client.protocol.schema declares them."""

    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for spec in reversed(METHODS[method].params):
            if spec.cli is None:
                continue
            flags = spec.cli or (f"--{spec.wire.replace('_', '-')}",)
            if spec.scalar == "bool":
                if spec.default is None:
                    name = flags[0].removeprefix("--")
                    flags = (f"--{name}/--no-{name}",)
                flag = {} if spec.default is None else {"is_flag": True}
                option = click.option(*flags, spec.name, default=spec.default, help=spec.help, **flag)
            else:
                option = click.option(
                    *flags, spec.name, type=_click_type(spec), multiple=spec.many, default=None, help=spec.help
                )
            func = option(func)
        return func

    return apply


def _given(options: dict[str, Any]) -> dict[str, Any]:
    """Click's values as the client takes them: an option repeated is a list, one not given is absent."""
    return {k: list(v) or None if isinstance(v, tuple) else v for k, v in options.items()}


@main.command()
@click.argument("query", nargs=-1, required=True)
@schema_options("search")
@_common
@click.pass_obj
def search(
    obj: Ctx, query: tuple[str, ...], agent: str | None, socket: str | None, as_json: bool | None, **options: Any
) -> None:
    """Search memory: score, citation and snippet per hit. A QUERY of '-' is read from stdin."""
    ctx = _ctx(obj, agent, socket, as_json)
    text = sys.stdin.read() if query == ("-",) else " ".join(query)
    found = _ask(ctx, lambda client: client.search(text, agent=ctx.agent, **_given(options)))
    _emit(ctx, found.raw, search_text(found))


@main.command()
@click.argument("prompt", nargs=-1, required=True)
@schema_options("recall")
@click.option(
    "--timeout",
    "seconds",
    type=click.FloatRange(0, min_open=True),
    default=5.0,
    show_default=True,
    help="Seconds to wait for an answer.",
)
@_common
@click.pass_obj
def recall(
    obj: Ctx,
    prompt: tuple[str, ...],
    seconds: float,
    agent: str | None,
    socket: str | None,
    as_json: bool | None,
    **options: Any,
) -> None:
    """The memories worth putting before PROMPT ('-': read from stdin), as one block, or nothing."""
    ctx = _ctx(obj, agent, socket, as_json)
    ctx.timeout = seconds
    text = sys.stdin.read() if prompt == ("-",) else " ".join(prompt)
    answer = _ask(ctx, lambda client: client.recall(text, agent=ctx.agent, **_given(options)))
    if ctx.as_json or answer["block"]:
        _emit(ctx, answer, answer["block"])


_LOCATION = re.compile(
    r"^(?P<path>.+?)(?:#L(?P<cite_from>\d+)(?:-L(?P<cite_to>\d+))?|:(?P<from>\d+)(?:-(?P<to>\d+))?)$"
)


def _parse_location(spec: str) -> tuple[str, int | None, int | None]:
    """PATH, PATH:FROM or PATH:FROM-TO, or a citation PATH#LFROM-LTO as search prints it. Only the end of the
    spec is read as a line range, so a path holding "-L" or ":" keeps its name."""
    match = _LOCATION.match(spec)
    if match is None:
        return spec, None, None
    start = match.group("cite_from") or match.group("from")
    end = match.group("cite_to") or match.group("to")
    first = int(start)
    if match.group("cite_from") and not end:
        end = start  # a citation of one line
    count = int(end) - first + 1 if end else None
    if count is not None and count < 1:
        raise click.BadParameter(f"range {start}-{end} ends before it starts")
    return match.group("path"), first, count


@main.command()
@click.argument("location")
@_common
@click.pass_obj
def get(obj: Ctx, location: str, agent: str | None, socket: str | None, as_json: bool | None) -> None:
    """Print lines of a memory file: PATH, PATH:FROM or PATH:FROM-TO."""
    ctx = _ctx(obj, agent, socket, as_json)
    path, first, count = _parse_location(location)
    got = _ask(ctx, lambda client: client.get(path, first, count, agent=ctx.agent))
    _emit(ctx, got, got["text"])


@main.command()
@click.argument("text")
@schema_options("write")
@_common
@click.pass_obj
def write(obj: Ctx, text: str, agent: str | None, socket: str | None, as_json: bool | None, **options: Any) -> None:
    """Append TEXT (or '-' for stdin) to a Markdown note and index it."""
    ctx = _ctx(obj, agent, socket, as_json)
    body = sys.stdin.read() if text == "-" else text
    done = _ask(ctx, lambda client: client.write(body, agent=ctx.agent, **_given(options)))
    _emit(ctx, done, f"wrote {done['citation']}")


def _status_line(agent: dict[str, Any]) -> str:
    vec = (
        f"{agent.get('provider')}/{agent.get('model')} ({agent.get('dims')}d)"
        if agent.get("vector_available")
        else f"keyword-only: {agent.get('fallback_reason')}"
    )
    if agent.get("index_error"):
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
    if agent.get("sync_error"):
        lines.append(f"  last sync failed: {agent['sync_error']}")
    return "\n".join(lines)


@main.command()
@_common
@click.pass_obj
def status(obj: Ctx, agent: str | None, socket: str | None, as_json: bool | None) -> None:
    """Daemon and index state per agent."""
    ctx = _ctx(obj, agent, socket, as_json)
    state = _ask(ctx, lambda client: client.status(ctx.agent))
    daemon = state["daemon"]
    head = f"memoryd {daemon['version']} pid {daemon['pid']} up {daemon['uptime_s']}s on {daemon['socket']}"
    if daemon.get("reload_error"):
        head += f"\nconfig reload failed, the previous config still runs: {daemon['reload_error']}"
    _emit(ctx, state, "\n".join([head, *(_status_line(a) for a in state["agents"])]))


@main.command()
@schema_options("sync")
@_common
@click.pass_obj
def sync(obj: Ctx, force: bool, agent: str | None, socket: str | None, as_json: bool | None) -> None:
    """Bring the index up to date now."""
    ctx = _ctx(obj, agent, socket, as_json)
    done = _ask(ctx, lambda client: client.sync(ctx.agent, force=force))
    if not done.get("done", True):
        job = done.get("progress") or {}
        click.echo(f"memctl: still syncing after the wait ({job.get('done', 0)}/{job.get('total', 0)} files)", err=True)
        sys.exit(1)
    report = done.get("report") or {}
    _emit(
        ctx,
        done,
        f"{done['agent']}: {report.get('files_indexed', 0)} indexed, "
        f"{report.get('files_deleted', 0)} deleted, {report.get('files_unchanged', 0)} unchanged "
        f"in {report.get('seconds', 0):.2f}s" + (f"; error: {done['error']}" if done.get("error") else ""),
    )


@main.command()
@click.option("--no-wait", is_flag=True, help="Start it and return.")
@_common
@click.pass_obj
def reindex(obj: Ctx, no_wait: bool, agent: str | None, socket: str | None, as_json: bool | None) -> None:
    """Rebuild the index atomically (searches keep working meanwhile), with a progress bar."""
    ctx = _ctx(obj, agent, socket, as_json)
    try:
        with ctx.client() as client:
            started = client.reindex(ctx.agent)
            if no_wait:
                _emit(ctx, started, f"reindex {'started' if started['started'] else 'already running'}")
                return
            job = _follow(client, started["agent"], sys.stderr.isatty() and not ctx.as_json)
    except ClientError as exc:
        _fail(exc, ctx)
    if job.get("state") != "done":
        click.echo(f"memctl: reindex {job.get('state')}: {job.get('error')}", err=True)
        sys.exit(1)
    _emit(ctx, job, f"reindexed {started['agent']}: {job['total']} files in {job['elapsed_s']}s")


def _follow(client: MemoryClient, agent: str, show: bool) -> dict[str, Any]:
    """Poll status until the reindex ends, drawing a progress bar on a terminal."""
    bar = click.progressbar(length=1, label="reindexing", file=sys.stderr, show_eta=True) if show else None
    try:
        while True:
            job = client.status(agent)["agents"][0].get("reindex") or {}
            if bar is not None and job.get("total"):
                bar.length = job["total"]
                bar.update(job["done"] - bar.pos)
            if job.get("state") != "running":
                return job
            time.sleep(0.3)
    finally:
        if bar is not None:
            bar.render_finish()


@main.command()
@_common
@click.pass_obj
def agents(obj: Ctx, agent: str | None, socket: str | None, as_json: bool | None) -> None:
    """The daemon's agents."""
    ctx = _ctx(obj, agent, socket, as_json)
    listed = _ask(ctx, lambda client: client.agents())
    _emit(ctx, listed, "\n".join(f"{'*' if a['default'] else ' '} {a['id']:12s} {a['workspace']}" for a in listed))


@main.command()
@click.option("--budget", default=4000, show_default=True, help="Characters of snippets per search answer.")
@click.option("--autostart", is_flag=True, help="Start the daemon when it is not running.")
@click.option(
    "--http",
    "http_port",
    type=int,
    default=None,
    help="Serve streamable HTTP on 127.0.0.1:PORT, to requests bearing the token it names.",
)
@_common
@click.pass_obj
def mcp(
    obj: Ctx,
    budget: int,
    autostart: bool,
    http_port: int | None,
    agent: str | None,
    socket: str | None,
    as_json: bool | None,
) -> None:
    """Run an MCP server (stdio) with memory_search, memory_get, memory_write and memory_status."""
    try:
        from memoryd_client.mcp_bridge import serve
    except ImportError as exc:
        raise click.ClickException(f"the MCP SDK is not installed ({exc}); pip install 'memoryd[mcp]'") from None
    serve(socket or obj.socket, agent or obj.agent, budget, autostart, http_port)


@main.command()
def prompt() -> None:
    """Print the "Memory recall" section for an agent's system prompt."""
    from memoryd_client.prompt import RECALL_PROMPT

    click.echo(RECALL_PROMPT, nl=False)


def _loop_commands() -> None:
    from memoryd_client.loop_cli import hook, integrations

    for command in (hook, integrations):
        main.add_command(command)


_loop_commands()

if __name__ == "__main__":
    main()
