"""Agent hooks: `memctl hook PLATFORM EVENT` reads the platform's hook input (JSON on stdin) and answers in the
platform's format: memories for the prompt, the recent notes at session start, a sync before compaction and at
session end. A hook never blocks or breaks the agent: when the daemon is down, slow or wrong, it prints nothing,
exits 0 within its time limit and logs why (`memctl hook --log` says where).

On the hot path it imports the quick client alone (memoryd.client.quick): every prompt starts one."""

from __future__ import annotations

import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

RECALL_SECONDS = 2.0  # a prompt waits at most this long for its memories
SYNC_SECONDS = 20.0  # before a compaction or at the end, the transcript's sync is waited for this long
RECENT_NOTES = 2  # dated notes whose last lines a new session is shown
RECENT_LINES = 40
MAX_INPUT_BYTES = 8 * 1024 * 1024


def log_path() -> str:
    from memoryd.protocol.paths import default_data_dir

    return os.path.join(default_data_dir(), "hooks.log")


def log(platform: str, event: str, message: str) -> None:
    """One line in the hooks' log; a log that cannot be written is no reason to fail the hook."""
    try:
        path = log_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {platform} {event}: {message}\n")
    except OSError:
        pass


class Hook:
    """One hook call: the platform's input, and a client that is connected only when it is needed."""

    def __init__(self, platform: str, event: str, data: dict[str, Any], socket: str | None, agent: str | None):
        self.platform, self.event, self.data = platform, event, data
        self.socket, self.agent = socket, agent

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        return value if isinstance(value, str) and value else None

    def call(self, method: str, seconds: float, **params: Any) -> Any:
        """The quick client first; the stub when it fails, to try again and raise what went wrong."""
        from memoryd.client.quick import QuickFailed, call

        try:
            return call(method, {"agent": self.agent, **params}, self.socket, seconds)
        except QuickFailed as exc:
            if not exc.retry:
                raise TimeoutError(str(exc)) from None
            from memoryd.client.stub import MemoryClient

            with MemoryClient(self.socket, timeout=seconds) as client:
                return client.request(method, agent=self.agent, **params)

    def recall(self, prompt: str) -> str:
        answer = self.call(
            "recall",
            RECALL_SECONDS,
            prompt=prompt,
            session=self.text("session_id") or self.text("sessionID"),
            transcript=self.text("transcript_path"),
            client=self.platform,
        )
        return answer.get("block") or ""

    def recent_notes(self) -> str:
        """The last lines of the newest dated notes (memory/YYYY-MM-DD.md), read through the daemon."""
        from memoryd.client.stub import MemoryClient

        with MemoryClient(self.socket, timeout=RECALL_SECONDS) as client:
            agents = client.agents()
            mine = next((a for a in agents if a["id"] == self.agent or (self.agent is None and a["default"])), None)
            if mine is None:
                return ""
            folder = os.path.join(mine["workspace"], "memory")
            try:
                dated = sorted(n for n in os.listdir(folder) if _dated_note(n))[-RECENT_NOTES:]
            except OSError:
                return ""
            parts = []
            for name in dated:
                path = f"memory/{name}"
                head = client.get(path, 1, RECENT_LINES, agent=self.agent)  # a short note whole, else its length
                total = int(head["total_lines"])
                start = max(1, total - RECENT_LINES + 1)
                text = head["text"] if start == 1 else client.get(path, start, RECENT_LINES, agent=self.agent)["text"]
                if text.strip():
                    parts.append(f"{path}#L{start}-L{total}:\n{text.rstrip()}")
        if not parts:
            return ""
        return "Recent notes (from memoryd; memory_search finds older ones):\n" + "\n\n".join(parts)

    def sync(self) -> None:
        self.call("sync", SYNC_SECONDS + 5, timeout=SYNC_SECONDS, vectors=False, client=self.platform)


def _dated_note(name: str) -> bool:
    stem = name.removesuffix(".md")
    return name.endswith(".md") and len(stem) == 10 and stem[4] == "-" and stem[7] == "-" and stem[:4].isdigit()


def _claude_context(event: str, text: str) -> str:
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, ensure_ascii=False)


def claude_style(hook: Hook) -> str:
    """Claude Code's hooks, whose input and output Codex shares (UserPromptSubmit and SessionStart add
    `hookSpecificOutput.additionalContext`)."""
    if hook.event == "user-prompt-submit":
        prompt = hook.text("prompt")
        return _claude_context("UserPromptSubmit", hook.recall(prompt)) if prompt else ""
    if hook.event == "session-start":
        return _claude_context("SessionStart", hook.recent_notes())
    if hook.event in ("pre-compact", "session-end", "stop"):
        hook.sync()
        return ""
    raise ValueError(f"unknown {hook.platform} event {hook.event!r}")


def opencode(hook: Hook) -> str:
    """What memoryd's OpenCode plugin (client/assets/opencode-memoryd.js) runs: the block as plain text."""
    if hook.event == "user-prompt-submit":
        prompt = hook.text("prompt")
        return hook.recall(prompt) if prompt else ""
    if hook.event in ("session-compacting", "session-idle"):
        hook.sync()
        return ""
    raise ValueError(f"unknown opencode event {hook.event!r}")


HANDLERS: dict[str, Callable[[Hook], str]] = {"claude-code": claude_style, "codex": claude_style, "opencode": opencode}


def read_input(raw: str) -> dict[str, Any]:
    if len(raw) > MAX_INPUT_BYTES:
        raise ValueError(f"hook input over {MAX_INPUT_BYTES} bytes")
    data = json.loads(raw) if raw.strip() else {}
    if not isinstance(data, dict):
        raise ValueError(f"hook input is a JSON {type(data).__name__}, not an object")
    return data


def run(platform: str, event: str, raw: str, socket: str | None = None, agent: str | None = None) -> str:
    """The hook's output, or "" when it has none or failed (the reason goes to the log)."""
    from memoryd.client.stub import ClientError

    try:
        hook = Hook(platform, event, read_input(raw), socket, agent)
        return HANDLERS[platform](hook)
    except (ClientError, ValueError, KeyError, TypeError, OSError) as exc:
        log(platform, event, f"{type(exc).__name__}: {exc}")
        return ""


def main(argv: list[str]) -> int:
    """memctl hook PLATFORM EVENT [--agent A] [--socket S]; memctl hook --log prints the log's path."""
    import argparse

    parser = argparse.ArgumentParser(prog="memctl hook", description=__doc__.split("\n\n")[0])
    parser.add_argument("platform", nargs="?", choices=sorted(HANDLERS))
    parser.add_argument("event", nargs="?")
    parser.add_argument("--agent", "-a", default=None)
    parser.add_argument("--socket", default=os.environ.get("MEMORYD_SOCKET"))
    parser.add_argument("--log", action="store_true", help="Print where the hooks log, and end.")
    args, extra = parser.parse_known_args(argv)  # Codex adds its notification as one more argument
    if args.log or not args.platform or not args.event:
        print(log_path())
        return 0
    raw = (
        extra[-1] if extra else ("" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read(MAX_INPUT_BYTES + 1))
    )
    out = run(args.platform, args.event, raw, args.socket, args.agent)
    if out:
        sys.stdout.write(out + "\n")
    return 0
