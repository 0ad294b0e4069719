"""Forget, update, supersede and undo (issue 45) through a real daemon over its Unix socket: the RPC, memctl and the
MCP tools; what was forgotten stays gone through a restart, a reindex and `memoryd store migrate`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd_client.stub import MemoryClient, RemoteError

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes and subprocesses

NOTE = (
    "# Services\n"
    "\n"
    "- billing uses Redis as the cache for invoices\n"
    "- the deploy queue is RabbitMQ with three workers\n"
    "\n"
    "- Alice drinks jasmine tea every morning at nine\n"
)


def turn(role: str, text: str) -> str:
    return json.dumps(
        {"type": "message", "timestamp": "2026-11-20T10:00:00Z", "message": {"role": role, "content": text}}
    )


TRANSCRIPT = [
    json.dumps({"type": "session", "id": "s1"}),
    turn("user", "Remember that my gym locker code is 4417, please."),
    turn("assistant", "Noted: your gym locker code is 4417."),
    turn("user", "We should repaint the garden fence in the spring."),
]


def agent_table(workspace: Path, store: Path | None = None) -> str:
    where = f'store = "{store}"\n' if store else ""
    return (
        f'[[agents]]\nid = "main"\nworkspace = "{workspace}"\nsources = ["memory", "sessions"]\n'
        f'sessions_dir = "{workspace / "sessions"}"\n{where}[agents.embedding]\nprovider = "hash"\n'
    )


def start(tmp: Path, workspace: Path, store: Path | None = None) -> d.Daemon:
    return d.start(tmp, workspace, extra=agent_table(workspace, store), agent=False, data_dir=tmp / "data")


def make_workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    write(ws / "memory" / "services.md", NOTE)
    write(ws / "sessions" / "chat.jsonl", "\n".join(TRANSCRIPT) + "\n")
    return ws


def texts(client: MemoryClient, query: str, path: str | None = None) -> str:
    """Every snippet of a keyword and a hybrid search, and what automatic recall gives the query (of one note's
    when `path` is given: the daemon is shared with other tests' notes)."""
    found = [
        hit.snippet
        for mode in ("keyword", "hybrid")
        for hit in client.search(query, mode=mode, max_results=20, path=path)
    ]
    recalled = client.recall(f"{query}?")
    if path is None:
        found.append(recalled["block"])
    for memory in recalled["memories"]:
        cited, _, lines = memory["citation"].partition("#L")
        if cited == path:
            first, _, last = lines.partition("-L")
            found.append(client.get(cited, int(first), int(last or first) - int(first) + 1)["text"])
    return "\n".join(found)


def assert_gone(client: MemoryClient) -> None:
    for query, text in (("which cache does billing use for invoices", "Redis"), ("gym locker code", "4417")):
        assert text not in texts(client, query), query
    assert "Redis" not in client.get("memory/services.md")["text"]
    assert "4417" not in client.get("sessions/chat.jsonl")["text"]
    assert client.get("sessions/chat.jsonl")["text"].split("\n")[1:3] == ["[forgotten]", "[forgotten]"]
    assert "repaint the garden fence" in texts(client, "repaint garden fence")
    assert "RabbitMQ" in texts(client, "deploy queue RabbitMQ")


def memoryd(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    return subprocess.run(
        [sys.executable, "-m", "memoryd.daemon.cli", *args], capture_output=True, text=True, timeout=300, env=env
    )


def test_forgotten_is_gone_at_once_and_stays_gone_through_restart_reindex_and_migrate(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    transcript = ws / "sessions" / "chat.jsonl"
    raw = transcript.read_bytes()
    daemon = start(tmp_path, ws)
    try:
        client = daemon.client()
        assert "Redis" in texts(client, "which cache does billing use for invoices")
        assert "4417" in texts(client, "gym locker code")
        done = client.forget("memory/services.md#L3")
        assert done["forgotten"] == "memory/services.md#L3-L3" and done["indexed"]
        done = client.forget("sessions/chat.jsonl#L2-L3")
        assert done["forgotten"] == "sessions/chat.jsonl#L2-L3" and done["indexed"]
        assert_gone(client)  # right when the calls returned: no waiting
        assert transcript.read_bytes() == raw
        daemon.wait_idle(60)  # the watcher saw the note change: its sync brings nothing back
        assert_gone(client)
    finally:
        d.cleanup(daemon)
    daemon = start(tmp_path, ws)  # a restart
    try:
        client = daemon.client()
        assert_gone(client)
        assert client.reindex(wait=True, timeout=120)
        assert_gone(client)
    finally:
        d.cleanup(daemon)
    moved = tmp_path / "elsewhere" / "index.sqlite"
    out = memoryd("store", "migrate", "--config", str(tmp_path / "config.toml"), "--from", "sqlite", "--to", str(moved))
    assert out.returncode == 0, out.stderr
    daemon = start(tmp_path, ws, store=moved)  # the config now names the moved index
    try:
        client = daemon.client()
        assert_gone(client)
        assert [c["kind"] for c in client.changes()["changes"]] == ["forget_transcript", "forget"]
        assert client.undo(2)["undone"] == [2, 1]
        assert "Redis" in texts(client, "which cache does billing use for invoices")
        assert "4417" in texts(client, "gym locker code")
        assert (ws / "memory" / "services.md").read_text() == NOTE and transcript.read_bytes() == raw
    finally:
        d.cleanup(daemon)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[d.Daemon]:
    tmp = tmp_path_factory.mktemp("curation")
    daemon = start(tmp, make_workspace(tmp))
    yield daemon
    d.cleanup(daemon)


@pytest.fixture
def note(running: d.Daemon) -> Iterator[Path]:
    """A fresh note for one test, indexed."""
    tag = "z" + os.urandom(4).hex()
    path = running.workspace / "memory" / f"{tag}.md"
    write(path, NOTE.replace("Alice drinks", f"{tag} drinks") + f"\n{tag}\n")  # words of this test's note only
    with MemoryClient(running.socket) as client:
        assert client.sync(timeout=60)["done"]
    yield path


def rel(path: Path, daemon: d.Daemon) -> str:
    return path.relative_to(daemon.workspace).as_posix()


def test_forget_by_query_update_supersede_and_undo_over_rpc(running: d.Daemon, note: Path) -> None:
    client = running.client()
    name = rel(note, running)
    mine = note.read_text()
    tag = mine.split()[-1]  # this note's own word
    shown = client.forget(query=f"{tag} drinks jasmine tea every morning")
    assert shown["forgotten"] is None and shown["confirm"]
    ours = [m for m in shown["matches"] if m["path"] == name]
    assert ours == shown["matches"] and all("jasmine" in m["snippet"] for m in ours)
    assert note.read_text() == mine  # shown, not forgotten
    done = client.forget(query=f"{tag} drinks jasmine tea every morning", confirm=shown["confirm"])
    assert done["forgotten"] and "jasmine" not in note.read_text() and "RabbitMQ" in note.read_text()
    assert "jasmine" not in texts(client, f"what does {tag} drink every morning, jasmine tea", name)
    seen = client.get(name, 4, 1)
    updated = client.update(f"{name}#L4", "- the deploy queue is NATS with five workers", seen["hash"])
    assert updated["updated"] == f"{name}#L4-L4" and "NATS" in note.read_text()
    stale = client.update(f"{name}#L4", "- something else", seen["hash"])
    assert stale["updated"] is None and stale["current"]["text"] == "- the deploy queue is NATS with five workers"
    wrote = client.write("billing uses Memcached as the cache for invoices", supersedes=f"{name}#L3")
    assert wrote["written"] and wrote["superseded"] == f"{name}#L3-L3"
    assert "~~billing uses Redis as the cache for invoices~~" in note.read_text()
    again = client.write("Billing uses Memcached as the cache for invoices.")
    assert again["written"] is False and again["duplicate_of"] == wrote["citation"]
    listed = client.changes(3)["changes"]
    assert [c["kind"] for c in listed] == ["supersede", "update", "forget"] and not any(c["undone"] for c in listed)
    assert client.undo(3)["undone"] == [c["id"] for c in listed]
    assert note.read_text() == mine


def test_bad_input_over_rpc_is_a_clear_error_and_changes_nothing(running: d.Daemon, note: Path) -> None:
    client = running.client()
    name = rel(note, running)
    before, changes = note.read_bytes(), client.changes()["changes"]
    for call in (
        lambda: client.forget(f"{name}#L40"),
        lambda: client.forget("memory/nothing.md#L1"),
        lambda: client.forget("../../etc/passwd"),
        lambda: client.update("sessions/chat.jsonl#L2", "x", "y"),
        lambda: client.update(f"{name}#L9-L3", "x", "y"),
        lambda: client.write("billing uses Memcached", supersedes=f"{name}#L99"),
        lambda: client.write("a stray \0 byte would make the note binary to every reader", path=name),
        lambda: client.update(f"{name}#L3", "colour \x1b[31mred", client.get(name, 3, 1)["hash"]),
    ):
        with pytest.raises(RemoteError) as refused:
            call()
        assert refused.value.code in ("invalid_request", "invalid_params", "not_found"), refused.value
        assert "Traceback" not in str(refused.value)
    note.chmod(0o444)
    try:
        with pytest.raises(RemoteError, match="read-only"):
            client.forget(f"{name}#L3")
        with pytest.raises(RemoteError, match="read-only"):  # whoever runs the daemon, root too
            client.write("a new line for a note its owner made read-only", path=name)
    finally:
        note.chmod(0o644)
    assert note.read_bytes() == before and client.changes()["changes"] == changes


def test_an_editors_stale_save_after_an_update_loses_neither_text(running: d.Daemon, note: Path) -> None:
    client = running.client()
    name = rel(note, running)
    stale = note.read_bytes()  # the editor read the note before the update
    client.update(f"{name}#L3", "- billing uses Memcached", client.get(name, 3, 1)["hash"])
    temp = note.with_name(f".{note.name}.swp")
    temp.write_bytes(stale + b"- editor: my own line\n")
    os.replace(temp, note)  # and saves its copy, with its own change, just after it

    def both() -> bool:
        text = note.read_text()
        return "- billing uses Memcached\n" in text and "Redis" not in text and "- editor: my own line" in text

    d.eventually(both, timeout=20)
    running.wait_idle(60)
    assert "Memcached" in texts(client, "billing cache Memcached", name)
    assert "Redis" not in texts(client, "billing Redis cache", name)


def memctl(daemon: d.Daemon, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env["MEMORYD_DATA_DIR"] = str(daemon.socket.parent)
    return subprocess.run(
        [sys.executable, "-m", "memoryd_client.memctl", "--socket", str(daemon.socket), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_memctl_forgets_by_a_query_only_what_its_confirm_token_was_shown(running: d.Daemon, note: Path) -> None:
    """`--confirm TOKEN` forgets the matches the token stands for: a line that matches since was never shown, so
    nothing is forgotten and the new matches come back with their own token."""
    tag = note.stem
    query = f"{tag} ferry pier"
    write(note, note.read_text() + f"- {tag}: the ferry leaves at noon from pier 4.\n")
    with MemoryClient(running.socket) as client:
        assert client.sync(timeout=60)["done"]
    shown = memctl(running, "--json", "forget", "--query", query)
    token = json.loads(shown.stdout)["confirm"]
    assert [m["snippet"].count("ferry") for m in json.loads(shown.stdout)["matches"]] == [1], shown.stdout
    write(note, note.read_text() + f"- {tag}: the ferry to pier 9 carries the backup tapes.\n")
    with MemoryClient(running.socket) as client:
        assert client.sync(timeout=60)["done"]
    before = note.read_text()
    stale = memctl(running, "forget", "--query", query, "--confirm", token)
    assert stale.returncode == 1 and "--confirm" in stale.stdout, stale.stdout + stale.stderr
    assert note.read_text() == before  # the line never shown is not forgotten, nor the one shown
    again = memctl(running, "--json", "forget", "--query", query)
    out = memctl(running, "forget", "--query", query, "--confirm", json.loads(again.stdout)["confirm"])
    assert out.returncode == 0 and "Forgotten:" in out.stdout, out.stdout + out.stderr
    assert "ferry" not in note.read_text()
    wrong = memctl(running, "forget", f"{note.name}#L3", "--confirm", token)
    assert wrong.returncode != 0 and "--query" in wrong.stderr
    forgot = json.loads(memctl(running, "--json", "changes", "-n", "2").stdout)["changes"]
    assert [c["kind"] for c in forgot] == ["forget", "forget"]
    both = memctl(running, "undo", "-n", "2", "--change", str(forgot[0]["id"]))
    assert both.returncode != 0 and "leave -n out" in both.stderr
    back = memctl(running, "undo", "--change", str(forgot[0]["id"]))
    assert back.returncode == 0 and f"undid change {forgot[0]['id']}" in back.stdout, back.stdout + back.stderr
    assert note.read_text().count("ferry") == 1


def test_memctl_forget_edit_undo_and_changes(running: d.Daemon, note: Path) -> None:
    name = rel(note, running)
    mine = note.read_text()
    query = f"{mine.split()[-1]} drinks jasmine tea morning"
    out = memctl(running, "edit", f"{name}#L4", "--text", "- the deploy queue is NATS")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"updated; now {name}#L4-L4") and "NATS" in note.read_text()
    out = memctl(running, "forget", f"{name}#L3")
    assert out.returncode == 0 and f"Forgotten: {name}#L3-L3" in out.stdout, out.stderr
    shown = memctl(running, "forget", "--query", query)
    assert shown.returncode == 1 and "jasmine" in shown.stdout and "--yes" in shown.stderr
    assert "jasmine" in note.read_text()  # not confirmed: nothing forgotten
    out = memctl(running, "forget", "--query", query, "--yes")
    assert out.returncode == 0 and "Forgotten:" in out.stdout, out.stdout + out.stderr
    assert "jasmine" not in note.read_text()
    listed = memctl(running, "changes", "-n", "3")
    assert listed.returncode == 0 and [line.split()[3] for line in listed.stdout.splitlines()] == [
        "forget",
        "forget",
        "update",
    ]
    out = memctl(running, "undo", "-n", "3")
    assert out.returncode == 0 and out.stdout.count("undid change") == 3, out.stderr
    assert note.read_text() == mine
    bad = memctl(running, "edit", f"{name}#L40", "--text", "x")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and note.read_text() == mine
    stale = memctl(running, "edit", f"{name}#L3", "--text", "x", "--expect", "- not what is there")
    assert stale.returncode == 1 and "nothing written" in stale.stdout and note.read_text() == mine
    short = memctl(running, "edit", f"{name}#L3-4", "--text", "- one line for two")  # the daemon's own grammar
    assert short.returncode == 0, short.stdout + short.stderr
    assert note.read_text() == mine.replace(
        NOTE.split("\n", 4)[2] + "\n" + NOTE.split("\n", 4)[3], "- one line for two"
    )
    odd = write(note.with_name("odd#L7.md"), "- first\n- second\n")  # a name that holds "#L" itself
    with MemoryClient(running.socket) as client:
        assert client.sync(timeout=60)["done"]
    out = memctl(running, "edit", f"{rel(odd, running)}#L2", "--text", "- 2nd")
    assert out.returncode == 0, out.stderr
    assert odd.read_text() == "- first\n- 2nd\n"
    assert json.loads(memctl(running, "changes", "--json", "-n", "1").stdout)["changes"][0]["kind"] == "update"


def test_mcp_memory_forget_and_memory_update(running: d.Daemon, note: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK comes with `pip install -e .[dev]`")
    from .test_mcp import run_session, text_of

    name = rel(note, running)
    query = f"{note.read_text().split()[-1]} drinks jasmine tea morning"
    _, results = run_session(
        running.socket,
        [
            ("memory_update", {"citation": f"{name}#L4", "text": "- the queue is NATS", "expect": "- wrong text"}),
            (
                "memory_update",
                {
                    "citation": f"{name}#L4",
                    "text": "- the queue is NATS",
                    "expect": "- the deploy queue is RabbitMQ with three workers",
                },
            ),
            ("memory_forget", {"citation": f"{name}#L3"}),
            ("memory_forget", {"query": query}),
        ],
    )
    stale, updated, forgot, shown = (text_of(r) for r in results)
    assert stale.startswith("Not changed:") and "RabbitMQ" in stale
    assert updated.startswith(f"Updated; now {name}#L4-L4")
    assert forgot.startswith(f"Forgotten: {name}#L3-L3")
    assert "These would be forgotten" in shown and "jasmine" in shown
    token = shown.rsplit("confirm=", 1)[1].strip()
    _, (confirmed,) = run_session(running.socket, [("memory_forget", {"query": query, "confirm": token})])
    assert text_of(confirmed).startswith("Forgotten:") and "jasmine" not in note.read_text()
    text = note.read_text()
    assert "- the queue is NATS\n" in text and "Redis" not in text


def test_the_records_in_the_data_dir_are_private(running: d.Daemon, note: Path) -> None:
    client = running.client()
    client.forget(f"{rel(note, running)}#L3")
    client.forget("sessions/chat.jsonl#L4")
    client.undo()
    agent_dir = running.data_dir / "agents" / "main"
    files: list[Any] = [agent_dir / "forgotten.json", *(agent_dir / "changes").iterdir()]
    assert files[1:]
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in (agent_dir, agent_dir / "changes"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_the_same_fact_from_twenty_clients_at_once_is_held_once(running: d.Daemon) -> None:
    import threading

    fact = f"The {os.urandom(3).hex()} service keeps its sessions in Redis for a day."
    start = threading.Barrier(20)
    answers: list[dict[str, Any]] = []

    def one() -> None:
        with MemoryClient(running.socket) as client:
            start.wait()
            answers.append(client.write(fact))

    threads = [threading.Thread(target=one) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    written = [a for a in answers if a["written"]]
    assert len(answers) == 20 and len(written) == 1
    text = "".join(p.read_text() for p in (running.workspace / "memory").rglob("*.md"))
    assert text.count(fact) == 1


def test_a_fact_forgotten_right_after_it_was_written_stays_forgotten(running: d.Daemon) -> None:
    import time

    client = running.client()
    wrong = f"The deploy key {os.urandom(3).hex()} lives in vault path secret/old."
    wrote = client.write(wrong, path="journal.md")
    client.write("the deploy runs every Tuesday at noon", path="journal.md")
    assert client.forget(wrote["citation"])["forgotten"]
    time.sleep(1.0)  # the journal watches a fresh write for an editor's save that drops it: this is no such save
    running.wait_idle(60)
    assert wrong not in (running.workspace / "memory" / "journal.md").read_text()
    assert wrong.split()[2] not in "\n".join(h.snippet for h in client.search(wrong, mode="keyword"))


def test_undo_of_a_whole_note_forget_whose_text_a_transcript_repeats_finds_both_again(running: d.Daemon) -> None:
    tag = "z" + os.urandom(4).hex()
    said = f"The {tag} backup server lives in the Frankfurt rack number twelve."
    note = write(running.workspace / "memory" / f"{tag}.md", f"# W\n\n- {said}\n")
    write(
        running.workspace / "sessions" / f"{tag}.jsonl",
        json.dumps(
            {
                "type": "message",
                "timestamp": "2026-11-20T10:00:00Z",
                "message": {"role": "user", "content": f"FYI {said.lower()} ok?"},
            }
        )
        + "\n",
    )
    client = running.client()
    assert client.sync(timeout=60)["done"]
    found = lambda: {hit.path for hit in client.search(f"{tag} backup Frankfurt", mode="keyword")}  # noqa: E731
    assert found() == {f"memory/{tag}.md", f"sessions/{tag}.jsonl"}
    client.forget(f"memory/{tag}.md")
    assert found() == set()
    client.undo()
    assert note.exists()
    d.eventually(lambda: found() == {f"memory/{tag}.md", f"sessions/{tag}.jsonl"}, timeout=10)
    running.wait_idle(60)
    assert found() == {f"memory/{tag}.md", f"sessions/{tag}.jsonl"}


def test_a_transcript_line_forgotten_twice_and_undone_twice_is_found_again(running: d.Daemon) -> None:
    tag = "z" + os.urandom(4).hex()
    lines = [
        json.dumps(
            {
                "type": "message",
                "timestamp": "2026-11-20T10:00:00Z",
                "message": {"role": "user", "content": f"{tag} fact {n}: the {w} is in drawer {n}"},
            }
        )
        for n, w in enumerate(("kiwis", "plums", "limes"))
    ]
    write(running.workspace / "sessions" / f"{tag}.jsonl", "\n".join(lines) + "\n")
    client = running.client()
    assert client.sync(timeout=60)["done"]
    path = f"sessions/{tag}.jsonl"
    snippets = lambda: " ".join(hit.snippet for hit in client.search(f"{tag} plums drawer", mode="keyword"))  # noqa: E731
    assert "plums" in snippets()
    client.forget(f"{path}#L2-L2")
    client.forget(f"{path}#L2-L2")
    assert "plums" not in snippets()
    client.undo(2)
    assert "plums" in client.get(path, 2, 1)["text"]
    running.wait_idle(60)
    assert "plums" in snippets()
