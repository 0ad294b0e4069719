"""`memctl integrations install|remove|status PLATFORM`: put memoryd in an agent platform's loop with one command.

Installing writes the platform's own files (a Claude Code plugin, Codex's config entries, an OpenCode plugin)
with this memctl's absolute path in them, and a marker in memoryd's data dir that names the platform's
transcript folder: the daemon reads the markers when it starts (or on SIGHUP) and indexes those transcripts as
the agent's sessions. Removing deletes what installing wrote and nothing else."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time

from memoryd.protocol.paths import default_data_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PLUGIN_NAME = "memoryd"
HOOK_SECONDS = 5  # the platform's own time limit for one hook (the hook itself gives up sooner)
SYNC_HOOK_SECONDS = 30


def markers_dir(data_dir: str | None = None) -> str:
    return os.path.join(data_dir or default_data_dir(), "integrations")


def marker_path(platform: str, data_dir: str | None = None) -> str:
    return os.path.join(markers_dir(data_dir), f"{platform}.json")


def memctl_command() -> str:
    """This memctl, as an absolute path a platform can run without the user's PATH."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "memctl")
    return beside if os.access(beside, os.X_OK) else (shutil.which("memctl") or "memctl")


def claude_home() -> str:
    return os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude")


def _write_json(path: str, data: Any) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = path + ".tmp"
    with open(partial, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    os.replace(partial, path)


SKILL = """---
name: memoryd
description: Long-term memory of past sessions, decisions and notes. Use when the user asks what was decided,
  said or done before ("what did we decide about...", "last time", "remind me"), or before re-deciding
  something that may have been settled.
---

# memoryd

Relevant memories are added to prompts on their own, in a `<memoryd-recall>` block: read it first and cite what
you use as `path#Lx-Ly`. When that is not enough, `memory_search` finds more (any language; exact names work),
`memory_get` reads a cited file's lines, and `memory_write` saves a decision, a preference or a fact worth
keeping, one self-contained statement each. Before your context is compacted, save what must outlive it.
"""


README = """# memoryd for Claude Code

Installed by `memctl integrations install claude-code`; removed by `memctl integrations remove claude-code`.
Every prompt gets the memories that bear on it from the memoryd daemon (nothing for small talk or bare commands,
nothing it already showed in the session), a new session gets the latest dated notes, and the transcript is
synced before a compaction and at the end so the next session can recall it. The MCP server adds memory_search,
memory_get, memory_write and memory_status. A hook never blocks Claude Code: with the daemon down it adds
nothing and logs why (`memctl hook --log`).
"""


def claude_code_files(memctl: str, agent: str | None) -> dict[str, Any]:
    """The plugin's files, by path inside the plugin folder (Claude Code's plugin and hooks formats)."""
    chosen = ["--agent", agent] if agent else []
    where = " ".join(f"'{a}'" for a in chosen)

    def hook(event: str, seconds: int) -> list[dict[str, Any]]:
        command = f"'{memctl}' hook claude-code {event}" + (f" {where}" if where else "")
        return [{"hooks": [{"type": "command", "command": command, "timeout": seconds}]}]

    return {
        ".claude-plugin/plugin.json": {
            "name": PLUGIN_NAME,
            "version": _version(),
            "description": "memoryd: memories recalled into every prompt, sessions captured, memory tools over MCP.",
            "author": {"name": "memoryd"},
            "license": "MIT",
            "skills": ["./"],
        },
        "hooks/hooks.json": {
            "description": "memoryd: recall on every prompt, recent notes at start, sync before compaction and at end",
            "hooks": {
                "UserPromptSubmit": hook("user-prompt-submit", HOOK_SECONDS),
                "SessionStart": hook("session-start", HOOK_SECONDS),
                "PreCompact": hook("pre-compact", SYNC_HOOK_SECONDS),
                "SessionEnd": hook("session-end", SYNC_HOOK_SECONDS),
            },
        },
        ".mcp.json": {"mcpServers": {PLUGIN_NAME: {"command": memctl, "args": ["mcp", "--autostart", *chosen]}}},
        "SKILL.md": SKILL,
        "README.md": README,
    }


def _version() -> str:
    from memoryd import __version__

    return __version__


def install_claude_code(agent: str | None) -> dict[str, Any]:
    """The plugin goes where Claude Code loads plugins of its own skills folder (`memoryd@skills-dir`)."""
    root = os.path.join(claude_home(), "skills", PLUGIN_NAME)
    written = []
    for relative, content in claude_code_files(memctl_command(), agent).items():
        path = os.path.join(root, relative)
        if isinstance(content, str):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(content)
        else:
            _write_json(path, content)
        written.append(path)
    transcripts = os.path.join(claude_home(), "projects")
    os.makedirs(transcripts, exist_ok=True)  # the daemon watches it from now on, before Claude Code's first session
    return {"folders": [root], "files": written, "transcripts": [transcripts]}


def codex_home() -> str:
    return os.path.expanduser(os.environ.get("CODEX_HOME") or "~/.codex")


CODEX_EVENTS = {  # Codex's hook events, which take Claude Code's input and output formats
    "UserPromptSubmit": ("user-prompt-submit", HOOK_SECONDS),
    "SessionStart": ("session-start", HOOK_SECONDS),
    "PreCompact": ("pre-compact", SYNC_HOOK_SECONDS),
    "SessionEnd": ("session-end", SYNC_HOOK_SECONDS),
}
BLOCK_START = "# >>> memoryd: written by `memctl integrations install codex`; removed by `... remove codex`"
BLOCK_END = "# <<< memoryd"


def _ours(group: Any, memctl_marker: str) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(memctl_marker in str(h.get("command", "")) for h in hooks)


def install_codex(agent: str | None) -> dict[str, Any]:
    """Hooks in Codex's hooks.json (beside any others there), the MCP server and the hooks' trust in its
    config.toml (one marked block), and its rollouts (`sessions/`) as the agent's transcripts."""
    home = codex_home()
    memctl = memctl_command()
    where = f" --agent '{agent}'" if agent else ""
    hooks_path = os.path.join(home, "hooks.json")
    existing = _read_json(hooks_path)
    table = existing.get("hooks", {})
    if not isinstance(table, dict):
        raise ValueError(f"{hooks_path}: 'hooks' is not an object: fix or move it, then install again")
    for event, (name, seconds) in CODEX_EVENTS.items():
        groups = [g for g in table.get(event, []) if not _ours(g, " hook codex ")]
        command = f"'{memctl}' hook codex {name}{where}"
        groups.append({"hooks": [{"type": "command", "command": command, "timeout": seconds}]})
        table[event] = groups
    _write_json(hooks_path, {**existing, "hooks": table})
    config = os.path.join(home, "config.toml")
    _strip_block(config)
    text = _read_text(config)
    lines = [BLOCK_START]
    if "[mcp_servers.memoryd]" not in text:
        args = json.dumps(["mcp", "--autostart", *(["--agent", agent] if agent else [])])
        lines += ["[mcp_servers.memoryd]", f"command = {json.dumps(memctl)}", f"args = {args}"]
    trusted, note = codex_trust(home)
    for key, digest in trusted.items():
        lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}"]
    lines.append(BLOCK_END)
    _write_text(config, text + ("\n" if text and not text.endswith("\n") else "") + "\n".join(lines) + "\n")
    sessions = os.path.join(home, "sessions")
    os.makedirs(sessions, exist_ok=True)
    notes = [note] if note else []
    return {"folders": [], "files": [], "edited": [hooks_path, config], "transcripts": [sessions], "notes": notes}


