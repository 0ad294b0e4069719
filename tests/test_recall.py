"""Transcripts as memory, redaction, time-aware ranking, diversity, filters and explain."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.config import EmbeddingConfig, QueryConfig, quickstart_agent
from memoryd.memory import AgentMemory

from . import daemon as d
from .conftest import write
from .fake_providers import FakeProvider

SECRET = "sk-proj-Zq8hT3BlbkFJ9xkYw2Lm4Np6Qr8St0Uv"


def openclaw(role: str, content: object, ts: str = "2026-11-20T10:00:00Z") -> str:
    return json.dumps({"type": "message", "timestamp": ts, "message": {"role": role, "content": content}})


def claude(kind: str, content: object, ts: str = "2026-11-20T10:00:00Z") -> str:
    return json.dumps({"type": kind, "timestamp": ts, "message": {"role": kind, "content": content}})


@pytest.fixture
def sessions(workspace: Path) -> Path:
    folder = workspace / "sessions"
    folder.mkdir()
    return folder


def transcript_memory(workspace: Path, data_dir: Path, sessions: Path, **kwargs: object) -> AgentMemory:
    agent = quickstart_agent(
        workspace,
        data_dir,
        sources=("memory", "sessions"),
        sessions_dirs=(sessions,),
        embedding=EmbeddingConfig(provider="hash"),
        **kwargs,
    )
    return AgentMemory(agent)


def test_both_transcript_formats_are_indexed_without_tool_noise(
    workspace: Path, data_dir: Path, sessions: Path
) -> None:
    write(
        sessions / "openclaw.jsonl",
        "\n".join(
            [
                json.dumps({"type": "session", "id": "abc"}),
                openclaw("user", "Which database do we use for billing?"),
                openclaw(
                    "assistant",
                    [
                        {"type": "text", "text": "Billing lives in Postgres."},
                        {"type": "tool_use", "name": "bash", "input": {"cmd": "TOOLNOISE"}},
                    ],
                ),
                json.dumps({"type": "message", "message": {"role": "toolResult", "content": "TOOLNOISE output"}}),
                "{broken json",
            ]
        )
        + "\n",
    )
    write(
        sessions / "proj" / "claude.jsonl",
        "\n".join(
            [
                claude("user", "Remind me   which    editor Alice prefers"),
                claude(
                    "assistant",
                    [{"type": "thinking", "thinking": "TOOLNOISE"}, {"type": "text", "text": "Alice uses Helix."}],
                ),
                claude("user", [{"type": "tool_result", "content": "TOOLNOISE"}]),
            ]
        )
        + "\n",
    )
    with transcript_memory(workspace, data_dir, sessions) as memory:
        report = memory.sync()
        assert report.files_indexed == 2 and not report.skipped
        hit = memory.search("billing database", mode="keyword", sources=["sessions"]).results[0]
        assert hit.source == "sessions" and hit.path == "sessions/openclaw.jsonl"
        assert hit.snippet == "User: Which database do we use for billing?\nAssistant: Billing lives in Postgres."
        assert (hit.start_line, hit.end_line) == (2, 3)  # JSONL line numbers
        got = memory.get(hit.path, hit.start_line, 2)
        assert "Which database" in got["text"] and "Postgres" in got["text"]
        helix = memory.search("Alice editor", mode="keyword").results[0]
        assert helix.snippet == "User: Remind me which editor Alice prefers\nAssistant: Alice uses Helix."
        assert memory.search("TOOLNOISE", mode="keyword").results == []


def test_appends_are_tailed_partial_lines_wait_truncation_rereads(
    workspace: Path, data_dir: Path, sessions: Path
) -> None:
    log = sessions / "chat.jsonl"
    write(log, "\n".join(openclaw("user", f"old message number {i}") for i in range(40)) + "\n")
    with transcript_memory(workspace, data_dir, sessions) as memory:
        first = memory.sync()
        assert first.bytes_read == log.stat().st_size
        size_before, chunks_before = log.stat().st_size, memory.status()["chunks"]
        appended = openclaw("user", "we picked the walrus deployment plan") + "\n"
        with log.open("a") as fh:
            fh.write(appended)
        second = memory.sync()
        assert second.bytes_read == len(appended.encode())  # only the new bytes were read
        assert memory.status()["chunks"] == chunks_before + 1
        hit = memory.search("walrus deployment", mode="keyword").results[0]
        assert (hit.start_line, hit.end_line) == (41, 41)

        with log.open("a") as fh:  # a writer mid-append: no newline yet
            fh.write(openclaw("assistant", "the narwhal rollout starts monday")[:-10])
        memory.sync()
        assert memory.search("narwhal rollout", mode="keyword").results == []
        with log.open("a") as fh:
            fh.write(openclaw("assistant", "the narwhal rollout starts monday")[-10:] + "\n")
        memory.sync()
        hit = memory.search("narwhal rollout", mode="keyword").results[0]
        assert (hit.start_line, hit.end_line) == (42, 42)
        assert log.stat().st_size > size_before

        log.write_text(openclaw("user", "a fresh start about otters") + "\n")  # truncated and rewritten
        third = memory.sync()
        assert third.bytes_read == log.stat().st_size
        assert memory.search("walrus", mode="keyword").results == []
        assert memory.search("otters", mode="keyword").results[0].start_line == 1


def test_rotated_and_renamed_transcripts_stay_searchable(workspace: Path, data_dir: Path, sessions: Path) -> None:
    log = sessions / "chat.jsonl"
    write(log, openclaw("user", "the quokka migration is done") + "\n")
    with transcript_memory(workspace, data_dir, sessions) as memory:
        memory.sync()
        os.rename(log, sessions / "chat.jsonl.reset.1")
        write(log, openclaw("user", "new session after reset") + "\n")
        os.rename(sessions / "chat.jsonl.reset.1", sessions / "chat.jsonl.deleted.1700000000")
        memory.sync()
        hit = memory.search("quokka migration", mode="keyword").results[0]
        assert hit.path == "sessions/chat.jsonl.deleted.1700000000"
        assert memory.search("new session after reset", mode="keyword").results[0].path == "sessions/chat.jsonl"


def test_planted_secrets_never_reach_the_index_or_a_provider(workspace: Path, data_dir: Path, sessions: Path) -> None:
    provider = FakeProvider("openai")
    try:
        write(sessions / "chat.jsonl", openclaw("user", f"my key is {SECRET} please store the pelican config") + "\n")
        write(
            workspace / "memory" / "creds.md",
            "# Creds\npostgres://admin:hunter2secret@db.internal/app\nAuthorization: Bearer abcdefghijklmnop1234\n"
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretbody\n-----END RSA PRIVATE KEY-----\n"
            f"openai = {SECRET}\nmy custom token CORP-1234-5678 here\n",
        )
        cfg = EmbeddingConfig(provider="openai", api_key="sk-test", base_url=provider.base_url, max_retries=0)
        agent = quickstart_agent(
            workspace,
            data_dir,
            sources=("memory", "sessions"),
            sessions_dirs=(sessions,),
            embedding=cfg,
            redact=(r"CORP-\d{4}-\d{4}",),
        )
        with AgentMemory(agent) as memory:
            memory.sync()
            hit = memory.search("pelican config", mode="keyword").results[0]
            assert "[REDACTED]" in hit.snippet and SECRET not in hit.snippet
            creds = memory.search("postgres creds", mode="keyword").results[0].snippet
            assert "admin:[REDACTED]@db.internal" in creds and "Bearer [REDACTED]" in creds
        planted = [SECRET, "hunter2secret", "abcdefghijklmnop1234", "MIIEowIBAAKCAQEAsecretbody", "CORP-1234-5678"]
        stored = b"".join(p.read_bytes() for p in data_dir.rglob("index.sqlite*"))
        sent = json.dumps([r.body for r in provider.requests])
        for secret in planted:
            assert secret.encode() not in stored, secret
            assert secret not in sent, secret
        assert provider.embed_requests(), "the provider was used"
    finally:
        provider.close()


def _dated_notes(workspace: Path) -> None:
    write(workspace / "memory" / "2024-01-10.md", "# Standup\nDeploy pipeline uses blue green deploys for the api.\n")
    write(workspace / "memory" / "2026-11-15.md", "# Standup\nDeploy pipeline moved to canary deploys.\n")
    write(workspace / "MEMORY.md", "# Rules\nDeploy pipeline: never deploy on Fridays. Deploy pipeline deploys.\n")


def test_decay_favours_recent_notes_but_never_evergreen_ones(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    _dated_notes(workspace)
    memory = memory_factory()
    memory.sync()
    plain = memory.search("deploy pipeline blue green deploys", mode="keyword", min_score=0.0, explain=True).results
    assert plain[0].path == "memory/2024-01-10.md"
    decayed = memory.search(
        "deploy pipeline blue green deploys", mode="keyword", min_score=0.0, decay=True, explain=True
    ).results
    order = [r.path for r in decayed]
    assert order.index("memory/2026-11-15.md") < order.index("memory/2024-01-10.md")
    by_path = {r.path: r.explain for r in decayed}
    assert by_path["MEMORY.md"]["decay"] == 1.0  # evergreen
    assert by_path["memory/2024-01-10.md"]["decay"] < 0.01 < by_path["memory/2026-11-15.md"]["decay"] <= 1.0
    assert by_path["memory/2024-01-10.md"]["age_days"] > 600


def test_memory_types_change_half_life_and_importance_changes_rank(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(
        workspace / "memory" / "2025-06-01.md", "---\ntype: semantic\n---\n# Fact\nThe office wifi is called heron.\n"
    )
    write(workspace / "memory" / "2025-06-02.md", "# Event\nWe fixed the heron wifi outage.\n")
    memory = memory_factory(query=QueryConfig(decay=True))
    memory.sync()
    found = memory.search("heron wifi", mode="keyword", min_score=0.0, explain=True).results
    assert len(found) == 2  # the front matter is metadata, not a chunk of its own
    results = {r.path: r.explain for r in found}
    assert results["memory/2025-06-01.md"]["type"] == "semantic"
    assert results["memory/2025-06-01.md"]["decay"] > results["memory/2025-06-02.md"]["decay"] * 10
    done = memory.write(
        "Badger is the code name of the new billing service.", path="names.md", kind="semantic", importance=1.0
    )
    memory.write("Badger appears in a throwaway remark too.", path="chatter.md", importance=0.0)
    top = memory.search("badger", mode="keyword", explain=True).results
    assert top[0].citation == done["citation"] and top[0].explain["importance"] == 1.5
    assert top[1].explain["importance"] == 0.5
    assert "<!-- type: semantic, importance: 1 -->" in (workspace / "memory" / "names.md").read_text()


def test_mmr_spreads_near_duplicates(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> None:
    for day in range(1, 7):
        write(
            workspace / "memory" / f"2026-10-0{day}.md",
            f"# Daily\nReminder: renew the TLS certificate, renew it before the TLS certificate expires ({day}).\n",
        )
    write(
        workspace / "memory" / "cert-process.md", "# Certbot\nRun certbot to renew a certificate, then reload nginx.\n"
    )
    memory = memory_factory(provider="hash")
    memory.sync()
    plain = [r.path for r in memory.search("renew TLS certificate", max_results=3).results]
    assert "memory/cert-process.md" not in plain
    diverse = memory.search("renew TLS certificate", max_results=3, mmr=True, explain=True).results
    assert "memory/cert-process.md" in [r.path for r in diverse]
    assert [r.explain["mmr_step"] for r in diverse] == [1, 2, 3]
    assert diverse[1].explain["mmr_penalty"] < 0.9


def test_filters_path_dates_types_sources(workspace: Path, data_dir: Path, sessions: Path) -> None:
    _dated_notes(workspace)
    write(
        workspace / "memory" / "howto" / "deploy.md",
        "---\ntype: procedural\n---\n# Deploy pipeline steps\nrun make deploy\n",
    )
    write(sessions / "chat.jsonl", openclaw("user", "the deploy pipeline is slow today", "2026-11-18T09:00:00Z") + "\n")
    with transcript_memory(workspace, data_dir, sessions) as memory:
        memory.sync()

        def paths(**filters: object) -> set[str]:
            return {r.path for r in memory.search("deploy pipeline", mode="keyword", max_results=20, **filters).results}

        everything = paths()
        assert len(everything) == 5
        assert paths(path="memory/") == {"memory/2024-01-10.md", "memory/2026-11-15.md", "memory/howto/deploy.md"}
        assert paths(path="memory/20*.md") == {"memory/2024-01-10.md", "memory/2026-11-15.md"}
        assert paths(after="2026-11-01", path="memory/20*") == {"memory/2026-11-15.md"}
        assert paths(before="2024-01-10", path="memory/20*") == {"memory/2024-01-10.md"}
        assert paths(type="procedural") == {"memory/howto/deploy.md"}
        assert paths(type="episodic") == {"sessions/chat.jsonl"}
        assert paths(sources=["sessions"]) == {"sessions/chat.jsonl"}
        assert {r.path for r in memory.search("deploy pipeline", mode="vector", path="memory/howto").results} == {
            "memory/howto/deploy.md"
        }
        from memoryd.search.hybrid import SearchError

        with pytest.raises(SearchError, match="after"):
            memory.search("x", after="last tuesday")
        with pytest.raises(SearchError, match=r"type.*episodic"):
            memory.search("x", type="gossip")


def test_access_statistics_are_counted_and_can_rank(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "a.md", "# A\nlemur facts one\n")
    write(workspace / "memory" / "b.md", "# B\nlemur facts two\n")
    memory = memory_factory(query=QueryConfig(access_weight=0.5))
    memory.sync()
    for _ in range(3):
        memory.search("lemur facts", mode="keyword", path="memory/b.md")
    results = memory.search("lemur facts", mode="keyword", explain=True, record_access=False).results
    assert results[0].path == "memory/b.md" and results[0].explain["access_hits"] == 3
    assert results[0].explain["access_factor"] > 1.5 and results[1].explain["access_hits"] == 0


def test_daemon_tails_transcripts_by_volume_or_debounce(tmp_path: Path, workspace: Path) -> None:
    sessions = workspace / "sessions"
    log = write(sessions / "live.jsonl", openclaw("user", "session starts") + "\n")
    extra = (
        "session_debounce_seconds = 30\nsession_sync_messages = 50\n"
        f'[[agents]]\nid = "main"\nworkspace = "{workspace}"\nsources = ["memory", "sessions"]\n'
        f'sessions_dir = ["{sessions}"]\n[agents.embedding]\nprovider = "hash"\n'
    )
    daemon = d.start(tmp_path, workspace, extra=extra, agent=False)
    try:
        assert daemon.status()["chunks"] == 1
        with log.open("a") as fh:  # a few turns: they wait for the 30 s quiet period
            fh.write("".join(openclaw("assistant", f"small talk {i}") + "\n" for i in range(5)))
        state = d.eventually(lambda: (s := daemon.status())["dirty"] and s)  # seen, and waiting for quiet
        assert state["chunks"] == 1 and not state["syncing"]
        with log.open("a") as fh:  # 60 turns: past the message threshold, indexed at once
            fh.write("".join(openclaw("user", f"burst turn {i} about the capybara launch") + "\n" for i in range(60)))
        started = time.monotonic()
        while time.monotonic() - started < 10:
            state = daemon.status()
            if state["chunks"] > 1 and not state["syncing"]:
                break
            time.sleep(0.05)
        assert time.monotonic() - started < 10  # far sooner than the 30 s debounce
        report = state["last_sync_report"]
        assert report["bytes_read"] < log.stat().st_size, report  # tailed, never re-read whole
        assert daemon.client().search("capybara launch", mode="keyword").results[0].source == "sessions"
    finally:
        d.cleanup(daemon)
