"""`memctl recall`: the memories worth putting before a prompt, as one block, or nothing. A plain call runs without
click (it is called on every prompt); anything else (--help, --json, --source, an error to report) goes to
memctl's full command line (memoryd_client.cli). `--timeout` bounds the whole call, reading a prompt from stdin and
the full command line's try included."""

from __future__ import annotations

import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

DEFAULT_TIMEOUT = 5.0


def quick_args(argv: Sequence[str]) -> dict[str, Any] | None:
    """The settings of a plain call (words, and the schema's one-valued options as memctl's fast path reads
    them), or None for what the full command line must read."""
    from memoryd_client.memctl import GLOBAL_OPTIONS, method_options

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


def timed_out(message: str) -> int:
    from memoryd_client.render import failure
    from memoryd_client.stub import RPCTimeout

    line, code = failure(RPCTimeout(message))
    print(line, file=sys.stderr)
    return code


def quick(settings: dict[str, Any], deadline: float) -> int | None:
    """Answer through memoryd_client.quick by `deadline` (time.monotonic()): the exit code, or None when the full
    path must (it reports any error but a timeout, which is not waited out twice)."""
    from memoryd_client.protocol.wire import MAX_MESSAGE_BYTES
    from memoryd_client.quick import QuickFailed, call, read_stdin

    prompt = " ".join(settings["words"])
    if prompt == "-":
        try:
            prompt = read_stdin(deadline, MAX_MESSAGE_BYTES).decode("utf-8", "replace")
        except TimeoutError:
            return timed_out(f"the prompt on stdin did not end within {settings['timeout']} s")
        settings["stdin"] = prompt
    params = {k: v for k, v in settings.items() if k not in ("words", "socket", "timeout", "stdin")}
    try:
        answer = call("recall", {"prompt": prompt, **params}, settings.get("socket"), deadline)
    except QuickFailed as exc:
        if exc.retry:
            return None
        return timed_out(str(exc))
    if answer.get("block"):
        print(answer["block"])
    return 0


def main(argv: Sequence[str]) -> int | None:
    started = time.monotonic()
    settings = quick_args(argv)
    code = quick(settings, started + settings["timeout"]) if settings is not None else None
    if code is not None:
        return code
    if settings is not None:  # the full command line has what is left of the time
        left = started + settings["timeout"] - time.monotonic()
        if left <= 0:
            return timed_out(f"memoryd did not answer recall within {settings['timeout']} s")
        argv = [*argv, "--timeout", f"{left:.3f}"]
    if settings is not None and "stdin" in settings:  # the prompt was read from stdin already: after "--", so
        argv = [a for a in argv if a != "-"] + ["--", settings["stdin"]]  # one that starts with "-" is no option
    from memoryd_client.cli import main as full

    return full(["recall", *argv])  # click exits itself
