"""Results do not repeat lines: chunks of one file that overlap or touch become one result (a region).

Chunks overlap by design (`chunking.overlap`), so two neighbours often both rank high for the same passage.
Returned apart they spend two of the caller's few results on mostly the same lines; joined, the result covers
both and the freed place goes to the next passage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from memoryd.store.rows import ChunkRow

# A region joins at most this many chunks, so that a long note whose every chunk matches still comes back as
# several results with snippets of bounded length (LoCoMo, offline on the same candidates: 2, 3 or any number
# joined give the same recall to the third decimal).
MAX_REGION_CHUNKS = 3


@dataclass
class Region:
    """Ranked chunks of one file joined into one result; the first is the best ranked and leads."""

    chunk_ids: list[int]
    path: str
    start_line: int
    end_line: int
    rows: list[ChunkRow] = field(default_factory=list)

    @property
    def lead(self) -> int:
        return self.chunk_ids[0]

    def touches(self, row: ChunkRow) -> bool:
        return row.path == self.path and row.start_line <= self.end_line + 1 and self.start_line <= row.end_line + 1

    def join(self, row: ChunkRow) -> None:
        self.chunk_ids.append(row.id)
        self.rows.append(row)
        self.start_line = min(self.start_line, row.start_line)
        self.end_line = max(self.end_line, row.end_line)

    def text(self) -> tuple[str, Callable[[int], int]]:
        """The region's text, and the file line of each of its lines (0-based)."""
        if len(self.rows) == 1:
            return self.rows[0].text, self.rows[0].file_line
        lines = self._lines()
        return "\n".join(text for _, text in lines), [line for line, _ in lines].__getitem__

    def _lines(self) -> list[tuple[int, str]]:
        """(file line, text) of every line the region's chunks hold, in file order, each file line once (from
        the chunk holding the most text lines for it: a transcript turn can span several)."""
        by_line: dict[int, list[str]] = {}
        for row in self.rows:
            mine: dict[int, list[str]] = {}
            for offset, text in enumerate(row.text.split("\n")):
                mine.setdefault(row.file_line(offset), []).append(text)
            for line, texts in mine.items():
                if len(texts) > len(by_line.get(line, ())):
                    by_line[line] = texts
        return [(line, text) for line in sorted(by_line) for text in by_line[line]]


def group_regions(ranked: Sequence[int], rows: Mapping[int, ChunkRow], max_results: int) -> list[Region]:
    """Walk the ranking: a chunk that overlaps or touches a region already taken joins it (up to
    MAX_REGION_CHUNKS), any other starts a new region until `max_results` are taken; the walk ends at the first
    chunk that would start one more."""
    regions: list[Region] = []
    for chunk_id in ranked:
        row = rows[chunk_id]
        open_ = [r for r in regions if r.touches(row) and len(r.rows) < MAX_REGION_CHUNKS]
        if open_:
            first = open_[0]
            first.join(row)
            for other in open_[1:]:  # the chunk bridged two regions: they become one, if it stays small enough
                if len(first.rows) + len(other.rows) <= MAX_REGION_CHUNKS:
                    for member in other.rows:
                        first.join(member)
                    regions.remove(other)
            continue
        if len(regions) == max_results:
            break
        regions.append(Region([chunk_id], row.path, row.start_line, row.end_line, [row]))
    return regions
