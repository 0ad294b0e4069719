"""The `memoryd` command: run the daemon, prepare the local model, install the login service."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memoryd import __version__
from memoryd.config import (
    Config,
    ConfigError,
    default_model_path,
    default_workspace,
    load_config,
)
from memoryd.daemon import model_cli
from memoryd.daemon.bars import Bars
from memoryd.store import KINDS

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
F = TypeVar("F", bound=Callable[..., Any])


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="memoryd")
def main() -> None:
    """memoryd: a local, always-on memory service for AI agents."""
    os.umask(0o077)  # indexes, caches and models it writes are for this user alone


def _config_options(func: F) -> F:
    options = [
        click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="TOML config (default: $MEMORYD_CONFIG or ~/.config/memoryd/config.toml).",
        ),
        click.option(
            "--workspace",
            type=click.Path(file_okay=False, path_type=Path),
            help="Quick start: one agent 'main' for this workspace, no config file needed.",
        ),
        click.option(
            "--socket",
            "socket_path",
            type=click.Path(path_type=Path),
            help="Unix socket (default: $MEMORYD_SOCKET or $XDG_RUNTIME_DIR/memoryd/memoryd.sock).",
        ),
        click.option(
            "--data-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="Indexes and models (default: $MEMORYD_DATA_DIR or ~/.local/share/memoryd).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _load(
    config_path: Path | None,
    workspace: Path | None,
    socket_path: Path | None,
    data_dir: Path | None,
    check_paths: bool = False,
) -> Config:
    try:
        return load_config(
            config_path, workspace=workspace, data_dir=data_dir, socket=socket_path, check_paths=check_paths
        )
    except ConfigError as exc:
        raise click.ClickException("config: " + "\nconfig: ".join(str(exc).splitlines())) from None


@main.command()
@_config_options
@click.option("--prepare-model", is_flag=True, help="Build the default local model first if it is missing.")
@click.option("--no-watch", is_flag=True, help="Do not watch files (sync on request and on the interval only).")
@click.option("--log-level", default="info", type=click.Choice(["debug", "info", "warning", "error"]))
@click.option("--log-json/--log-text", default=None, help="Log format (default: text on a terminal, else JSON).")
def run(
    config_path: Path | None,
    workspace: Path | None,
    socket_path: Path | None,
    data_dir: Path | None,
    prepare_model: bool,
    no_watch: bool,
    log_level: str,
    log_json: bool | None,
) -> None:
    """Run the daemon in the foreground (systemd and launchd run it this way)."""
    from memoryd.daemon.logging import configure
    from memoryd.daemon.server import StartupError, check_data_dir, check_socket_path
    from memoryd.daemon.server import run as run_daemon

    configure(log_level, log_json)
    # a workspace someone named must exist: memoryd never creates (and indexes) an empty one
    config = _load(config_path, workspace, socket_path, data_dir, check_paths=True)
    try:
        check_socket_path(config.socket)
        check_data_dir(config)
        for agent in config.agents:
            if agent.workspace == default_workspace():  # the quick start's own workspace is made on first run
                try:
                    agent.workspace.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    why = exc.strerror or exc
                    raise StartupError(f"cannot create the workspace {agent.workspace}: {why}") from None
        wanted = {Path(a.embedding.model_path) for a in config.agents if a.embedding.provider in ("auto", "local")}
        if prepare_model and default_model_path(config.data_dir) in wanted:
            model_cli.prepare_model(config.data_dir, None, None, force=False)
        run_daemon(config, watch=not no_watch)
    except StartupError as exc:
        raise click.ClickException(str(exc)) from None


@main.group()
def config() -> None:
    """Check the configuration."""


@config.command("check")
@_config_options
def config_check(
    config_path: Path | None, workspace: Path | None, socket_path: Path | None, data_dir: Path | None
) -> None:
    """Print the effective config as JSON (API keys masked), or every error in it (exit 1): what it says that
    cannot be used, and what it names that is not there (a workspace, a sessions folder, a model file)."""
    import json

    try:
        loaded = load_config(config_path, workspace=workspace, data_dir=data_dir, socket=socket_path, check_paths=True)
    except ConfigError as exc:
        for problem in str(exc).splitlines():
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(1) from None
    click.echo(json.dumps(loaded.as_dict(), indent=2, ensure_ascii=False))


@main.command()
@_config_options
@click.option("--no-integrity", is_flag=True, help="Skip the integrity check of indexes no daemon holds.")
def doctor(
    config_path: Path | None,
    workspace: Path | None,
    socket_path: Path | None,
    data_dir: Path | None,
    no_integrity: bool,
) -> None:
    """Check config, daemon, data dir, models, workspaces, watchers and indexes; one line each (exit 1 on a FAIL)."""
    from memoryd.daemon.doctor import FAIL, diagnose

    load = {"workspace": workspace, "data_dir": data_dir, "socket": socket_path}
    findings = diagnose({"path": config_path, **load}, integrity=not no_integrity)
    for finding in findings:
        click.echo(finding.line())
    if any(f.level == FAIL for f in findings):
        raise SystemExit(1)


main.add_command(model_cli.model)


@main.group()
def service() -> None:
    """Start memoryd at login (systemd user unit, or launchd on macOS)."""


@service.command("install")
@_config_options
@click.option("--no-enable", is_flag=True, help="Only write the file.")
def service_install(
    config_path: Path | None, workspace: Path | None, socket_path: Path | None, data_dir: Path | None, no_enable: bool
) -> None:
    """Write the service file with this install's paths and enable it."""
    from memoryd.daemon.units import ServiceError, install

    args: list[str] = []
    for flag, value in (
        ("--config", config_path),
        ("--workspace", workspace),
        ("--socket", socket_path),
        ("--data-dir", data_dir),
    ):
        if value is not None:
            args += [flag, str(Path(value).expanduser().absolute())]
    try:
        written, note = install(args, activate=not no_enable)
    except ServiceError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{written.path}: {note}")
    click.echo(f"it runs: memoryd run{''.join(f' {a}' for a in args)}")
    if not args:
        loaded = _load(None, None, None, None)
        where = ", ".join(str(a.workspace) for a in loaded.agents)
        click.echo(f"no --workspace or --config given: it indexes what the config file says ({where})")


