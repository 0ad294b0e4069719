"""Hostile and broken files: each one is skipped and reported, every other note is still indexed."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.memory import AgentMemory, RequestError
from memoryd.sources.discovery import walk_files

from .conftest import make_chain, write
from .test_recall import SECRET, openclaw, transcript_memory

GOOD = "# Good\nThe ocelot migration plan is approved.\n"


def _found(memory: AgentMemory, query: str) -> set[str]:
    return {r.path for r in memory.search(query, mode="keyword").results}


def test_a_non_utf8_file_name_is_indexed_under_an_escaped_path(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "good.md", GOOD)
    raw_name = os.path.join(os.fsencode(workspace / "memory"), b"caf\xe9-\\notes.md")
    with open(raw_name, "wb") as fh:
        fh.write(b"# Latin-1 name\nThe quokka census finished.\n")
    memory = memory_factory()
    report = memory.sync()
    assert not report.skipped
    assert _found(memory, "ocelot migration") == {"memory/good.md"}
    [escaped] = _found(memory, "quokka census")
    assert escaped == "memory/caf\\xe9-\\\\notes.md"
    got = memory.get(escaped)  # a citation's path reads back the file it names
    assert "quokka census" in got["text"] and got["path"] == escaped
    assert memory.sync().files_unchanged == 2  # the escaped path is stable: nothing re-read


def test_malformed_transcript_lines_are_skipped_and_counted(workspace: Path, data_dir: Path) -> None:
    sessions = workspace / "sessions"
    write(workspace / "memory" / "good.md", GOOD)
    lines = [
        openclaw("user", "Where did we park the heron dataset?"),
        "[" * 100_000 + "]" * 100_000,  # nested too deep for the JSON parser
        json.dumps({"type": ["message"], "message": {"role": "user", "content": "x"}}),  # a list as the type
        json.dumps({"type": "message", "role": ["user"], "message": {"role": ["user"], "content": "y"}}),
        json.dumps(
            {"type": "message", "timestamp": int("9" * 400), "message": {"role": "user", "content": "zebu quota"}}
        ),
        "{broken json",
        openclaw("assistant", "The heron dataset lives in the cold bucket."),
    ]
    write(sessions / "chat.jsonl", "\n".join(lines) + "\n")
    with transcript_memory(workspace, data_dir, sessions) as memory:
        report = memory.sync()
        assert not report.skipped and report.files_indexed == 2
        skipped = memory.status()["skipped_lines"]
        assert skipped["sessions/chat.jsonl"].startswith("4 malformed lines skipped (line 2: JSON nested too deep")
        assert _found(memory, "heron dataset cold bucket") == {"sessions/chat.jsonl"}
        assert _found(memory, "ocelot") == {"memory/good.md"}
        hit = memory.search("cold bucket", mode="keyword").results[0]
        assert hit.end_line == 7  # the line numbers still count the skipped lines
        assert _found(memory, "zebu quota") == {"sessions/chat.jsonl"}  # a wild timestamp drops the date only


def test_a_tree_thousands_of_folders_deep_does_not_stop_the_walk(
    workspace: Path, deep_tree: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "good.md", GOOD)
    make_chain(deep_tree, 1500, "deep.md", b"# Deep\nThe abyssal note.\n")
    memory = memory_factory()
    report = memory.sync()
    assert report.files_indexed >= 1
    assert _found(memory, "ocelot migration") == {"memory/good.md"}
    shallow = list(walk_files(workspace / "memory", lambda p: p.suffix == ".md"))
    assert workspace / "memory" / "good.md" in shallow


def test_binary_huge_and_unreadable_notes_are_skipped_with_a_reason(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "good.md", GOOD)
    (workspace / "memory" / "blob.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00" + os.urandom(4096))
    with (workspace / "memory" / "huge.md").open("wb") as fh:
        fh.truncate(17 * 1024 * 1024)
    memory = memory_factory()
    report = memory.sync()
    assert set(report.skipped) == {"memory/blob.md", "memory/huge.md"}
    assert "binary" in report.skipped["memory/blob.md"] and "MiB" in report.skipped["memory/huge.md"]
    assert memory.status()["skipped_files"] == report.skipped
    assert _found(memory, "ocelot migration") == {"memory/good.md"}
    (workspace / "memory" / "blob.md").unlink()
    assert set(memory.sync().skipped) == {"memory/huge.md"}  # what was fixed leaves the list


def test_redaction_keeps_line_numbers_and_get_returns_redacted_text(workspace: Path, data_dir: Path) -> None:
    key = "\n".join(
        [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            *(["b3BlbnNzaC1rZXktdjEAAAAA"] * 10),
            "-----END OPENSSH PRIVATE KEY-----",
        ]
    )
    write(workspace / "memory" / "keys.md", f"# Keys\n{key}\nThe pelican deploy uses port 8443.\n")
    sessions = workspace / "sessions"
    write(sessions / "s.jsonl", openclaw("user", f"my key is {SECRET} for the egret job") + "\n")
    with transcript_memory(workspace, data_dir, sessions) as memory:
        memory.sync()
        hit = memory.search("pelican deploy port", mode="keyword").results[0]
        assert hit.path == "memory/keys.md" and hit.end_line == 14  # 12 key lines masked, still 12 lines
        assert "pelican" in hit.snippet.splitlines()[-1]
        note = memory.get("memory/keys.md")
        assert note["total_lines"] == 14 and "b3BlbnNz" not in note["text"] and "[REDACTED]" in note["text"]
        transcript = memory.get("sessions/s.jsonl")
        assert SECRET not in transcript["text"] and "egret job" in transcript["text"]


def _today(workspace: Path) -> Path:
    return workspace / "memory" / f"{dt.date.today().isoformat()}.md"


def test_a_default_write_never_follows_a_symlink_out_of_the_workspace(
    workspace: Path, tmp_path: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("keep me\n")
    _today(workspace).symlink_to(outside)
    memory = memory_factory()
    with pytest.raises(RequestError, match="symlink"):
        memory.write("planted")
    assert outside.read_text() == "keep me\n"


def test_writes_cannot_reach_through_symlinked_folders_or_into_ignored_ones(
    workspace: Path, tmp_path: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / "memory" / "linked").symlink_to(elsewhere, target_is_directory=True)
    memory = memory_factory()
    for path, reason in [
        ("memory/linked/x.md", "symlink"),
        ("memory/node_modules/x.md", "ignored"),
        ("memory/.git/x.md", "ignored"),
        ("memory/../x.md", "'..'"),
        ("memory/" + "n" * 300 + ".md", "255 bytes"),
        ("memory/x.txt", ".md"),
    ]:
        with pytest.raises(RequestError, match=reason):
            memory.write("planted", path)
    assert list(elsewhere.iterdir()) == []
    assert not (workspace / "memory" / "node_modules").exists()


def test_a_write_into_a_path_that_is_not_a_folder_changes_nothing(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    memory = memory_factory()
    blocker = workspace / "memory" / "sub"
    blocker.write_text("a file where a folder is wanted\n")
    with pytest.raises(RequestError, match="not a folder"):
        memory.write("text", "memory/sub/note.md")
    assert blocker.read_text() == "a file where a folder is wanted\n"


def test_a_large_write_answers_before_all_its_vectors_are_made(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    """A write waits for at most a few new chunks to be embedded; the rest is keyword-searchable at once and
    gets its vectors from the next sync."""
    memory = memory_factory()
    sections = "\n\n".join(
        f"## Topic {i}\n" + f"The kinkajou fact number {i} is worth keeping. " * 60 for i in range(40)
    )
    written = memory.write(sections, "memory/big-write.md")
    counts = memory.store.counts()
    assert counts["chunks"] > 16 and counts["embedded_chunks"] < counts["chunks"]
    assert memory.search("kinkajou fact number 33", mode="keyword").results[0].path == "memory/big-write.md"
    assert written["path"] == "memory/big-write.md"
    memory.sync()
    counts = memory.store.counts()
    assert counts["embedded_chunks"] == counts["chunks"]


def test_a_file_stamped_past_2262_does_not_stop_the_sync(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    """Its modification time does not fit the store's 64-bit integer: it is clamped, and every note is indexed."""
    far = workspace / "memory" / "far.md"
    far.parent.mkdir(parents=True, exist_ok=True)
    far.write_text("# Far\n\n- the pelican ledger is reconciled weekly\n")
    (workspace / "memory" / "near.md").write_text("# Near\n\n- the osprey index rebuilds nightly\n")
    os.utime(far, ns=(10**24, 10**24))
    memory = memory_factory()
    memory.sync()
    assert memory.search("pelican ledger").results and memory.search("osprey index").results
    assert memory.sync().files_indexed == 0  # and it is not read again at every sync
