"""get's window reader agrees with reading the whole file, for every line ending and block boundary."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memoryd.sources import lines as reader
from memoryd.sources.markdown import split_lines

PIECES = ["a", "b", "\n", "\r", "\r\n", " ", "é", "\n\n", "中"]


@pytest.mark.parametrize("seed", range(4))
def test_the_window_matches_the_whole_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(reader, "BLOCK_BYTES", 7)  # blocks end everywhere: inside \r\n, inside a character
    monkeypatch.setattr(reader, "CONTEXT_LINES", 3)  # and the fast skip of far blocks is taken
    rng = random.Random(seed)
    note = tmp_path / "note.md"
    for _ in range(1500):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60)))
        note.write_bytes(text.encode())
        whole = split_lines(text)
        first, count = rng.randint(1, len(whole) + 2), rng.randint(1, 6)
        window = reader.read_window(note, first, count, 1000)
        assert window.total_lines == len(whole), text
        assert window.lines == whole[first - 1 : first - 1 + count], (text, first, count)
        context: list[str] = []
        for line in whole[: first - 1]:
            context = [] if not line.strip() else [*context, line]
        assert window.context == context[-3:], (text, first)


def test_a_long_line_is_cut_and_said_so(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("short\n" + "x" * 5000 + "\nlast\n")
    window = reader.read_window(note, 2, 2, 100)
    assert window.lines == ["x" * 100, "last"] and window.cut and window.total_lines == 3