REVIEW = "Codex runs new hooks once you review them: start `codex` and accept memoryd's hooks (/hooks)"


def codex_trust(home: str, seconds: float = 30.0) -> tuple[dict[str, str], str]:
    """The trust entries of memoryd's hooks as Codex itself hashes them (its app server's `hooks/list`), and a
    note when they could not be had: Codex runs a new hook only once it is trusted."""
    import subprocess

    codex = shutil.which("codex")
    if codex is None:
        return {}, f"codex is not on PATH, so its hooks could not be trusted here. {REVIEW}"
    hello = {"clientInfo": {"name": "memoryd", "version": _version()}}
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [home]}},
    ]
    try:
        server = subprocess.Popen(
            [codex, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "CODEX_HOME": home},
        )
    except OSError as exc:
        return {}, f"codex app-server could not start ({exc}). {REVIEW}"
    watchdog = threading.Timer(seconds, server.kill)  # it answers in well under a second; never wait forever
    watchdog.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(json.dumps(c) + "\n" for c in calls))
        server.stdin.flush()
        for line in server.stdout:  # the stdin stays open until the answer: at its end the server quits
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == 2:
                hooks = [h for entry in (message.get("result") or {}).get("data", []) for h in entry.get("hooks", [])]
                ours = {h["key"]: h["currentHash"] for h in hooks if " hook codex " in str(h.get("command", ""))}
                if ours:
                    return ours, ""
                break
    except OSError:
        pass
    finally:
        watchdog.cancel()
        server.kill()
        server.wait()
    return {}, f"codex app-server did not list memoryd's hooks. {REVIEW}"


