"""memctl's entry point: its commands, declared once and read by memctl's one parser (memoryd_client.command_line).

    memctl [--socket S] [--agent A] [--json] [--timeout T] COMMAND [ARGS]... [OPTIONS]

A protocol method's options are its parameters in memoryd_client.protocol.schema. Each command runs a function
that is imported only when it is the one given (memoryd_client.commands, .hooks, .integrations.commands), and
every call to the daemon goes through the stub (memoryd_client.stub)."""

from __future__ import annotations

import sys

from memoryd_client.command_line import Argument, Command, Exit, HelpWanted, Option, UsageError, parse, schema_options

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: not one module more on every prompt
    from collections.abc import Callable, Sequence

TIMEOUT = 30.0  # seconds to wait for an answer
RECALL_TIMEOUT = 5.0  # for all of a recall, its prompt on stdin included


def _common() -> list[Option]:
    """--agent, --socket and --json, on every command that asks the daemon (also taken before its name)."""
    return [
        Option(("-a", "--agent"), "agent", help="Agent id (default: the daemon's default agent)."),
        Option(("--socket",), "socket", help="Daemon socket path (default: $MEMORYD_SOCKET, else memoryd's)."),
        Option(("--json",), "json", "flag", "Print the raw JSON result.", default=False),
    ]


def _global() -> list[Option]:
    seconds = Option(
        ("--timeout",), "timeout", "float", "Seconds to wait for an answer.", default=TIMEOUT, gt=0, show_default=True
    )
    return [*_common(), seconds]


def _with_common(*methods: str, extra: Sequence[Option] = ()) -> Callable[[], list[Option]]:
    return lambda: [*(o for m in methods for o in schema_options(m)), *extra, *_common()]


def _recall_options() -> list[Option]:
    seconds = Option(
        ("--timeout",),
        "timeout",
        "float",
        "Seconds for all of it, reading a prompt from stdin included.",
        default=RECALL_TIMEOUT,
        gt=0,
        show_default=True,
    )
    log = Option(
        ("--log",),
        "log",
        "flag",
        "Print what recall put before which prompt (--session, --limit, --skipped), not a recall.",
        default=False,
    )
    return [*schema_options("recall"), log, *schema_options("recall_log"), seconds, *_common()]


def _mcp_options() -> list[Option]:
    return [
        Option(
            ("--budget",),
            "budget",
            "int",
            "Characters of snippets per search answer.",
            default=4000,
            show_default=True,
        ),
        Option(("--autostart",), "autostart", "flag", "Start the daemon when it is not running.", default=False),
        Option(
            ("--http",),
            "http_port",
            "int",
            "Serve streamable HTTP on 127.0.0.1:PORT, to requests bearing the token it names.",
        ),
        *_common(),
    ]


def _hook_options() -> list[Option]:
    return [
        Option(("-a", "--agent"), "agent", help="The agent whose memory it uses."),
        Option(("--socket",), "socket", help="Daemon socket path."),
        Option(("--log",), "log", "flag", "Print the hooks' log file's path.", default=False),
    ]


def _platforms() -> list[str]:
    from memoryd_client.integrations import INSTALLERS

    return sorted(INSTALLERS)


