"""`memctl recall`: the memories worth putting before a prompt, as one block, or nothing. A plain call runs without
click (it is called on every prompt); anything else (--help, --json, --source, an error to report) goes to
memctl's full command line (memoryd.client.cli)."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

DEFAULT_TIMEOUT = 5.0


def quick_args(argv: Sequence[str]) -> dict[str, Any] | None:
    """The settings of a plain call (words, and the schema's one-valued options as memctl's fast path reads
    them), or None for what the full command line must read."""
    from memoryd.client.memctl import GLOBAL_OPTIONS, method_options

    options = {**GLOBAL_OPTIONS, **method_options("recall")}
    settings: dict[str, Any] = {"words": [], "timeout": DEFAULT_TIMEOUT}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in options and i + 1 < len(argv):
            name, convert = options[token]
            try:
                settings[name] = convert(argv[i + 1])
            except ValueError:
                return None
            i += 2
            continue
        if token.startswith("-") and token != "-":
            return None
        settings["words"].append(token)
        i += 1
    return settings if settings["words"] else None


def quick(settings: dict[str, Any]) -> int | None:
    """Answer through memoryd.client.quick: the exit code, or None when the full path must (it reports any error
    but a timeout, which is not waited out twice)."""
    from memoryd.client.quick import QuickFailed, call

    prompt = " ".join(settings["words"])
    if prompt == "-":
        prompt = settings["stdin"] = sys.stdin.read()
    params = {k: v for k, v in settings.items() if k not in ("words", "socket", "timeout", "stdin")}
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


def main(argv: Sequence[str]) -> int | None:
    settings = quick_args(argv)
    code = quick(settings) if settings is not None else None
    if code is not None:
        return code
    if settings is not None and "stdin" in settings:  # the prompt was read from stdin already: after "--", so
        argv = [a for a in argv if a != "-"] + ["--", settings["stdin"]]  # one that starts with "-" is no option
    from memoryd.client.cli import main as full

    return full(["recall", *argv])  # click exits itself
