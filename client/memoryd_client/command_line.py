"""memctl's command line: one small parser for every command, its options declared as data (the protocol methods'
options, their types, bounds, choices and help are the schema's, memoryd_client.protocol.schema); and a command's
standard input, read to a deadline.

It is memctl's only parser: agents run `memctl search`, `memctl recall` and `memctl hook` on every prompt, a
Python process spends most of such a run starting up, and click alone was 50 of ~90 ms of a search. This module
imports nothing beyond the interpreter's core; what help and errors print is memoryd_client.command_help's."""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is a fifth of a hook's start-up
    from collections.abc import Callable, Sequence
    from typing import Any

    from memoryd_client.protocol.request import Param


class UsageError(Exception):
    """The command line is wrong: said in one line under the command's usage, exit code 2."""

    def __init__(self, message: str, path: Sequence[str]) -> None:
        super().__init__(message)
        self.message, self.path = message, list(path)


class HelpWanted(Exception):
    """-h/--help: the help of the command at `path`."""

    def __init__(self, path: Sequence[str]) -> None:
        super().__init__(" ".join(path))
        self.path = list(path)


class Exit(Exception):
    """A command ends with this exit code; what it had to say is printed already."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Option:
    """One option. `kind`: text, int, float or choice (they take a value), flag (true when given) or switch
    (`--x` true, `--no-x` false, None when neither). `many`: repeated, its values a list. Bounds `ge`, `le` and
    `gt` are checked as given."""

    __slots__ = ("choices", "default", "dest", "flags", "ge", "gt", "help", "kind", "le", "many", "negations", "shown")

    def __init__(
        self,
        flags: Sequence[str],
        dest: str,
        kind: str = "text",
        help: str = "",
        *,
        default: Any = None,
        choices: Sequence[str] | None = None,
        ge: float | None = None,
        le: float | None = None,
        gt: float | None = None,
        many: bool = False,
        show_default: bool = False,
    ) -> None:
        self.flags, self.dest, self.kind, self.help, self.default = tuple(flags), dest, kind, help, default
        self.choices, self.ge, self.le, self.gt, self.many = choices, ge, le, gt, many
        self.negations = tuple(f"--no-{f[2:]}" for f in self.flags if f.startswith("--")) if kind == "switch" else ()
        self.shown = show_default

    @property
    def takes_value(self) -> bool:
        return self.kind not in ("flag", "switch")

    def label(self) -> str:
        return " / ".join(f"'{f}'" for f in (*self.flags, *self.negations))

    def bounds(self) -> str:
        """The range of values it takes, as click writes it: 1<=x<=200, x>0, x<=1; "" when any value is one."""
        low = f"{self.gt:g}<" if self.gt is not None else f"{self.ge:g}<=" if self.ge is not None else ""
        high = f"<={self.le:g}" if self.le is not None else ""
        if low and not high:
            return f"x>{self.gt:g}" if self.gt is not None else f"x>={self.ge:g}"
        return f"{low}x{high}" if low or high else ""

    def convert(self, raw: str) -> Any:
        """The value of `raw`, or ValueError saying why it is none."""
        if self.kind == "choice":
            if self.choices is None or raw not in self.choices:
                raise ValueError(f"{raw!r} is not one of {', '.join(repr(c) for c in self.choices or ())}.")
            return raw
        if self.kind not in ("int", "float"):
            return raw
        try:
            value: float = int(raw) if self.kind == "int" else float(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a valid {'integer' if self.kind == 'int' else 'float'}.") from None
        finite = value == value and value not in (float("inf"), float("-inf"))
        low = (self.ge is None or value >= self.ge) and (self.gt is None or value > self.gt)
        if self.bounds() and not (finite and low and (self.le is None or value <= self.le)):
            raise ValueError(f"{value} is not in the range {self.bounds()}.")
        return value

    def metavar(self) -> str:
        if self.choices is not None and self.kind == "choice":
            return f"[{'|'.join(self.choices)}]"
        return {"int": "INTEGER", "float": "FLOAT", "text": "TEXT"}.get(self.kind, "")


class Argument:
    """A positional argument: one value, or (`many`) all that are left, at least one when `required`."""

    __slots__ = ("choices", "dest", "many", "metavar", "required")

    def __init__(
        self,
        dest: str,
        *,
        many: bool = False,
        required: bool = True,
        choices: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        self.dest, self.many, self.required, self.choices = dest, many, required, choices
        self.metavar = dest.upper() + ("..." if many else "")


class Command:
    """A command: its help (the first sentence is its line in the list of commands), its arguments, its options
    (a function, called when the command is the one given), and either `run` ("module:function", imported only
    when it runs) or `children` (subcommands). A `lenient` command takes whatever it is given: an unknown option
    is an argument and a missing value is "" (a hook's arguments are the installer's, and it must never fail)."""

    __slots__ = ("_options", "arguments", "children", "help", "lenient", "name", "options", "run")

    def __init__(
        self,
        name: str,
        help: str,
        *,
        arguments: Sequence[Argument] = (),
        options: Callable[[], list[Option]] | None = None,
        run: str = "",
        children: Sequence[Command] = (),
        lenient: bool = False,
    ) -> None:
        self.name, self.help, self.arguments, self.run, self.lenient = name, help, tuple(arguments), run, lenient
        self.options = options
        self.children = {child.name: child for child in children}
        self._options: dict[str, Option] | None = None

    def option_map(self) -> dict[str, Option]:
        """The command's options by flag, -h/--help among them."""
        if self._options is None:
            found = [*(self.options() if self.options else []), HELP]
            self._options = {flag: o for o in found for flag in (*o.flags, *o.negations)}
        return self._options

    def defaults(self) -> dict[str, Any]:
        return {o.dest: o.default for o in self.option_map().values()}


