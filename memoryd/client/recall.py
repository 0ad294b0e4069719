"""`memctl recall`: the memories worth putting before a prompt, as one block, or nothing. Runs without click (it
is called on every prompt); errors go to stderr with memctl's exit codes."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

DEFAULT_TIMEOUT = 5.0


QUICK_OPTIONS = {
    "--session": "session",
    "--transcript": "transcript",
    "--budget": "budget",
    "--agent": "agent",
    "-a": "agent",
    "--socket": "socket",
    "--timeout": "timeout",
}


def quick_args(argv: Sequence[str]) -> dict[str, Any] | None:
    """The settings of a plain call (words and one-valued options), or None for what the full parser must read."""
    settings: dict[str, Any] = {"words": []}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in QUICK_OPTIONS and i + 1 < len(argv):
            settings[QUICK_OPTIONS[token]] = argv[i + 1]
            i += 2
            continue
        if token.startswith("-") and token != "-":
            return None
        settings["words"].append(token)
        i += 1
    try:
        settings["budget"] = int(settings["budget"]) if "budget" in settings else None
        settings["timeout"] = float(settings.get("timeout", DEFAULT_TIMEOUT))
    except ValueError:
        return None
    return settings if settings["words"] and settings["timeout"] > 0 else None


def quick(settings: dict[str, Any]) -> int | None:
    """Answer through memoryd.client.quick: the exit code, or None when the full path must (it reports any error
    but a timeout, which is not waited out twice)."""
    from memoryd.client.quick import QuickFailed, call

    prompt = " ".join(settings["words"])
    if prompt == "-":
        prompt = settings["stdin"] = sys.stdin.read()
    params = {k: settings.get(k) for k in ("session", "transcript", "budget", "agent")}
    try:
        answer = call("recall", {"prompt": prompt, **params}, settings.get("socket"), settings["timeout"])
    except QuickFailed as exc:
        if exc.retry:
            return None
        from memoryd.client.render import failure
        from memoryd.client.stub import RPCTimeout

        message, code = failure(RPCTimeout(str(exc)))
        print(message, file=sys.stderr)
        return code
    if answer.get("block"):
        print(answer["block"])
    return 0


def main(argv: Sequence[str]) -> int:
    settings = quick_args(argv)
    code = quick(settings) if settings is not None else None
    if code is not None:
        return code
    return full(argv, settings.get("stdin") if settings else None)


def full(argv: Sequence[str], stdin: str | None = None) -> int:
    import argparse
    import os

    from memoryd.client.render import failure, failure_json
    from memoryd.client.stub import ClientError, MemoryClient
    from memoryd.protocol.schema import SOURCES

    parser = argparse.ArgumentParser(
        prog="memctl recall",
        description="Print the memories worth putting before PROMPT (- reads it from stdin), or nothing.",
    )
    parser.add_argument("prompt", nargs="+")
    parser.add_argument("--session", help="The agent session's id: what it was shown is not shown again.")
    parser.add_argument("--transcript", help="The session's own transcript file (never recalled).")
    parser.add_argument("--budget", type=int, help="Tokens the block may take (default: the agent's, 1000).")
    parser.add_argument("--source", action="append", choices=SOURCES, dest="sources")
    parser.add_argument("--agent", "-a")
    parser.add_argument("--socket", default=os.environ.get("MEMORYD_SOCKET"))
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="Seconds to wait (default 5).")
    parser.add_argument("--json", action="store_true", help="Print the whole answer as JSON.")
    args = parser.parse_args(argv)
    prompt = " ".join(args.prompt)
    if prompt == "-":
        prompt = sys.stdin.read() if stdin is None else stdin
    options = {k: getattr(args, k) for k in ("session", "transcript", "budget", "sources", "agent")}
    try:
        with MemoryClient(args.socket, timeout=args.timeout) as client:
            answer = client.recall(prompt, **{k: v for k, v in options.items() if v is not None})
    except ClientError as exc:
        message, code = failure(exc)
        print(failure_json(exc) if args.json else message, file=sys.stdout if args.json else sys.stderr)
        return code
    if args.json:
        import json

        print(json.dumps(answer, ensure_ascii=False, indent=2))
    elif answer["block"]:
        print(answer["block"])
    return 0
