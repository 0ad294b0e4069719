"""memctl's commands for agents' loops: `hook` (light: memctl's entry point runs it without click when it comes
first, so this only forwards) and `integrations`. `recall` sits with search in memoryd_client.cli."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

import click

from memoryd_client import integrations as places
from memoryd_client.protocol.paths import running_daemon
from memoryd_client.stub import ClientError, MemoryClient

FORWARD = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


def _forward(ctx: click.Context, module: str) -> None:
    import importlib

    obj = ctx.obj
    given = [*(("--socket", obj.socket) if obj.socket else ()), *(("--agent", obj.agent) if obj.agent else ())]
    args = [*ctx.args, *given] if ctx.args else ["--help"]
    sys.exit(importlib.import_module(module).main(args))


@click.command(context_settings=FORWARD)
@click.pass_context
def hook(ctx: click.Context) -> None:
    """Run an agent platform's hook: memctl hook PLATFORM EVENT, input on stdin (memctl hook --help)."""
    _forward(ctx, "memoryd_client.hooks")


PLATFORM = click.argument("platform", type=click.Choice(sorted(places.INSTALLERS)))


@click.group()
def integrations() -> None:
    """Put memoryd in an agent platform's loop (recall on every prompt, sessions captured), or take it out."""


def _reload_daemon() -> str:
    """Ask a running daemon to read the integration markers again (SIGHUP), and say what happened."""
    holder = running_daemon()
    if not holder:
        return "memoryd is not running; it indexes the transcripts when it starts (memoryd run)"
    try:
        os.kill(int(holder["pid"]), signal.SIGHUP)
    except (OSError, ValueError, KeyError) as exc:
        return f"could not signal memoryd (pid {holder.get('pid')}): {exc}; restart it to index the transcripts"
    return f"memoryd (pid {holder['pid']}) reloaded"


@integrations.command()
@PLATFORM
@click.option("--agent", "-a", default=None, help="The agent whose memory it uses (default: the default agent).")
def install(platform: str, agent: str | None) -> None:
    """Install PLATFORM's integration (claude-code, codex, opencode, openclaw)."""
    try:
        marker = places.install(platform, agent)
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    for path in marker["files"]:
        click.echo(f"wrote {path}")
    for path in marker.get("edited", []):
        click.echo(f"edited {path}")
    for note in marker.get("notes", []):
        click.echo(f"note: {note}")
    for folder in marker["transcripts"]:
        click.echo(f"transcripts: {folder} (indexed as the agent's sessions)")
    click.echo(_reload_daemon())


@integrations.command()
@PLATFORM
def remove(platform: str) -> None:
    """Remove PLATFORM's integration: the files it installed, nothing else."""
    try:
        removed = places.remove(platform)
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    for path in removed:
        click.echo(f"removed {path}")
    click.echo(_reload_daemon() if removed else f"{platform} was not installed")


@integrations.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--socket", default=None, envvar="MEMORYD_SOCKET", help="Daemon socket path.")
def status(as_json: bool, socket: str | None) -> None:
    """Which integrations are installed, and when their hooks last reached the daemon."""
    try:
        with MemoryClient(socket, timeout=5) as client:
            heard: dict[str, Any] = client.ping().get("integrations") or {}
    except ClientError as exc:
        heard, down = {}, str(exc)
    else:
        down = ""
    rows = []
    for platform in sorted(places.INSTALLERS):
        marker = places.installed(platform)
        seen = heard.get(platform) or {}
        rows.append({"platform": platform, "installed": marker is not None, **seen})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "installed" if row["installed"] else "not installed"
        if row.get("last_seen"):
            ago = time.time() - row["last_seen"]
            state += f"; hooks reached the daemon {ago:.0f} s ago ({row['calls']} calls since it started)"
        elif row["installed"]:
            state += "; no hook has reached the daemon since it started" + (f" ({down})" if down else "")
        click.echo(f"{row['platform']:12s} {state}")