def _strip_block(config: str) -> bool:
    """Take out the block install wrote; whether there was one."""
    text = _read_text(config)
    start, end = text.find(BLOCK_START), text.find(BLOCK_END)
    if not 0 <= start < end:
        return False
    _write_text(config, text[:start] + text[end + len(BLOCK_END) :].lstrip("\n"))
    return True


def remove_codex(marker: dict[str, Any]) -> list[str]:
    home = codex_home()
    removed = []
    hooks_path = os.path.join(home, "hooks.json")
    existing = _read_json(hooks_path)
    table = existing.get("hooks")
    if isinstance(table, dict):
        for event in list(table):
            kept = [g for g in table[event] if not _ours(g, " hook codex ")] if isinstance(table[event], list) else None
            if kept is not None and len(kept) != len(table[event]):
                removed.append(f"{hooks_path}: {event}")
                if kept:
                    table[event] = kept
                else:
                    del table[event]
        _write_json(hooks_path, existing)
    config = os.path.join(home, "config.toml")
    if _strip_block(config):
        removed.append(f"{config}: memoryd's MCP server and hook trust")
    return removed


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}): fix or move it, then install again") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a JSON object: fix or move it, then install again")
    return data


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def _write_text(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = path + ".tmp"
    with open(partial, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(partial, path)


def opencode_config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "opencode")


def install_opencode(agent: str | None) -> dict[str, Any]:
    """A plugin module in OpenCode's plugin folder (recall into the turn's system prompt, transcripts written
    where memoryd indexes them, a reminder to save durable facts before a compaction) and the MCP server in
    opencode.json."""
    from importlib.resources import files

    folder = opencode_config_dir()
    transcripts = os.path.join(default_data_dir(), "transcripts", "opencode")
    os.makedirs(transcripts, exist_ok=True)
    source = files("memoryd.client").joinpath("assets", "opencode-memoryd.js").read_text(encoding="utf-8")
    memctl = memctl_command()
    values = {
        "__MEMCTL__": json.dumps(memctl),
        "__AGENT_ARGS__": json.dumps(["--agent", agent] if agent else []),
        "__TRANSCRIPTS__": json.dumps(transcripts),
    }
    for placeholder, value in values.items():
        source = source.replace(placeholder, value)
    plugin = os.path.join(folder, "plugin", "memoryd.js")
    _write_text(plugin, source)
    notes, edited = [], []
    if os.path.exists(os.path.join(folder, "opencode.jsonc")):
        notes.append("opencode.jsonc holds comments memoryd will not rewrite: add the MCP server yourself (README)")
    else:
        config = os.path.join(folder, "opencode.json")
        settings = _read_json(config)
        servers = settings.setdefault("mcp", {})
        if isinstance(servers, dict) and "memoryd" not in servers:
            command = [memctl, "mcp", "--autostart", *(["--agent", agent] if agent else [])]
            servers["memoryd"] = {"type": "local", "command": command, "enabled": True}
            settings.setdefault("$schema", "https://opencode.ai/config.json")
            _write_json(config, settings)
            edited.append(config)
    return {"folders": [], "files": [plugin], "edited": edited, "transcripts": [transcripts], "notes": notes}


def remove_opencode(marker: dict[str, Any]) -> list[str]:
    removed = []
    for config in marker.get("edited", []):
        settings = _read_json(config)
        servers = settings.get("mcp")
        if isinstance(servers, dict) and servers.pop("memoryd", None) is not None:
            if not servers:
                del settings["mcp"]
            _write_json(config, settings)
            removed.append(f"{config}: mcp.memoryd")
    return removed


def openclaw_state_dir() -> str:
    if os.environ.get("OPENCLAW_STATE_DIR"):
        return os.path.expanduser(os.environ["OPENCLAW_STATE_DIR"])
    return os.path.join(os.path.expanduser(os.environ.get("OPENCLAW_HOME") or "~"), ".openclaw")


def openclaw_plugin_dir() -> str:
    from importlib.resources import files

    return str(files("memoryd.client").joinpath("assets", "openclaw"))


def _openclaw(*args: str) -> str:
    """Run the openclaw CLI; its output, or a ValueError that says what failed."""
    import subprocess

    openclaw = shutil.which("openclaw")
    if openclaw is None:
        raise ValueError("openclaw is not on PATH: install OpenClaw (npm i -g openclaw), then run this again")
    try:
        done = subprocess.run([openclaw, *args], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(f"openclaw {' '.join(args[:2])} failed: {exc}") from None
    if done.returncode != 0:
        raise ValueError(f"openclaw {' '.join(args[:2])} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    return done.stdout


def install_openclaw(agent: str | None) -> dict[str, Any]:
    """memoryd's OpenClaw plugin, linked by OpenClaw itself (so it is the plugin of this memoryd, upgraded with
    it), enabled and given the memory slot; OpenClaw's session transcripts indexed as the agent's sessions."""
    _openclaw("plugins", "install", "--force", "--accept-capabilities", "--link", openclaw_plugin_dir())
    _openclaw("plugins", "enable", "memoryd")  # an earlier remove left it disabled
    _openclaw("config", "set", "plugins.slots.memory", "memoryd")
    if agent:
        _openclaw("config", "set", "plugins.entries.memoryd.config.agent", agent)
    transcripts = os.path.join(openclaw_state_dir(), "agents")
    os.makedirs(transcripts, exist_ok=True)
    return {"folders": [], "files": [], "edited": [], "transcripts": [transcripts], "notes": []}


def remove_openclaw(marker: dict[str, Any]) -> list[str]:
    _openclaw("plugins", "uninstall", "--force", "memoryd")
    return ["the OpenClaw plugin memoryd (OpenClaw's built-in memory takes the slot back)"]


INSTALLERS = {
    "claude-code": install_claude_code,
    "codex": install_codex,
    "opencode": install_opencode,
    "openclaw": install_openclaw,
}
REMOVERS = {"codex": remove_codex, "opencode": remove_opencode, "openclaw": remove_openclaw}


def install(platform: str, agent: str | None = None, data_dir: str | None = None) -> dict[str, Any]:
    placed = INSTALLERS[platform](agent)
    marker = {"platform": platform, "agent": agent, "installed_at": round(time.time(), 3), **placed}
    _write_json(marker_path(platform, data_dir), marker)
    return marker


def installed(platform: str, data_dir: str | None = None) -> dict[str, Any] | None:
    try:
        with open(marker_path(platform, data_dir), encoding="utf-8") as fh:
            marker = json.load(fh)
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def remove(platform: str, data_dir: str | None = None) -> list[str]:
    """Delete what install wrote (its folders, its files, its entries in files it edited) and the marker; what
    was removed."""
    marker = installed(platform, data_dir) or {}
    removed = REMOVERS[platform](marker) if platform in REMOVERS and marker else []
    for folder in marker.get("folders", []):
        if os.path.isdir(folder):
            shutil.rmtree(folder)
            removed.append(folder)
    for path in marker.get("files", []):
        if os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    if os.path.exists(marker_path(platform, data_dir)):
        os.remove(marker_path(platform, data_dir))
        removed.append(marker_path(platform, data_dir))
    return removed
