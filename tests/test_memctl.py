"""memctl as a user runs it: a subprocess talking to a real daemon."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model


NO_DAEMON_DATA = tempfile.mkdtemp(prefix="md-nodaemon-")


def memctl(daemon: d.Daemon | None, *args: str, stdin: str | None = None, socket: Path | None = None):  # type: ignore[no-untyped-def]
    sock = socket or (daemon.socket if daemon else Path("/nonexistent/memoryd.sock"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env["MEMORYD_DATA_DIR"] = NO_DAEMON_DATA  # a daemon the user runs on the default data dir is not ours
    return subprocess.run(
        [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(sock), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[d.Daemon]:
    tmp = tmp_path_factory.mktemp("memctl")
    ws = tmp / "ws"
    write(ws / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n\n# Billing\nStripe for invoices.\n")
    daemon = d.start(tmp, ws)
    yield daemon
    d.cleanup(daemon)


def test_search_prints_score_citation_and_snippet(running: d.Daemon) -> None:
    out = memctl(running, "search", "JWT", "expiry")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    score, citation, date = first.split()
    assert float(score) > 0 and citation == "MEMORY.md#L1-L2"
    assert re.fullmatch(r"\(\d{4}-\d{2}-\d{2}\)", date)  # MEMORY.md has no date of its own: the file's
    assert "We decided to use JWT" in out.stdout and "1 result," in out.stdout.splitlines()[-1]
    raw = json.loads(memctl(running, "search", "--json", "-n", "1", "Stripe").stdout)
    assert raw["results"][0]["citation"] == "MEMORY.md#L4-L5" and len(raw["results"]) == 1


def test_get_write_status_sync_agents(running: d.Daemon) -> None:
    assert memctl(running, "get", "MEMORY.md:4-5").stdout.strip() == "# Billing\nStripe for invoices."
    assert memctl(running, "get", "MEMORY.md#L1-L1").stdout.strip() == "# Auth"
    wrote = memctl(running, "write", "-", "--path", "ideas.md", stdin="Try a kanban board for chores\n")
    assert wrote.returncode == 0 and wrote.stdout.strip() == "wrote memory/ideas.md#L1-L1"
    again = memctl(running, "write", "Try a Kanban board for chores.", "--path", "ideas.md")  # the same fact
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "already in memory as memory/ideas.md#L1-L1; nothing written"
    assert "memory/ideas.md#L1-L1" in memctl(running, "search", "kanban chores").stdout
    status = memctl(running, "status")
    assert "main: 2 files" in status.stdout and "watcher watching" in status.stdout
    agent = json.loads(memctl(running, "--json", "status").stdout)["agents"][0]
    assert agent["files"] == 2
    assert "indexed" in memctl(running, "sync").stdout
    assert json.loads(memctl(running, "agents", "--json").stdout)[0]["id"] == "main"
    rebuilt = memctl(running, "reindex")
    assert rebuilt.returncode == 0 and rebuilt.stdout.startswith("reindexed main: 2 files")


def test_errors_are_one_clear_line(running: d.Daemon) -> None:
    down = memctl(None, "search", "x")
    assert down.returncode == 3
    assert down.stderr.strip().count("\n") == 0 and "memoryd run" in down.stderr
    bad = memctl(running, "get", "../../etc/passwd")
    assert bad.returncode == 1 and "not a file inside" in bad.stderr and "Traceback" not in bad.stderr
    ghost = memctl(running, "search", "--agent", "ghost", "x")
    assert ghost.returncode == 1 and "unknown agent" in ghost.stderr
    latin1 = os.fsdecode(b"caf\xe9")  # an argument typed in another encoding than UTF-8
    for args in (("search", latin1), ("search", latin1, "--explain"), ("write", latin1), ("recall", latin1)):
        out = memctl(running, *args)
        assert out.returncode == 1 and "not valid UTF-8" in out.stderr and "Traceback" not in out.stderr, args


def test_a_prompt_read_from_stdin_is_never_an_option() -> None:
    """`memctl recall -` reads the prompt from stdin once, as the prompt, even when it starts with a dash (a
    Markdown bullet, a pasted flag): it is never read as an option."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env.update(MEMORYD_DATA_DIR=NO_DAEMON_DATA, MEMORYD_SOCKET="/nonexistent/memoryd.sock")
    for prompt in ("- shipped the auth fix", "--help me recall the deploy", "-x"):
        out = subprocess.run(
            [sys.executable, "-m", "memoryd_client.memctl", "recall", "-"],
            input=prompt,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert out.returncode == 3 and "memoryd is not running" in out.stderr, (prompt, out.stderr)


THIN = "import sys; from memoryd_client.memctl import main; code = main(sys.argv[1:]); print(sorted(sys.modules))"
# what a run of the commands agents start on every prompt must not import: the daemon's dependencies, and what
# made a run slow (click, typing, the socket module and what it brings)
HEAVY = {"apsw", "llama_cpp", "structlog", "sqlite3", "numpy", "pydantic", "click", "typing", "socket", "threading"}


def imported(*argv: str, stdin: str = "", env: dict[str, str] | None = None) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", THIN, *argv], input=stdin, capture_output=True, text=True, check=True, env=env
    )
    return {m.strip("'") for m in out.stdout.splitlines()[-1].strip("[]").split(", ")}