PLATFORM = Argument("platform", choices=_platforms)
INTEGRATIONS = "memoryd_client.integrations.commands"
EDITS = "memoryd_client.edit_commands"
MEMCTL = Command(
    "memctl",
    "Search, read and write an agent's memory through the memoryd daemon.",
    options=_global,
    children=[
        Command(
            "search",
            "Search memory: score, citation and snippet per hit. A QUERY of '-' is read from stdin.",
            arguments=[Argument("query", many=True)],
            options=_with_common("search"),
            run="memoryd_client.commands:search",
        ),
        Command(
            "recall",
            "The memories worth putting before PROMPT ('-': read from stdin), as one block, or nothing; --log: what "
            "it put before which prompt.",
            arguments=[Argument("prompt", required=False, many=True)],
            options=_recall_options,
            run="memoryd_client.commands:recall",
        ),
        Command(
            "get",
            "Print lines of a memory file: PATH, PATH:FROM or PATH:FROM-TO (or a citation, PATH#LFROM-LTO).",
            arguments=[Argument("location")],
            options=_with_common(),
            run="memoryd_client.commands:get",
        ),
        Command(
            "write",
            "Append TEXT (or '-' for stdin) to a Markdown note and index it.",
            arguments=[Argument("text")],
            options=_with_common("write"),
            run="memoryd_client.commands:write",
        ),
        Command(
            "forget",
            "Forget a CITATION's lines (path#L3-L5) or a whole note; or, with --query, what a search finds, once you "
            "confirm the matches (--yes: without asking). Undo with `memctl undo`.",
            arguments=[Argument("target", required=False, many=True)],
            options=_with_common(
                "forget", extra=[Option(("-y", "--yes"), "yes", "flag", "Forget a query's matches without asking.")]
            ),
            run=EDITS + ":forget",
        ),
        Command(
            "edit",
            "Replace a CITATION's lines (path#L3-L5): with --text (or '-' for stdin), else in $EDITOR. Nothing is "
            "written when the lines changed since they were read.",
            arguments=[Argument("citation")],
            options=_with_common(
                extra=[
                    Option(("--text",), "text", help="The new text ('-': read from stdin; empty: remove the lines)."),
                    Option(("--expect",), "expect", help="What you saw there (text or sha256:...); default: read now."),
                ]
            ),
            run=EDITS + ":edit",
        ),
        Command(
            "undo",
            "Undo the last forget, edit or supersede (-n: the last N), newest first.",
            options=_with_common("undo"),
            run=EDITS + ":undo",
        ),
        Command(
            "changes",
            "The latest changes memoryd made to the notes, newest first.",
            options=_with_common("changes"),
            run=EDITS + ":changes",
        ),
        Command(
            "status", "Daemon and index state per agent.", options=_with_common(), run="memoryd_client.commands:status"
        ),
        Command(
            "sync", "Bring the index up to date now.", options=_with_common("sync"), run="memoryd_client.commands:sync"
        ),
        Command(
            "reindex",
            "Rebuild the index atomically (searches keep working meanwhile), with a progress bar.",
            options=_with_common(
                extra=[Option(("--no-wait",), "no_wait", "flag", "Start it and return.", default=False)]
            ),
            run="memoryd_client.commands:reindex",
        ),
        Command("agents", "The daemon's agents.", options=_with_common(), run="memoryd_client.commands:agents"),
        Command(
            "notes",
            "The files memory holds, newest first, with their dates (--path: a folder, or one file and its chunks).",
            options=_with_common("notes"),
            run="memoryd_client.commands:notes",
        ),
        Command(
            "ui",
            "Open the daemon's web page (search, notes, recall log, status) in the browser, with its token.",
            options=_with_common(
                extra=[Option(("--print",), "print_url", "flag", "Print the address instead of opening it.")]
            ),
            run="memoryd_client.commands:ui",
        ),
        Command(
            "mcp",
            "Run an MCP server (stdio) with memory_search, memory_get, memory_write, memory_forget, memory_update and "
            "memory_status.",
            options=_mcp_options,
            run="memoryd_client.commands:mcp",
        ),
        Command(
            "prompt",
            'Print the "Memory recall" section for an agent\'s system prompt.',
            run="memoryd_client.commands:prompt",
        ),
        Command(
            "hook",
            "Run an agent platform's hook: memctl hook PLATFORM EVENT, input on stdin (memctl hook --help).",
            arguments=[Argument("words", required=False, many=True)],
            options=_hook_options,
            run="memoryd_client.hooks:main",
            lenient=True,
        ),
        Command(
            "integrations",
            "Put memoryd in an agent platform's loop (recall on every prompt, sessions captured), or take it out.",
            children=[
                Command(
                    "install",
                    "Install PLATFORM's integration (claude-code, codex, opencode, openclaw).",
                    arguments=[PLATFORM],
                    options=lambda: [
                        Option(
                            ("-a", "--agent"),
                            "agent",
                            help="The agent whose memory it uses (default: the default agent).",
                        )
                    ],
                    run=f"{INTEGRATIONS}:install",
                ),
                Command(
                    "remove",
                    "Remove PLATFORM's integration: the files it installed, nothing else.",
                    arguments=[PLATFORM],
                    run=f"{INTEGRATIONS}:remove",
                ),
                Command(
                    "status",
                    "Which integrations are installed, and when their hooks last reached the daemon.",
                    options=lambda: [
                        Option(("--json",), "json", "flag", "Print JSON.", default=False),
                        Option(("--socket",), "socket", help="Daemon socket path."),
                    ],
                    run=f"{INTEGRATIONS}:status",
                ),
            ],
        ),
    ],
)


def help_text(*path: str) -> str:
    """What `memctl PATH... --help` prints."""
    from memoryd_client.command_help import help_text as text

    return text(MEMCTL, ["memctl", *path])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command `argv` (default: the process's arguments) names; its exit code."""
    if argv is None:
        signals = __import__("_signal")  # signal's C half: the signal module imports enum, a tenth of a search
        if hasattr(signals, "SIGPIPE"):  # `memctl search x | head -1`: end quietly, as cat does
            signals.signal(signals.SIGPIPE, signals.SIG_DFL)
    try:
        parsed = parse(sys.argv[1:] if argv is None else argv, MEMCTL)
        module, _, function = parsed.command.run.partition(":")
        return int(getattr(__import__(module, fromlist=[function]), function)(parsed))
    except HelpWanted as wanted:
        print(help_text(*wanted.path[1:]))
        return 0
    except UsageError as error:  # from the parser, or a command that found a value wrong
        from memoryd_client.command_help import error_text

        print(error_text(MEMCTL, error), file=sys.stderr)
        return 2
    except Exit as done:
        return done.code


if __name__ == "__main__":
    sys.exit(main())
