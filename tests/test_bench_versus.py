"""bench.versus measures on dated daily notes, as an agent keeps them: each synthetic note is dated by its name, a
day after the one before, so the ranking by time runs on every search it times; and it asks each query once, so that
no hybrid search it times finds the query's vector cached."""

from __future__ import annotations

import itertools
from pathlib import Path

from bench.synthetic import FIRST_DAY, build, queries
from memoryd.sources.metadata import note_date


def test_dated_notes_are_one_a_day_and_read_as_dated(tmp_path: Path) -> None:
    workspace = build(tmp_path / "dated", 95, dated=True)
    notes = sorted((workspace / "memory").rglob("*.md"))
    assert len(notes) == 10  # ten sections a note
    days = [day for path in notes if (day := note_date(path.relative_to(workspace).as_posix())) is not None]
    assert len(days) == len(notes)
    assert [round((b - a) / 86_400) for a, b in itertools.pairwise(days)] == [1] * 9
    assert notes[0].name == f"{FIRST_DAY.isoformat()}.md"
    assert notes[-1].read_text(encoding="utf-8").count("## Entry") == 5
    plain = sorted((build(tmp_path / "plain", 95) / "memory").rglob("*.md"))
    assert len(plain) == 10
    assert not any(note_date(path.name) for path in plain)  # the plain layout stays undated


def test_the_queries_it_times_are_each_asked_once() -> None:
    asked = queries(300, repeated=False)
    assert len(asked) == 300
    assert len(set(asked)) == 300
    assert queries(300, repeated=False) == asked  # the same for both sides and every run
    again = queries(300)
    assert len(set(again)) < 200  # as an agent asks: repeated (what the other benches time)
