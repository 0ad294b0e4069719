"""The recall log (issue 45): what automatic recall put before which prompt, per session and agent, kept on disk by
the daemon, read with `recall_log` and `memctl recall --log`, counted in `status`."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryd.recall.log import EXCERPT_CHARS, FOLDER, NAME, RecallLog, excerpt
from memoryd.sources.redact import DEFAULT as redact
from memoryd.sources.redact import MASK
from memoryd_client.stub import RemoteError

from . import daemon as d
from .conftest import write
from .daemon import memctl

NOTES = {
    "memory/2026-11-20.md": "# 2026-11-20\n\n- We decided to use OAuth device flow for the CLI's auth; API keys stay "
    "for CI only.\n",
    "memory/2026-11-22.md": "# 2026-11-22\n\n- payment_processor retries three times with jittered backoff.\n",
    "memory/2026-11-24.md": "# 2026-11-24\n\n- Alice prefers Postgres over MySQL for the billing service.\n",
}
SECRET = "sk-ant-api03-" + "A" * 80


@dataclass(frozen=True)
class Shown:
    citation: str
    score: float
    when: str = ""


def _log_file(data_dir: Path) -> Path:
    return data_dir / FOLDER / NAME


# -- the log alone --------------------------------------------------------------------------------------------


def test_an_excerpt_is_short_masked_and_on_one_line() -> None:
    assert excerpt(f"deploy with {SECRET} please", redact) == f"deploy with {MASK} please"
    long = excerpt("word " * 500, redact)
    assert len(long) == EXCERPT_CHARS and long.endswith("…")
    assert excerpt("a\nb\t\x1b[31mc\u202ed", redact) == "a b [31mc d"
    # masks that shrink the redacted start a lot: the whole prompt is redacted, no secret is cut in two at its end
    many = " ".join([SECRET] * 40)
    assert "sk-ant" not in excerpt(many, redact)


def test_the_log_is_bounded_and_keeps_the_latest(tmp_path: Path) -> None:
    log = RecallLog(tmp_path / FOLDER, max_bytes=4000)
    try:
        for i in range(200):
            log.add(
                "main",
                f"s{i % 2}",
                "codex",
                f"question number {i}?",
                redact,
                [Shown(f"memory/n{i}.md#L1", 0.5)],
                9,
                None,
            )
        assert log.flush()
        files = [tmp_path / FOLDER / NAME, tmp_path / FOLDER / f"{NAME}.1"]
        assert all(f.stat().st_size <= 4000 for f in files)
        assert not (tmp_path / FOLDER / f"{NAME}.2").exists()
        latest = log.read("main", None, 3)
        assert [e["prompt"] for e in latest] == ["question number 197?", "question number 198?", "question number 199?"]
        held = sum(1 for f in files for _ in f.read_text().splitlines())
        assert log.counts("main")["recalls"] == held < 200
        assert [e["session"] for e in log.read("main", "s1", 2)] == ["s1", "s1"]
        assert log.read("other", None, 5) == []
    finally:
        log.close()


def test_a_line_cut_short_is_ended_and_skipped(tmp_path: Path) -> None:
    folder = tmp_path / FOLDER
    folder.mkdir(mode=0o700)
    entry = {"time": 1.0, "agent": "main", "session": "s", "client": None, "prompt": "old", "memories": []}
    (folder / NAME).write_text(json.dumps({**entry, "tokens": 1, "skipped": None}) + '\n{"time": 2.0, "age')
    log = RecallLog(folder)
    try:
        log.add("main", "s", None, "new one?", redact, [Shown("memory/a.md#L1", 1.0)], 5, None)
        assert [e["prompt"] for e in log.read(None, None, 10)] == ["old", "new one?"]
        assert log.counts("main")["recalls"] == 2
    finally:
        log.close()


def test_a_symlink_where_the_log_goes_is_not_written_through(tmp_path: Path) -> None:
    folder = tmp_path / FOLDER
    folder.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_text("")
    (folder / NAME).symlink_to(target)
    log = RecallLog(folder)
    try:
        log.add("main", "s", None, "what did we decide?", redact, [], 0, "nothing in memory scores high enough")
        assert log.flush()
        assert target.read_text() == "" and log.size()["dropped"] == 1 and log.size()["error"]
    finally:
        log.close()


# -- through a real daemon -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[d.Daemon]:
    daemon = d.start_with_notes(tmp_path_factory.mktemp("recall-log"), NOTES)
    yield daemon
    d.cleanup(daemon)


def _recall_in_two_sessions(daemon: d.Daemon) -> None:
    with daemon.client(timeout=60) as client:
        for session, prompt in [
            ("one", "which database does Alice prefer for billing?"),
            ("one", "thanks!"),
            ("two", f"how does payment_processor retry? my key is {SECRET}"),
            ("two", "what did we decide about the CLI's auth?"),
        ]:
            client.recall(prompt, session=session, client="claude-code", budget=90)  # one memory each


@pytest.mark.slow
def test_recall_log_gives_each_sessions_recalls_with_their_citations(running: d.Daemon) -> None:
    _recall_in_two_sessions(running)
    with running.client(timeout=60) as client:
        one = client.request("recall_log", session="one")["entries"]
        assert [e["prompt"] for e in one] == ["which database does Alice prefer for billing?"]
        assert one[0]["agent"] == "main" and one[0]["client"] == "claude-code" and one[0]["tokens"] > 0
        assert one[0]["memories"][0]["citation"].startswith("memory/2026-11-24.md#L")
        assert one[0]["memories"][0]["date"] == "2026-11-24"
        two = client.request("recall_log", agent="main", session="two")["entries"]
        assert len(two) == 2 and two[0]["memories"][0]["citation"].startswith("memory/2026-11-22.md#L")
        assert SECRET not in json.dumps(two) and MASK in two[0]["prompt"]
        assert two[1]["time"] >= two[0]["time"]
        with_skipped = client.request("recall_log", session="one", skipped=True)["entries"]
        assert [e["skipped"] for e in with_skipped] == [None, "one word"]
        assert len(client.request("recall_log", limit=1)["entries"]) == 1
        with pytest.raises(RemoteError) as unknown:
            client.request("recall_log", agent="nobody")
        assert unknown.value.code == "not_found"
        state = client.status()
    counted = state["agents"][0]["recall_log"]
    assert counted["recalls"] >= 3 and counted["skipped"] >= 1 and counted["last"] == two[1]["time"]
    assert state["daemon"]["recall_log"]["bytes"] > 0 and state["daemon"]["recall_log"]["dropped"] == 0
    folder = running.data_dir / FOLDER
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(_log_file(running.data_dir).stat().st_mode) == 0o600
    assert SECRET not in _log_file(running.data_dir).read_text()


@pytest.mark.slow
def test_memctl_recall_log_prints_the_recalls_and_how_to_forget(running: d.Daemon) -> None:
    with running.client(timeout=60) as client:
        client.recall("which database does Alice prefer for billing?", session="printed")
    out = memctl(running, "recall", "--log", "--session", "printed")
    assert out.returncode == 0, out.stderr
    assert "session printed" in out.stdout and "> which database does Alice prefer for billing?" in out.stdout
    assert "memory/2026-11-24.md#L" in out.stdout and "(2026-11-24)" in out.stdout
    assert out.stdout.rstrip().endswith("memctl forget <citation>")
    raw = json.loads(memctl(running, "--json", "recall", "--log", "--session", "printed", "--limit", "1").stdout)
    assert len(raw["entries"]) == 1 and raw["entries"][0]["session"] == "printed"
    assert memctl(running, "recall", "--log", "--session", "never").stdout.strip() == "no recalls logged"
    assert memctl(running, "recall").returncode == 2  # no prompt, no --log


@pytest.mark.slow
def test_the_log_survives_a_restart(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for path, text in NOTES.items():
        write(ws / path, text)
    daemon = d.start(tmp_path, ws)
    try:
        _recall_in_two_sessions(daemon)
        with daemon.client(timeout=60) as client:
            before = client.request("recall_log", skipped=True)["entries"]
        assert len(before) == 4
    finally:
        d.cleanup(daemon)
    again = d.start(tmp_path, ws)
    try:
        with again.client(timeout=60) as client:
            assert client.request("recall_log", skipped=True)["entries"] == before
            counted = client.status()["agents"][0]["recall_log"]
            assert counted == {"recalls": 3, "skipped": 1, "last": before[-1]["time"]}
            client.recall("which database does Alice prefer for billing?", session="after")
            assert len(client.request("recall_log", skipped=True, limit=100)["entries"]) == 5
    finally:
        d.cleanup(again)