@service.command("uninstall")
@click.option("--no-disable", is_flag=True, help="Only remove the file.")
def service_uninstall(no_disable: bool) -> None:
    """Stop the service and remove its file."""
    from memoryd.daemon.units import uninstall

    path, note = uninstall(activate=not no_disable)
    click.echo(f"{path}: {note}")


@service.command("status")
def service_status() -> None:
    """Where the service file is and whether it runs."""
    from memoryd.daemon.units import status

    for key, value in status().items():
        click.echo(f"{key}: {value}")


@main.group()
def store() -> None:
    """Where an agent's index lives."""


@store.command("migrate")
@_config_options
@click.option("--agent", "agent_id", default=None, help="Which agent (default: the config's default agent).")
@click.option(
    "--from",
    "from_",
    type=click.Choice(KINDS),
    default=None,
    help="The kind of store the agent uses now (checked against the config).",
)
@click.option(
    "--to",
    "to",
    required=True,
    help="A postgresql:// URL (its password from PGPASSWORD or ~/.pgpass: one on the command line is visible to "
    "every local user in ps), or a new SQLite index file.",
)
@click.option("--namespace", default=None, help="The PostgreSQL namespace (default: the agent id).")
def store_migrate(
    config_path: Path | None,
    workspace: Path | None,
    socket_path: Path | None,
    data_dir: Path | None,
    agent_id: str | None,
    from_: str | None,
    to: str,
    namespace: str | None,
) -> None:
    """Move an agent's index to another store: its embedding cache and access counts are copied, the rest is
    built from the Markdown (nothing already embedded is embedded again). The old store is only read."""
    from memoryd.daemon.logging import configure
    from memoryd.daemon.migrate import MigrationError, migrate, open_source, target_agent
    from memoryd.postgres_urls import without_password
    from memoryd.store.backend import config_changes, kind_of

    configure("warning", json=False)  # stdout is the summary; the bars and warnings go to stderr
    config = _load(config_path, workspace, socket_path, data_dir)
    try:
        agent = config.agent(agent_id)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    current = kind_of(agent)
    if from_ is not None and from_ != current:
        raise click.ClickException(f"agent {agent.id} uses a {current} store, not {from_}")
    if without_password(to) != to:
        click.echo(
            "note: a password in --to is visible to every local user (ps) while this runs; PGPASSWORD or"
            " ~/.pgpass keep it out of sight",
            err=True,
        )
    bars = Bars({"cache": "copying the embedding cache", "sync": "indexing the notes"})
    try:
        target = target_agent(agent, to, namespace, config.data_dir)
        source = open_source(agent)
        try:
            done = migrate(source, target, bars, moving=agent)
        finally:
            source.close()
    except MigrationError as exc:
        raise click.ClickException(str(exc)) from None
    bars.finish()
    click.echo(
        f"moved agent {agent.id}: {done.files} files, {done.chunks} chunks ({done.embedded_chunks} with vectors, "
        f"{done.newly_embedded} embedded anew), {done.cached_embeddings} cached embeddings copied, "
        f"in {done.seconds} s"
    )
    if done.embedding_error:
        click.echo(f"note: {done.embedding_error}; the daemon embeds the rest", err=True)
    click.echo(f'now change the [[agents]] table with id = "{agent.id}":')
    for action, key, value in config_changes(agent, target):
        click.echo({"set": f"  {key} = {value}", "remove": f"  remove {key}  ({value})"}.get(action, f"  ({value})"))


if __name__ == "__main__":
    main()
