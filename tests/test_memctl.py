"""memctl as a user runs it: a subprocess talking to a real daemon."""

from __future__ import annotations

import json
import os
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
    score, citation = first.split()
    assert float(score) > 0 and citation == "MEMORY.md#L1-L2"
    assert "We decided to use JWT" in out.stdout and "1 result," in out.stdout.splitlines()[-1]
    raw = json.loads(memctl(running, "search", "--json", "-n", "1", "Stripe").stdout)
    assert raw["results"][0]["citation"] == "MEMORY.md#L4-L5" and len(raw["results"]) == 1


def test_get_write_status_sync_agents(running: d.Daemon) -> None:
    assert memctl(running, "get", "MEMORY.md:4-5").stdout.strip() == "# Billing\nStripe for invoices."
    assert memctl(running, "get", "MEMORY.md#L1-L1").stdout.strip() == "# Auth"
    wrote = memctl(running, "write", "-", "--path", "ideas.md", stdin="Try a kanban board for chores\n")
    assert wrote.returncode == 0 and wrote.stdout.strip() == "wrote memory/ideas.md#L1-L1"
    assert "memory/ideas.md#L1-L1" in memctl(running, "search", "kanban chores").stdout
    status = memctl(running, "status")
    assert "main: 2 files" in status.stdout and "watcher watching" in status.stdout
    agent = json.loads(memctl(running, "--json", "status").stdout)["agents"][0]
    assert agent["files"] == 2
    assert "indexed" in memctl(running, "sync").stdout
    assert json.loads(memctl(running, "agents", "--json").stdout)[0]["id"] == "main"
    re = memctl(running, "reindex")
    assert re.returncode == 0 and re.stdout.startswith("reindexed main: 2 files")


def test_errors_are_one_clear_line(running: d.Daemon) -> None:
    down = memctl(None, "search", "x")
    assert down.returncode == 3
    assert down.stderr.strip().count("\n") == 0 and "memoryd run" in down.stderr
    bad = memctl(running, "get", "../../etc/passwd")
    assert bad.returncode == 1 and "not a file inside" in bad.stderr and "Traceback" not in bad.stderr
    ghost = memctl(running, "search", "--agent", "ghost", "x")
    assert ghost.returncode == 1 and "unknown agent" in ghost.stderr
    latin1 = os.fsdecode(b"caf\xe9")  # an argument typed in another encoding than UTF-8
    for args in (("search", latin1), ("search", latin1, "--explain"), ("write", latin1)):  # quick path, click
        out = memctl(running, *args)
        assert out.returncode == 1 and "not valid UTF-8" in out.stderr and "Traceback" not in out.stderr, args


def test_a_prompt_read_from_stdin_is_never_an_option() -> None:
    """`memctl recall -` reads the prompt once; when the quick path cannot answer, the full command line gets it as
    the prompt, even when it starts with a dash (a Markdown bullet, a pasted flag)."""
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


def test_memctl_stays_thin() -> None:
    code = (
        "import sys, memoryd_client.memctl; heavy = {'apsw', 'llama_cpp', 'structlog', 'sqlite3', 'numpy', 'pydantic'};"
        "light = ('memoryd', 'memoryd_client', 'memoryd_client.protocol');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy"
        " or (m.startswith('memoryd') and not m.startswith(light[1:]) and m != 'memoryd')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_plain_search_runs_without_click_and_prints_what_the_full_cli_prints(running: d.Daemon) -> None:
    argv = ["--socket", str(running.socket), "search", "JWT", "expiry", "-n", "3", "--mode", "keyword"]
    code = "import sys; from memoryd_client.memctl import main; "
    code += f"code = main({argv!r}); print('click' in sys.modules, code)"
    quick = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert quick.stdout.splitlines()[-1] == "False 0"
    full = memctl(running, "search", "JWT", "expiry", "-n", "3", "--mode=keyword")  # `=`: the full command line
    assert full.returncode == 0, full.stderr

    def without_timing(text: str) -> list[str]:
        return [line.split(" ms)")[-1] if " result" in line and " ms)" in line else line for line in text.splitlines()]

    assert without_timing(quick.stdout)[:-1] == without_timing(full.stdout)
    as_json = [
        json.loads(memctl(running, *args).stdout)
        for args in (("search", "--json", "Stripe"), ("--json", "search", "Stripe", "--mode=hybrid"))
    ]
    assert as_json[0]["results"] == as_json[1]["results"]
    # what the quick path does not take goes to click, which says what is wrong
    bad = memctl(running, "search", "-n", "many", "JWT")
    assert bad.returncode == 2 and "'many' is not a valid integer" in bad.stderr
    assert "Search memory" in memctl(running, "search", "--help").stdout
    negative = memctl(running, "--timeout", "-1", "search", "JWT")
    assert negative.returncode == 2 and "--timeout" in negative.stderr and "Traceback" not in negative.stderr


@pytest.mark.parametrize(
    ("argv", "taken"),
    [
        (["search", "a", "b"], {"words": ["a", "b"]}),
        (
            ["--socket", "/s", "-a", "x", "--json", "search", "q", "-n", "3"],
            {"socket": "/s", "agent": "x", "max_results": 3},
        ),
        (
            ["search", "q", "--mode", "vector", "--min-score", "0.5", "--agent", "y"],
            {"mode": "vector", "min_score": 0.5},
        ),
        (["--timeout", "5", "search", "-", "q"], {"timeout": 5.0, "words": ["-", "q"]}),
        (["search", "q", "--mode", "fuzzy"], None),
        (["search", "q", "-n"], None),
        (["search", "q", "-n5"], None),
        (["search", "q", "--explain"], None),
        (["search", "--", "-q"], None),
        (["search"], None),
        (["search", "q", "--timeout", "5"], None),
        (["--timeout", "0", "search", "q"], None),
        (["--timeout", "nan", "search", "q"], None),
        (["get", "MEMORY.md"], None),
        (["--help"], None),
        ([], None),
    ],
)
def test_the_quick_path_takes_only_plain_searches(argv: list[str], taken: dict[str, object] | None) -> None:
    from memoryd_client.memctl import quick_search_args

    got = quick_search_args(argv)
    if taken is None:
        assert got is None
    else:
        assert got is not None and {k: got[k] for k in taken} == taken


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
