"""Results never repeat lines: overlapping chunks of one file come back as one result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memoryd.config import ChunkingConfig
from memoryd.memory import AgentMemory
from memoryd.search.regions import group_regions
from memoryd.store.rows import ChunkRow

from .conftest import write
from .test_recall import transcript_memory


def row(chunk_id: int, path: str, start: int, end: int, source_lines: str | None = None) -> ChunkRow:
    lines = end - start + 1 if source_lines is None else len(source_lines.split(","))
    text = "\n".join(f"{path} line {start + i}" for i in range(lines))
    return ChunkRow(chunk_id, path, "memory", start, end, "", text, f"h{chunk_id}", 0, None, "", None, source_lines)


def test_overlapping_and_touching_chunks_join_and_a_bridge_joins_two_regions() -> None:
    rows = {
        1: row(1, "a.md", 10, 20),
        2: row(2, "b.md", 1, 5),
        4: row(4, "a.md", 40, 50),
        5: row(5, "b.md", 6, 9),  # touches 2
        6: row(6, "a.md", 19, 41),  # overlaps 1 and 4: bridges them
        7: row(7, "c.md", 1, 3),
        8: row(8, "d.md", 1, 3),
    }
    regions = group_regions([1, 2, 4, 5, 6, 7, 8], rows, max_results=3)
    assert [(r.path, r.start_line, r.end_line, r.chunk_ids) for r in regions] == [
        ("a.md", 10, 50, [1, 6, 4]),
        ("b.md", 1, 9, [2, 5]),
        ("c.md", 1, 3, [7]),
    ]
    text, line_of = regions[1].text()
    assert text.split("\n") == [f"b.md line {n}" for n in range(1, 10)]
    assert [line_of(i) for i in range(9)] == list(range(1, 10))


def test_a_region_joins_at_most_three_chunks() -> None:
    """A long note whose every chunk matches still comes back as several results of bounded length."""
    rows = {i: row(i, "long.md", 10 * i, 10 * i + 12) for i in range(1, 8)}
    regions = group_regions(list(range(1, 8)), rows, max_results=5)
    assert [r.chunk_ids for r in regions] == [[1, 2, 3], [4, 5, 6], [7]]
    assert len(group_regions([1, 3, 2], {i: rows[i] for i in (1, 2, 3)}, 5)) == 1  # 2 bridges 1 and 3


def test_the_walk_stops_at_the_first_chunk_that_would_start_one_region_too_many() -> None:
    rows = {1: row(1, "a.md", 1, 10), 2: row(2, "b.md", 1, 10), 3: row(3, "a.md", 8, 20)}
    regions = group_regions([1, 2, 3], rows, max_results=1)
    assert [(r.path, r.chunk_ids) for r in regions] == [("a.md", [1])]  # 3 ranks below b.md, which did not fit


def test_a_transcript_region_keeps_each_turn_once_at_its_jsonl_line() -> None:
    first = row(1, "chat.jsonl", 2, 6, "2,2,4,6")  # a two-line turn at line 2
    second = row(2, "chat.jsonl", 6, 9, "6,8,9")
    regions = group_regions([2, 1], {1: first, 2: second}, max_results=5)
    assert len(regions) == 1 and regions[0].lead == 2
    text, line_of = regions[0].text()
    lines = text.split("\n")
    assert [line_of(i) for i in range(len(lines))] == [2, 2, 4, 6, 8, 9]


def test_overlapping_chunks_of_a_note_come_back_as_one_result(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    body = [f"Line {i}: routine status update number {i} about the weekly sync." for i in range(1, 41)]
    body[19] = "Line 20: the flamingo migration plan was approved by the board."
    body[21] = "Line 22: flamingo feeding moves to the north pond."
    write(workspace / "memory" / "long.md", "# Log\n\n" + "\n".join(body) + "\n")
    write(workspace / "memory" / "other.md", "# Other\n\nA flamingo postcard arrived from Lisbon.\n")
    memory = memory_factory(chunking=ChunkingConfig(tokens=120, overlap=60))
    memory.sync()
    chunks = memory.store.chunks_by_ids(list(range(1, 200)))
    holding = [c for c in chunks.values() if c.path == "memory/long.md" and "flamingo" in c.text]
    assert len(holding) >= 2  # the passage sits in several overlapping chunks

    results = memory.search("flamingo", mode="keyword", max_results=5, explain=True).results
    long_hits = [r for r in results if r.path == "memory/long.md"]
    assert len(long_hits) == 1  # one result for the passage, not one per chunk
    hit = long_hits[0]
    assert hit.chunk_start_line == min(c.start_line for c in holding)
    assert hit.chunk_end_line == max(c.end_line for c in holding)
    assert hit.explain is not None and len(hit.explain["chunks"]) == len(holding)
    assert "flamingo migration" in hit.snippet and "flamingo feeding" in hit.snippet
    assert {r.path for r in results} == {"memory/long.md", "memory/other.md"}  # the freed place went on


def test_overlapping_transcript_chunks_join_and_cite_jsonl_lines(workspace: Path, data_dir: Path) -> None:
    sessions = workspace / "sessions"
    records = [json.dumps({"type": "session", "id": "s1", "timestamp": "2023-05-08T13:56:00"})]
    for i in range(30):
        text = f"Turn {i}: we talked about the garden and the weather this week."
        if i in (14, 15):
            text = f"Turn {i}: the pelican statue goes by the front gate."
        message = {"role": "user" if i % 2 else "assistant", "content": text}
        records.append(json.dumps({"type": "message", "timestamp": f"2023-05-08T14:{i:02d}:00Z", "message": message}))
    write(sessions / "chat.jsonl", "\n".join(records) + "\n")
    with transcript_memory(workspace, data_dir, sessions, chunking=ChunkingConfig(tokens=100, overlap=50)) as memory:
        memory.sync()
        results = memory.search("pelican statue", mode="keyword", max_results=5).results
        assert len(results) == 1
        hit = results[0]
        assert "Turn 14: the pelican" in hit.snippet and "Turn 15: the pelican" in hit.snippet
        assert hit.start_line <= 16 and hit.end_line >= 17  # JSONL lines of turns 14 and 15
        lines = Path(sessions / "chat.jsonl").read_text().split("\n")
        assert "Turn 14" in lines[16 - 1] and "Turn 15" in lines[17 - 1]
