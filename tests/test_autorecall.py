"""Automatic recall (`recall`, `memctl recall`) and the agent hooks that call it."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memoryd.config import RecallConfig
from memoryd.memory import AgentMemory
from memoryd.recall.answer import Recaller
from memoryd.recall.block import Memory, build_block, estimate_tokens
from memoryd.recall.gate import prompt_topic
from memoryd.recall.sessions import ShownMemories
from memoryd_client import hooks
from memoryd_client.protocol.schema import Recall

from . import daemon as d
from .conftest import write
from .daemon import memctl

NOTES = {
    "memory/2026-11-20.md": "# 2026-11-20\n\n- We decided to use OAuth device flow for the CLI's auth; API keys stay "
    "for CI only.\n",
    "memory/2026-11-22.md": "# 2026-11-22\n\n- payment_processor retries three times with jittered backoff.\n",
    "memory/2026-11-24.md": "# 2026-11-24\n\n- Alice prefers Postgres over MySQL for the billing service.\n",
}


@pytest.mark.parametrize(
    "prompt",
    [
        "hi",
        "thanks!",
        "ok, sounds good",
        "run the tests",
        "commit and push",
        "/compact",
        "👍",
        "...",
        "谢谢你",
        "cảm ơn bạn nhiều",
        "ขอบคุณครับ",
        "yes please",
        "fix the lint errors",
    ],
)
def test_small_talk_and_bare_commands_ask_nothing_of_memory(prompt: str) -> None:
    assert prompt_topic(prompt) is not None


@pytest.mark.parametrize(
    "prompt",
    [
        "what did we decide about auth?",
        "how does payment_processor retry?",
        "where do I work?",
        "Caroline đã làm gì vào tuần trước?",
        "我们上次决定用哪个数据库？",
        "เราตัดสินใจเรื่องฐานข้อมูลว่าอย่างไร",
    ],
)
def test_questions_about_the_past_may_get_memories(prompt: str) -> None:
    assert prompt_topic(prompt) is None


def test_the_block_keeps_to_its_budget_in_any_script() -> None:
    memories = [
        Memory(f"memory/n{i}.md#L1-L9", text * 300, 1.0 - i / 10, key=str(i))
        for i, text in enumerate(["Postgres for billing. ", "数据库选择了 Postgres。", "เราเลือกฐานข้อมูล "])
    ]
    for budget in (64, 200, 1500):
        block, kept, tokens = build_block(memories, budget)
        assert kept and block.startswith("<memoryd-recall>") and block.endswith("</memoryd-recall>")
        assert estimate_tokens(block) <= tokens <= budget
        assert all(m.citation in block for m in kept)
    assert build_block(memories, 20) == ("", [], 0)


def test_shown_memories_forget_the_least_recent_session() -> None:
    shown = ShownMemories(max_sessions=2)
    shown.add("a", "s1", ["k1"])
    shown.add("a", "s2", ["k2"])
    shown.add("a", "s3", ["k3"])
    assert shown.shown("a", "s1") == frozenset() and shown.shown("a", "s3") == {"k3"} and len(shown) == 2


@pytest.fixture
def memory(memory_factory: Callable[..., AgentMemory], workspace: Path) -> AgentMemory:
    for path, text in NOTES.items():
        write(workspace / path, text)
    mem = memory_factory()
    mem.sync()
    return mem


def test_recall_gives_a_session_each_memory_once(memory: AgentMemory) -> None:
    recaller = Recaller.create()
    first = recaller.recall(memory, Recall(prompt="which database does Alice prefer for billing?", session="s"))
    assert first["skipped"] is None and "memory/2026-11-24.md#L" in first["block"]
    assert first["memories"][0]["citation"].startswith("memory/2026-11-24.md")
    again = recaller.recall(memory, Recall(prompt="which database does Alice prefer for billing?", session="s"))
    assert "memory/2026-11-24.md" not in again["block"]
    other = recaller.recall(memory, Recall(prompt="which database does Alice prefer for billing?", session="t"))
    assert "memory/2026-11-24.md" in other["block"]


def test_recall_says_why_it_gives_nothing(memory_factory: Callable[..., AgentMemory], workspace: Path) -> None:
    for path, text in NOTES.items():
        write(workspace / path, text)
    memory = memory_factory(recall=RecallConfig(min_vector_margin=99.0))  # three chunks: no cosine to measure
    memory.sync()
    recaller = Recaller.create()
    assert recaller.recall(memory, Recall(prompt="thanks!"))["skipped"] == "one word"
    assert recaller.recall(memory, Recall(prompt="ok, sounds good"))["skipped"] == "small talk or a bare command"
    assert recaller.recall(memory, Recall(prompt="add logging"))["skipped"] == "a command about the work at hand"
    nothing = recaller.recall(memory, Recall(prompt="zygomorphic quasar lattice?"))
    assert nothing["skipped"] == "nothing in memory scores high enough" and nothing["block"] == ""


def test_recall_never_returns_the_sessions_own_transcript(
    memory_factory: Callable[..., AgentMemory], workspace: Path, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    line = {"type": "message", "message": {"role": "user", "content": "the heron migration moved to Friday"}}
    write(sessions / "current.jsonl", json.dumps(line) + "\n")
    write(sessions / "older.jsonl", json.dumps(line).replace("Friday", "Monday") + "\n")
    mem = memory_factory(sources=("memory", "sessions"), sessions_dirs=(sessions,))
    mem.sync()
    recaller = Recaller.create()
    answer = recaller.recall(
        mem, Recall(prompt="when is the heron migration?", transcript=str(sessions / "current.jsonl"))
    )
    assert "older.jsonl" in answer["block"] and "current.jsonl" not in answer["block"]


def test_a_hook_with_no_daemon_prints_nothing_and_logs_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORYD_DATA_DIR", str(tmp_path))
    data = {"session_id": "s", "transcript_path": "/x.jsonl", "hook_event_name": "UserPromptSubmit", "prompt": "q?"}
    started = time.monotonic()
    assert hooks.run("claude-code", "user-prompt-submit", json.dumps(data), socket=str(tmp_path / "none.sock")) == ""
    assert time.monotonic() - started < hooks.RECALL_SECONDS + 1
    assert hooks.run("claude-code", "user-prompt-submit", "[1, 2]") == ""
    assert hooks.run("claude-code", "no-such-event", "{}") == ""
    logged = Path(hooks.log_path()).read_text().splitlines()
    assert len(logged) == 3 and "not running" in logged[0] and "not an object" in logged[1]
    assert "no-such-event" in logged[2]


def test_a_hook_gives_up_on_a_slow_daemon_within_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon that accepts and never answers: the hook prints nothing once its time is up, and logs why."""
    monkeypatch.setenv("MEMORYD_DATA_DIR", str(tmp_path))
    path = str(tmp_path / "slow.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    try:
        data = {"session_id": "s", "prompt": "what did we decide about the heron dataset?"}
        started = time.monotonic()
        assert hooks.run("claude-code", "user-prompt-submit", json.dumps(data), socket=path) == ""
        assert time.monotonic() - started < hooks.RECALL_SECONDS + 1
    finally:
        server.close()
    assert "did not answer recall" in Path(hooks.log_path()).read_text()


# -- end to end: a real daemon, memctl and the hooks as the platforms run them --------------------------------


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[d.Daemon]:
    daemon = d.start_with_notes(tmp_path_factory.mktemp("autorecall"), NOTES)
    yield daemon
    d.cleanup(daemon)


@pytest.mark.slow
def test_memctl_recall_prints_the_block_or_nothing(running: d.Daemon) -> None:
    out = memctl(running, "recall", "what", "did", "we", "decide", "about", "auth?")
    assert out.returncode == 0 and "memory/2026-11-20.md#L" in out.stdout and "OAuth" in out.stdout
    quiet = memctl(running, "recall", "thanks, looks good")
    assert quiet.returncode == 0 and quiet.stdout == ""
    whole = json.loads(memctl(running, "recall", "--json", "-", stdin="how does payment_processor retry?").stdout)
    assert whole["memories"][0]["citation"].startswith("memory/2026-11-22.md") and whole["tokens"] > 0


@pytest.mark.slow
def test_claude_code_hooks_end_to_end(running: d.Daemon, tmp_path: Path) -> None:
    prompt = {
        "session_id": "cc-1",
        "transcript_path": str(tmp_path / "cc-1.jsonl"),
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which database does Alice prefer for the billing service?",
    }
    out = memctl(running, "hook", "claude-code", "user-prompt-submit", stdin=json.dumps(prompt))
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit" and "memory/2026-11-24.md#L" in context["additionalContext"]
    repeat = memctl(running, "hook", "claude-code", "user-prompt-submit", stdin=json.dumps(prompt))
    assert repeat.returncode == 0 and "2026-11-24" not in repeat.stdout
    start = {"session_id": "cc-2", "hook_event_name": "SessionStart", "source": "startup"}
    started = json.loads(memctl(running, "hook", "claude-code", "session-start", stdin=json.dumps(start)).stdout)
    recent = started["hookSpecificOutput"]["additionalContext"]
    assert "memory/2026-11-24.md" in recent and "memory/2026-11-22.md" in recent and "2026-11-20" not in recent
    write(running.workspace / "memory" / "2026-11-25.md", "# 2026-11-25\n\n- The heron flag ships on Tuesday.\n")
    compact = {"session_id": "cc-1", "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
    done = memctl(running, "hook", "claude-code", "pre-compact", stdin=json.dumps(compact))
    assert done.returncode == 0 and done.stdout == ""
    found = memctl(running, "--json", "search", "heron flag", "-n", "1")
    assert "memory/2026-11-25.md" in found.stdout
    seen = json.loads(memctl(running, "--json", "status").stdout)["daemon"]["integrations"]["claude-code"]
    assert seen["calls"] >= 3 and time.time() - seen["last_seen"] < 60
