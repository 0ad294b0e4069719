"""What memctl prints for `--help` and for a wrong command line (as click did: `Usage: ...`, `Error: ...`), from the
commands as memoryd_client.memctl declares them. Imported only to print one of those."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from memoryd_client.command_line import Command, Option, UsageError

HELP_WIDTH = 100


def usage(command: Command, path: Sequence[str]) -> str:
    args = " ".join(a.metavar if a.required else f"[{a.metavar}]" for a in command.arguments)
    tail = "COMMAND [ARGS]..." if command.children else args
    return " ".join(["Usage:", *path, "[OPTIONS]", *([tail] if tail else [])])


def error_text(root: Command, error: UsageError) -> str:
    """What a wrong command line prints (on stderr, exit code 2), as click did."""
    command = find(root, error.path)
    where = " ".join(error.path)
    return f"{usage(command, error.path)}\nTry '{where} --help' for help.\n\nError: {error.message}"


def find(root: Command, path: Sequence[str]) -> Command:
    command = root
    for name in path[1:]:
        command = command.children[name]
    return command


def help_text(root: Command, path: Sequence[str], width: int = HELP_WIDTH) -> str:
    """The help of the command at `path` (from memctl down): its usage, what it does, its options and their help
    (bounds and defaults in brackets), and its subcommands."""
    command = find(root, path)
    lines = [usage(command, path), ""]
    lines += textwrap.wrap(command.help, width - 2, initial_indent="  ", subsequent_indent="  ")
    rows = []
    seen: list[Option] = []
    for option in command.option_map().values():
        if option in seen:
            continue
        seen.append(option)
        flags = ", ".join(option.flags) if option.kind != "switch" else f"{option.flags[0]} / {option.negations[0]}"
        notes = [option.bounds()] if option.kind in ("int", "float") and option.bounds() else []
        notes += [f"default: {option.default}"] if option.shown else []
        text = option.help + (f"  [{'; '.join(notes)}]" if notes else "")
        rows.append((f"{flags} {option.metavar()}".rstrip(), text))
    lines += ["", "Options:", *_table(rows, width)]
    if command.children:
        rows = [(name, child.help.split(". ")[0].rstrip(".") + ".") for name, child in sorted(command.children.items())]
        lines += ["", "Commands:", *_table(rows, width)]
    return "\n".join(lines)


def _table(rows: list[tuple[str, str]], width: int) -> list[str]:
    column = min(max(len(left) for left, _ in rows), 30) + 4
    out = []
    for left, text in rows:
        wrapped = textwrap.wrap(text, max(width - column, 30)) or [""]
        if len(left) + 4 > column:
            out.append(f"  {left}")
            out += [" " * column + line for line in wrapped]
        else:
            out.append(f"  {left.ljust(column - 2)}{wrapped[0]}")
            out += [" " * column + line for line in wrapped[1:]]
    return out