def test_memctl_stays_thin(running: d.Daemon) -> None:
    """One parser and one stack for every command: the stub carries the calls of search, recall and the hooks, and
    none of them imports the daemon's dependencies, click, typing or the socket module."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env.update(MEMORYD_SOCKET=str(running.socket), MEMORYD_DATA_DIR=str(running.data_dir))
    prompt = json.dumps({"prompt": "what did we decide about JWT expiry?"})
    runs = {
        "search": imported("search", "JWT", env=env),
        "recall": imported("recall", "what did we decide about JWT expiry?", env=env),
        "recall -": imported("recall", "-", stdin="what did we decide about JWT expiry?", env=env),
        "hook": imported("hook", "claude-code", "user-prompt-submit", stdin=prompt, env=env),
    }
    for name, modules in runs.items():
        assert "memoryd_client.stub" in modules, name
        heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith("memoryd."))
        assert heavy == [], (name, heavy)
    assert "enum" not in runs["search"] | runs["recall"]  # the hooks read JSON, whose decoder imports re and enum


def test_every_form_of_a_search_prints_the_same(running: d.Daemon) -> None:
    """Options before or after the command and the words, `--name value`, `--name=value`, `-nVALUE`: one parser
    reads them all, and the output is the same."""

    def without_timing(text: str) -> list[str]:
        return [line.split(" ms)")[-1] if " result" in line and " ms)" in line else line for line in text.splitlines()]

    forms = [
        ("search", "JWT", "expiry", "-n", "3", "--mode", "keyword"),
        ("search", "-n3", "--mode=keyword", "JWT", "expiry"),
        ("--agent", "main", "search", "JWT", "--max-results=3", "expiry", "--mode", "keyword"),
        ("search", "--mode", "keyword", "--", "JWT", "expiry", "-n", "3"),  # after --, words
    ]
    outputs = [memctl(running, *form) for form in forms]
    assert all(out.returncode == 0 for out in outputs), [out.stderr for out in outputs]
    assert len({tuple(without_timing(out.stdout)) for out in outputs[:3]}) == 1
    assert "MEMORY.md#L1-L2" in outputs[0].stdout
    as_json = [
        json.loads(memctl(running, *args).stdout)
        for args in (("search", "--json", "Stripe"), ("--json", "search", "Stripe", "--mode=hybrid"))
    ]
    assert as_json[0]["results"] == as_json[1]["results"]
    assert "Search memory" in memctl(running, "search", "--help").stdout


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["search", "-n", "many", "JWT"], "Invalid value for '-n' / '--max-results': 'many' is not a valid integer."),
        (["search", "-n", "0", "JWT"], "0 is not in the range 1<=x<=200."),
        (["search", "--mode", "fuzzy", "JWT"], "'fuzzy' is not one of 'hybrid', 'keyword', 'vector'."),
        (["search", "--mdoe", "keyword", "JWT"], "No such option: --mdoe Did you mean --mode?"),
        (["search", "JWT", "-n"], "Option '-n' requires an argument."),
        (["search", "--explain=yes", "JWT"], "Option '--explain' does not take a value."),
        (["search"], "Missing argument 'QUERY...'."),
        (["search", "JWT", "--timeout", "5"], "No such option: --timeout"),
        (["--timeout", "-1", "search", "JWT"], "Invalid value for '--timeout': -1.0 is not in the range x>0."),
        (["--timeout", "nan", "search", "JWT"], "nan is not in the range x>0."),
        (["get", "a.md", "b.md"], "Got unexpected extra argument (b.md)"),
        (["get", "MEMORY.md:9-3"], "Invalid value for 'LOCATION': range 9-3 ends before it starts"),
        (["write", "x", "--importance", "2"], "2.0 is not in the range 0<=x<=1."),
        (["serach", "JWT"], "No such command 'serach'."),
        (["integrations", "install", "emacs"], "'emacs' is not one of 'claude-code', 'codex', 'openclaw', 'opencode'."),
        ([], "Missing command."),
    ],
)
def test_a_wrong_command_line_says_what_is_wrong(argv: list[str], says: str) -> None:
    out = memctl(None, *argv)
    assert out.returncode == 2 and out.stdout == "", out
    last = out.stderr.rstrip().splitlines()[-1]
    assert out.stderr.startswith("Usage: memctl") and last.startswith("Error: ") and last.endswith(says), out.stderr


@pytest.mark.parametrize(
    ("argv", "taken"),
    [
        (["search", "a", "b"], {"query": ["a", "b"], "timeout": 30.0, "json": False, "agent": None}),
        (
            ["--socket", "/s", "-a", "x", "--json", "search", "q", "-n", "3"],
            {"socket": "/s", "agent": "x", "json": True, "max_results": 3, "query": ["q"]},
        ),
        (["search", "q", "--agent", "y", "--min-score", "0.5"], {"agent": "y", "min_score": 0.5}),
        (["search", "q", "--source", "memory", "--source", "sessions"], {"sources": ["memory", "sessions"]}),
        (["search", "q", "--type", "lore", "--no-mmr", "--explain"], {"type": ["lore"], "mmr": False, "explain": True}),
        (["search", "q"], {"type": None, "mmr": None, "decay": None, "explain": False, "max_results": None}),
        (["search", "-", "q"], {"query": ["-", "q"]}),
        (["search", "--", "-q"], {"query": ["-q"]}),
        (["--timeout", "5", "search", "q"], {"timeout": 5.0}),
        (["recall", "hi", "there"], {"prompt": ["hi", "there"], "timeout": 5.0}),
        (["--timeout", "3", "recall", "hi"], {"timeout": 3.0}),
        (["recall", "hi", "--timeout", "0.5", "--budget", "64", "--session", "s"], {"timeout": 0.5, "budget": 64}),
        (["write", "-", "--type", "semantic", "--path", "x.md"], {"text": "-", "type": "semantic", "path": "x.md"}),
        (["sync", "--force"], {"force": True}),
        (["reindex", "--no-wait"], {"no_wait": True}),
        (["mcp", "--http", "8080"], {"http_port": 8080, "budget": 4000, "autostart": False}),
        (["integrations", "install", "codex", "-a", "me"], {"platform": "codex", "agent": "me"}),
        # a hook takes what the installer wrote, and anything else, without failing
        (["hook", "codex", "stop", "--agent", "me", "{}"], {"words": ["codex", "stop", "{}"], "agent": "me"}),
        (["hook", "claude-code", "--bogus", "x", "--agent"], {"words": ["claude-code", "--bogus", "x"], "agent": ""}),
        (["hook", "--help"], {"help": True, "words": []}),
    ],
)
def test_the_parser_reads_each_command_from_the_schema(argv: list[str], taken: dict[str, object]) -> None:
    from memoryd_client.command_line import parse
    from memoryd_client.memctl import MEMCTL

    got = parse(argv, MEMCTL).values
    assert {k: got[k] for k in taken} == taken


def test_every_schema_option_is_offered_with_its_help() -> None:
    from memoryd_client.memctl import help_text
    from memoryd_client.protocol.schema import METHODS

    for method, command in (("search", "search"), ("recall", "recall"), ("write", "write"), ("sync", "sync")):
        shown = " ".join(help_text(command).split())
        for spec in METHODS[method].params:
            if spec.cli is not None:
                flag = (spec.cli or (f"--{(spec.wire or spec.name).replace('_', '-')}",))[-1]
                assert flag in shown and spec.help.split(" (")[0][:30] in shown, (method, spec.name)


def test_search_filters_explain_and_typed_write(running: d.Daemon) -> None:
    wrote = memctl(
        running,
        "write",
        "Bob's birthday is on March 3rd.",
        "--path",
        "people.md",
        "--type",
        "semantic",
        "--importance",
        "0.9",
    )
    assert wrote.returncode == 0, wrote.stderr
    out = memctl(running, "search", "--explain", "--path", "memory/people.md", "birthday")
    assert out.returncode == 0, out.stderr
    assert "memory/people.md#L1-L2" in out.stdout and "importance 1.400" in out.stdout and "-> " in out.stdout
    none = memctl(running, "search", "--after", "2999-01-01", "birthday")
    assert none.returncode == 0 and none.stdout.startswith("no results")
    bad = memctl(running, "search", "--after", "someday", "birthday")
    assert bad.returncode == 1 and "'after' must be a date" in bad.stderr


def test_get_keeps_paths_that_hold_dash_l_or_a_colon(running: d.Daemon) -> None:
    """`-L` inside a name was rewritten to `-` wherever it stood (memory/x-Lists.md became memory/x-ists.md)."""
    write(running.workspace / "memory" / "x-Lists.md", "# Lists\nfirst\nsecond\nthird\n")
    write(running.workspace / "memory" / "a:b.md", "# Colon\nkept\n")
    assert memctl(running, "get", "memory/x-Lists.md").stdout.strip() == "# Lists\nfirst\nsecond\nthird"
    assert memctl(running, "get", "memory/x-Lists.md#L2-L3").stdout.strip() == "first\nsecond"
    assert memctl(running, "get", "memory/x-Lists.md:3").stdout.strip() == "second\nthird"
    assert memctl(running, "get", "memory/a:b.md").stdout.strip() == "# Colon\nkept"


def test_memctl_edges_stdin_query_json_errors_and_a_closed_pipe(running: d.Daemon) -> None:
    base = [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(running.socket)]
    piped = subprocess.run([*base, "search", "-"], input="JWT expiry", capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and "MEMORY.md#L1-L2" in piped.stdout
    failed = subprocess.run([*base, "--json", "get", "memory/none.md"], capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["error"]["code"] == "invalid_params"
    past = subprocess.run([*base, "get", "MEMORY.md:99-120"], capture_output=True, text=True, timeout=60)
    assert past.returncode == 1 and "past its end" in past.stderr
    reader, writer = os.pipe()
    os.close(reader)  # like `| head -1` once head has gone
    with os.fdopen(writer, "w") as out:
        closed = subprocess.run([*base, "search", "JWT"], stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)
    assert "Traceback" not in closed.stderr and "BrokenPipe" not in closed.stderr
