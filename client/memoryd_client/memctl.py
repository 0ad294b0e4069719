"""memctl's entry point: a thin command line for the memoryd daemon.

Agents call `memctl search` in loops, and a Python command line spends most of its run starting up: importing
click alone took half of a `memctl search` here (50 of ~90 ms on 2 slow cores). So the common form,

    memctl [--socket S] [--agent A] [--json] [--timeout T] search WORDS... [-n N] [--mode M] [--min-score S]
           [--json] [--agent A] [--socket S] (and any other one-valued option of memoryd_client.protocol.schema.Search)

runs without click, and every other call, or any option, form or value this path does not take as it is
(`--help`, `-n5`, `--mode=fuzzy`, `--explain`...), goes to the full command line in memoryd_client.cli, which
parses and reports errors for all of memctl. Both print through memoryd_client.render, so their output is the same.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from memoryd_client.protocol.schema import Param


def _seconds(value: str) -> float:
    seconds = float(value)
    if not seconds > 0:
        raise ValueError(value)
    return seconds


def _converter(spec: Param) -> Callable[[str], Any] | None:
    """How the fast path reads a value of this option; None: it leaves the option to the full command line."""
    if spec.many or spec.scalar == "bool" or len([t for t in spec.types if t != "None"]) > 1:
        return None
    if spec.choices:
        choices = spec.choices

        def choice(value: str) -> str:
            if value not in choices:
                raise ValueError(value)
            return value

        return choice
    return {"int": int, "float": float, "str": str}[spec.scalar]


def method_options(method: str) -> dict[str, tuple[str, Callable[[str], Any]]]:
    """The fast path's options for a method: its schema's one-valued parameters, by flag."""
    from memoryd_client.protocol.schema import METHODS

    options: dict[str, tuple[str, Callable[[str], Any]]] = {}
    for spec in METHODS[method].params:
        convert = _converter(spec) if spec.cli is not None else None
        if convert is not None:
            for flag in spec.cli or (f"--{spec.wire.replace('_', '-')}",):
                options[flag] = (spec.name, convert)
    return options


GLOBAL_OPTIONS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "--socket": ("socket", str),
    "--agent": ("agent", str),
    "-a": ("agent", str),
    "--timeout": ("timeout", _seconds),
}
SEARCH_OPTIONS = {**GLOBAL_OPTIONS, **method_options("search")}
del SEARCH_OPTIONS["--timeout"]


def quick_search_args(argv: Sequence[str]) -> dict[str, Any] | None:
    """The settings of a plain `search` call, or None for anything the full command line must parse."""
    settings: dict[str, Any] = {"json": False, "timeout": 30.0, "words": []}
    options, in_search = GLOBAL_OPTIONS, False
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--json":
            settings["json"] = True
        elif token in options:
            if i + 1 >= len(argv):
                return None
            name, convert = options[token]
            try:
                settings[name] = convert(argv[i + 1])
            except ValueError:
                return None
            i += 1
        elif token.startswith("-") and token != "-":
            return None
        elif not in_search:
            if token != "search":
                return None
            options, in_search = SEARCH_OPTIONS, True
        else:
            settings["words"].append(token)
        i += 1
    return settings if in_search and settings["words"] else None


def quick_search(settings: dict[str, Any]) -> int:
    from memoryd_client.render import failure, failure_json, search_text
    from memoryd_client.stub import ClientError, MemoryClient

    query = " ".join(settings["words"])
    if query == "-":
        query = sys.stdin.read()
    try:
        options = {k: v for k, v in settings.items() if k not in ("json", "timeout", "words", "socket")}
        with MemoryClient(settings.get("socket"), timeout=settings["timeout"]) as client:
            found = client.search(query, **options)
    except ClientError as exc:
        message, code = failure(exc)
        print(failure_json(exc) if settings["json"] else message, file=sys.stdout if settings["json"] else sys.stderr)
        return code
    if settings["json"]:
        import json

        print(json.dumps(found.raw, ensure_ascii=False, indent=2))
    else:
        print(search_text(found))
    return 0


# commands an agent runs on every prompt, each in a module of its own that never imports click
LIGHT_COMMANDS = {"recall": "memoryd_client.recall", "hook": "memoryd_client.hooks"}


def main(argv: Sequence[str] | None = None) -> int | None:
    import signal

    if argv is None and hasattr(signal, "SIGPIPE"):  # `memctl search x | head -1`: end quietly, as cat does
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in LIGHT_COMMANDS:
        import importlib

        return importlib.import_module(LIGHT_COMMANDS[args[0]]).main(args[1:])
    settings = quick_search_args(args)
    if settings is not None:
        return quick_search(settings)
    from memoryd_client.cli import main as full

    return full(args)  # click exits itself


if __name__ == "__main__":
    sys.exit(main())
