"""`memoryd doctor`: every check a person would make by hand when memory seems off, one line each with what to do.

It never opens an index for writing and never starts or stops anything: a running daemon is asked over its
socket, and an index no daemon holds is opened read-only."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.config import AgentConfig, Config, ConfigError, default_model_path, load_config
from memoryd.integrations import read_markers
from memoryd.store.backend import index_error_fix, live_check, offline_check
from memoryd.store.lock import data_dir_lock_path
from memoryd_client.protocol.paths import pid_alive, read_holder

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Finding:
    level: str
    what: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        return f"{self.level:4s}  {self.what}: {self.detail}" + (f"\n      -> {self.fix}" if self.fix else "")


def diagnose(load: dict[str, Any], *, integrity: bool = True) -> list[Finding]:
    """Everything, in the order a person would look: config, daemon, then per agent."""
    try:
        config = load_config(**load, check_paths=True)
    except ConfigError as exc:
        return [
            Finding(FAIL, "config", problem, "fix the config (memoryd config check)")
            for problem in str(exc).splitlines()
        ]
    source = config.source_path or "none (defaults and command-line options)"
    findings = [Finding(OK, "config", f"{source}; {len(config.agents)} agent(s)")]
    status = _daemon(config, findings)
    findings += list(_integrations(config, (status or {}).get("daemon", {}).get("integrations")))
    agents = {a["agent"]: a for a in (status or {}).get("agents", [])}
    for agent in config.agents:
        findings += list(_agent(config, agent, agents.get(agent.id), integrity))
    return findings


def _daemon(config: Config, findings: list[Finding]) -> dict[str, Any] | None:
    from memoryd_client.stub import ClientError, MemoryClient

    holder = read_holder(data_dir_lock_path(config.data_dir))
    alive = pid_alive(holder.get("pid"))
    try:
        with MemoryClient(config.socket, timeout=5) as client:
            status = client.status()
    except ClientError as exc:
        if alive:
            findings.append(
                Finding(
                    FAIL,
                    "daemon",
                    f"pid {holder['pid']} holds the data dir {config.data_dir} but {config.socket} does not answer"
                    f" ({exc})",
                    f"it listens on {holder.get('socket')}: use that socket, or stop it (kill {holder['pid']})",
                )
            )
        else:
            findings.append(Finding(WARN, "daemon", f"not running on {config.socket}", "start it: memoryd run"))
        return None
    daemon = status["daemon"]
    findings.append(
        Finding(
            OK,
            "daemon",
            f"pid {daemon['pid']} on {config.socket}, up {daemon['uptime_s']} s, RSS {daemon.get('rss_mb')} MB",
        )
    )
    if alive and holder.get("pid") != daemon["pid"]:
        findings.append(
            Finding(
                WARN, "data dir", f"held by pid {holder['pid']}, not by the daemon that answers", "stop one of them"
            )
        )
    if daemon.get("reload_error"):
        findings.append(
            Finding(FAIL, "config reload", daemon["reload_error"], "fix the config, then kill -HUP the daemon")
        )
    return status


def _integrations(config: Config, heard: dict[str, Any] | None) -> Iterator[Finding]:
    """Each installed integration, and whether its hooks reached the daemon since it started."""
    markers, _ = read_markers(config.data_dir)
    for marker in markers:
        what = f"integration {marker.platform}"
        seen = (heard or {}).get(marker.platform)
        if seen:
            ago = time.time() - seen["last_seen"]
            yield Finding(OK, what, f"installed; its hooks reached the daemon {ago:.0f} s ago ({seen['calls']} calls)")
        elif heard is None:
            yield Finding(OK, what, "installed (the daemon is not running to say when its hooks last called)")
        else:
            yield Finding(
                WARN,
                what,
                "installed, but no hook has reached the daemon since it started",
                f"start a {marker.platform} session; if this stays, see `memctl hook --log`",
            )


def _agent(config: Config, agent: AgentConfig, state: dict[str, Any] | None, integrity: bool) -> Iterator[Finding]:
    name = f"agent {agent.id}"
    workspace = agent.workspace
    if state is not None and Path(state["workspace"]) != agent.workspace:  # started with other options
        workspace = Path(state["workspace"])
        yield Finding(
            WARN,
            f"{name} workspace",
            f"the running daemon serves {workspace}; this config says {agent.workspace}",
            "give doctor the options the daemon was started with (--workspace, --config) to check those",
        )
    if not workspace.exists():
        yield Finding(FAIL, f"{name} workspace", f"{workspace} does not exist", "create it, or fix the config")
    elif os.access(workspace, os.R_OK | os.X_OK):
        yield Finding(OK, f"{name} workspace", str(workspace))
    else:
        yield Finding(FAIL, f"{name} workspace", f"{workspace} cannot be read", "fix its permissions")
    yield from _model(config, agent)
    if state is None:
        yield from _index_offline(agent, integrity)
        return
    watcher = str(state.get("watcher", ""))
    level = OK if watcher.startswith("watching") else WARN
    yield Finding(
        level, f"{name} watcher", watcher, "" if level == OK else "changes are found by the periodic sync only"
    )
    if state.get("index_error"):
        yield Finding(FAIL, f"{name} index", state["index_error"], index_error_fix(agent, state["index_error"]))
    else:
        lane = state.get("embedding") or {}
        counts = f"{state['files']} files, {state['chunks']} chunks, {state['embedded_chunks']} embedded"
        yield Finding(
            OK, f"{name} index", counts + (f"; {lane['waiting']} waiting for vectors" if lane.get("waiting") else "")
        )
    levels = {"ok": OK, "warn": WARN, "fail": FAIL}
    for level, message, fix in live_check(agent, state):
        yield Finding(levels[level], f"{name} store", message, fix)
    for key, fix in (("sync_error", "see the daemon's log"), ("needs_reindex", "memctl reindex")):
        if state.get(key):
            yield Finding(WARN, f"{name} {key.replace('_', ' ')}", str(state[key]), fix)
    if (state.get("embedding") or {}).get("error"):
        yield Finding(
            WARN, f"{name} embedding", state["embedding"]["error"], "check the provider; keyword search works"
        )
    if state.get("skipped_files"):
        yield Finding(
            WARN, f"{name} skipped files", f"{len(state['skipped_files'])}: {next(iter(state['skipped_files']))}"
        )


def _model(config: Config, agent: AgentConfig) -> Iterator[Finding]:
    if agent.embedding.provider not in ("auto", "local"):
        yield Finding(OK, f"agent {agent.id} embeddings", f"provider {agent.embedding.provider}")
        return
    from memoryd.embeddings.models.prepare import verify
    from memoryd.embeddings.models.recipes import RECIPES

    path = Path(agent.embedding.model_path)
    named = agent.embedding.model
    if agent.embedding.provider == "local" and named and named.partition(":")[0] not in RECIPES:
        yield Finding(
            WARN,
            f"agent {agent.id} model",
            f"embedding.model {named!r} is not a model memoryd prepares: the local provider uses {path}",
            f"name one of {', '.join(RECIPES)}, or set embedding.model_path",
        )
    if not path.is_file():
        yield _missing_model(config, agent, path)
    elif verify(path):
        yield Finding(OK, f"agent {agent.id} model", f"{path}, checksum verified; {_model_terms(path, agent)}")
    elif path == default_model_path(config.data_dir):
        yield Finding(
            FAIL, f"agent {agent.id} model", f"{path} does not match its checksum", "memoryd model prepare --force"
        )
    else:
        yield Finding(
            OK, f"agent {agent.id} model", f"{path} (your own file: no checksum recorded); {_model_terms(path, agent)}"
        )


def _missing_model(config: Config, agent: AgentConfig, path: Path) -> Finding:
    """What to do about a model file that is not there: prepare it, when it is one memoryd prepares."""
    from memoryd.embeddings.models.recipes import prepare_command

    fix = prepare_command(config.data_dir, path) or "set embedding.model_path"
    level = WARN if agent.embedding.provider == "auto" else FAIL
    without = "keyword search only" if agent.embedding.provider == "local" else "keyword search, or a remote provider"
    return Finding(level, f"agent {agent.id} model", f"{path} is missing ({without})", fix)


def _model_terms(path: Path, agent: AgentConfig) -> str:
    """The model's prompts (and where they come from) and licence, read from the file without loading it."""
    from memoryd.embeddings.local import licence_of
    from memoryd.embeddings.models.gguf_meta import GGUFFormatError, read_keys
    from memoryd.embeddings.prompts import DESCRIBING_KEYS, known_prompts, with_settings

    try:
        metadata = {k: str(v) for k, v in read_keys(path, {*DESCRIBING_KEYS, "general.license"}).items()}
    except (OSError, GGUFFormatError) as exc:
        return f"not a readable GGUF ({exc})"
    cfg = agent.embedding
    query, document, source = with_settings(known_prompts(metadata, path), cfg.query_prefix, cfg.document_prefix)
    shown = f"prompts {query!r} / {document!r} ({source})" if query or document else f"no prompts ({source})"
    return f"{shown}; licence: {licence_of(path, metadata) or 'not stated'}"


def _index_offline(agent: AgentConfig, integrity: bool) -> Iterator[Finding]:
    levels = {"ok": OK, "warn": WARN, "fail": FAIL}
    for level, message, fix in offline_check(agent, integrity):
        yield Finding(levels[level], f"agent {agent.id} index", message, fix)
