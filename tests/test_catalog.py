"""The `notes` listing (memoryd.catalog) on a real index: newest first, by day, a folder a level at a time, one
file's chunks (whatever characters its name has), and clear errors for what does not exist."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.memory import AgentMemory, RequestError

from .conftest import write


@pytest.fixture
def listed(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> AgentMemory:
    write(workspace / "MEMORY.md", "# Decisions\n\n## Queue\nRabbitMQ.\n\n## Database\nPostgres.\n")
    write(workspace / "memory" / "2026-10-02.md", "# 2026-10-02\n\n- the heron dataset\n")
    write(workspace / "memory" / "2026-10-15.md", "# 2026-10-15\n\n- the billing cache\n")
    write(workspace / "memory" / "projects" / "osprey [v2].md", "# Osprey\n\nThe search rewrite.\n\n## Plan\nSoon.\n")
    write(workspace / "memory" / "projects" / "deep" / "kestrel.md", "# Kestrel\n\nA note.\n")
    stamp = 1_790_000_000  # 2026-09-21: undated files are listed on the day they were last modified
    for name in ("MEMORY.md", "memory/projects/osprey [v2].md", "memory/projects/deep/kestrel.md"):
        os.utime(workspace / name, (stamp, stamp))
    memory = memory_factory()
    memory.sync()
    return memory


def test_newest_first_with_the_days_and_the_first_level(listed: AgentMemory) -> None:
    found = listed.notes()
    assert [n["path"] for n in found["notes"]][:2] == ["memory/2026-10-15.md", "memory/2026-10-02.md"]
    assert found["total"] == 5 and sum(found["days"].values()) == 5
    assert found["days"]["2026-10-15"] == 1 and found["days"]["2026-10-02"] == 1
    assert found["folders"] == {"memory": 4} and [f["path"] for f in found["files"]] == ["MEMORY.md"]
    assert found["files_total"] == 1 and found["chunks"] is None


def test_a_folder_a_level_at_a_time(listed: AgentMemory) -> None:
    found = listed.notes("memory/projects")
    assert found["folders"] == {"deep": 1}
    assert [f["path"] for f in found["files"]] == ["memory/projects/osprey [v2].md"]
    assert found["total"] == 2 and found["files_total"] == 1


def test_one_day_and_a_limit(listed: AgentMemory) -> None:
    day = listed.notes(day="2026-10-02")
    assert [n["path"] for n in day["notes"]] == ["memory/2026-10-02.md"] and day["total"] == 1
    assert sum(day["days"].values()) == 5  # the calendar's counts are the whole folder's, whatever the day
    assert len(listed.notes(limit=2)["notes"]) == 2


def test_one_file_and_its_chunks_even_with_brackets_in_its_name(listed: AgentMemory) -> None:
    found = listed.notes("memory/projects/osprey [v2].md")
    assert [n["path"] for n in found["notes"]] == ["memory/projects/osprey [v2].md"]
    assert found["chunks"] and [c["start_line"] for c in found["chunks"]] == sorted(
        c["start_line"] for c in found["chunks"]
    )
    assert found["chunks"][-1]["end_line"] >= 6


def test_what_does_not_exist_is_a_clear_error(listed: AgentMemory) -> None:
    with pytest.raises(RequestError, match="no file at or under"):
        listed.notes("memory/nowhere")
    with pytest.raises(RequestError, match="not a date"):
        listed.notes(day="last tuesday")