HELP = Option(("-h", "--help"), "help", "flag", "Show this message and exit.", default=False)


class Parsed:
    """What the command line asks for: the command (`path` from memctl down) and every value by its name, the
    defaults of those not given included."""

    __slots__ = ("command", "path", "values")

    def __init__(self, command: Command, path: list[str], values: dict[str, Any]) -> None:
        self.command, self.path, self.values = command, path, values

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def schema_values(self, method: str) -> dict[str, Any]:
        """The values of `method`'s parameters that memctl offers (memoryd_client.protocol.schema), by name."""
        from memoryd_client.protocol.schema import METHODS

        return {p.name: self.values[p.name] for p in METHODS[method].params if p.cli is not None}


def schema_options(method: str) -> list[Option]:
    """memctl's options for a protocol method's parameters, as the schema declares them."""
    from memoryd_client.protocol.schema import METHODS

    return [_schema_option(spec) for spec in METHODS[method].params if spec.cli is not None]


def _schema_option(spec: Param) -> Option:
    flags = spec.cli or (f"--{(spec.wire or spec.name).replace('_', '-')}",)
    if spec.scalar == "bool":
        return Option(flags, spec.name, "switch" if spec.default is None else "flag", spec.help, default=spec.default)
    if spec.choices:
        kind = "choice"
    elif spec.scalar == "int":
        kind = "int"
    elif spec.scalar == "float" and "str" not in spec.types:
        kind = "float"
    else:
        kind = "text"
    return Option(flags, spec.name, kind, spec.help, choices=spec.choices, ge=spec.ge, le=spec.le, many=spec.many)


def parse(argv: Sequence[str], root: Command) -> Parsed:
    """The command and values `argv` asks for; UsageError when it is wrong, HelpWanted for -h/--help. Options go
    anywhere after their command's name (a group's before its subcommand's), as `--name value`, `--name=value` or
    `-nVALUE`; `--` ends them; `-` is an argument."""
    command, path = root, [root.name]
    values, given = root.defaults(), set()
    words: list[str] = []
    i, options_end = 0, False
    while i < len(argv):
        token = argv[i]
        i += 1
        if options_end or token == "-" or not token.startswith("-"):
            if command.children and not words:
                if token not in command.children:
                    raise UsageError(f"No such command {token!r}.", path)
                command = command.children[token]
                path.append(token)
                values.update({k: v for k, v in command.defaults().items() if k not in given})
            else:
                words.append(token)
            continue
        if token == "--":
            options_end = True
            continue
        options = command.option_map()
        name, equals, attached = token.partition("=") if token.startswith("--") else (token[:2], "", token[2:])
        option = options.get(name)
        if option is None:
            if command.lenient:
                words.append(token)
                continue
            raise UsageError(_no_such_option(name, options), path)
        if option is HELP and not command.lenient:
            raise HelpWanted(path)
        if option.takes_value:
            if equals or attached:
                raw = attached
            elif i < len(argv):
                raw, i = argv[i], i + 1
            elif command.lenient:
                raw = ""
            else:
                raise UsageError(f"Option {name!r} requires an argument.", path)
            try:
                value = option.convert(raw)
            except ValueError as exc:
                if command.lenient:
                    continue
                raise UsageError(f"Invalid value for {option.label()}: {exc}", path) from None
            values[option.dest] = [*(values.get(option.dest) or ()), value] if option.many else value
        elif equals and not command.lenient:
            raise UsageError(f"Option {name!r} does not take a value.", path)
        elif attached and not command.lenient:
            raise UsageError(_no_such_option(token, options), path)
        else:
            values[option.dest] = name not in option.negations
        given.add(option.dest)
    if command.children:
        raise UsageError("Missing command.", path)
    values.update(_arguments(command, words, path))
    return Parsed(command, path, values)


def _arguments(command: Command, words: list[str], path: list[str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    left = list(words)
    for argument in command.arguments:
        if argument.required and not left:
            raise UsageError(f"Missing argument {argument.metavar!r}.", path)
        taken, left = (left, []) if argument.many else (left[:1], left[1:])
        choices = argument.choices() if argument.choices else ()
        wrong = [word for word in taken if choices and word not in choices]
        if wrong:
            allowed = ", ".join(repr(c) for c in choices)
            raise UsageError(f"Invalid value for {argument.metavar!r}: {wrong[0]!r} is not one of {allowed}.", path)
        found[argument.dest] = taken if argument.many else (taken[0] if taken else None)
    if left:
        s = "s" if len(left) > 1 else ""
        raise UsageError(f"Got unexpected extra argument{s} ({' '.join(left)})", path)
    return found


def _no_such_option(name: str, options: dict[str, Option]) -> str:
    from difflib import get_close_matches

    near = get_close_matches(name, [f for f in options if f.startswith("--")], n=1)
    return f"No such option: {name}" + (f" Did you mean {near[0]}?" if near else "")


def read_stdin(deadline: float, limit: int) -> bytes:
    """Standard input up to its end, or `limit` + 1 bytes (the caller sees it is over); TimeoutError at `deadline`
    (time.monotonic()), and b"" from a terminal or no stdin at all. `memctl recall -` and the hooks read theirs so:
    a writer that never closes its end holds them no longer than their time limit."""
    import select

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    if os.isatty(fd):
        return b""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
        except BlockingIOError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
