"""Synthetic Markdown memory at any scale, made of real sentences (SciFact abstracts) so term statistics are real."""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path

from bench.datasets import load_scifact

SECTIONS_PER_FILE = 10
FIRST_DAY = dt.date(2023, 1, 1)
SHORT_QUERIES = (
    "insulin resistance",
    "T cells",
    "mortality risk",
    "vitamin D",
    "gene expression",
    "BRCA1",
    "p53 mutation",
    "randomized trial",
    "mouse model",
    "HIV",
)


def sentences() -> list[str]:
    dataset = load_scifact()
    out: list[str] = []
    for _, text in dataset.docs.values():
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if 40 <= len(s.strip()) <= 300)
    return out


def build(workspace: Path, chunks: int, seed: int = 7, dated: bool = False) -> Path:
    """One chunk per `##` section, ten sections a file, under workspace/memory/; reused when already there. Dated:
    one daily note a day (`memory/2023/2023-01-01.md`, the next day's after it), as an agent keeps them."""
    marker = workspace / f".synthetic-{chunks}{'-dated' if dated else ''}"
    if marker.exists():
        return workspace
    rng = random.Random(seed)
    said = sentences()
    files = (chunks + SECTIONS_PER_FILE - 1) // SECTIONS_PER_FILE
    for f in range(files):
        day = FIRST_DAY + dt.timedelta(days=f)
        folder = workspace / "memory" / (str(day.year) if dated else f"{f // 1000:03d}")
        folder.mkdir(parents=True, exist_ok=True)
        parts = []
        for s in range(SECTIONS_PER_FILE):
            if f * SECTIONS_PER_FILE + s >= chunks:
                break
            parts.append(f"## Entry {f}.{s}\n{rng.choice(said)}\n")
        (folder / (f"{day.isoformat()}.md" if dated else f"note-{f:05d}.md")).write_text(
            "\n".join(parts), encoding="utf-8"
        )
    marker.write_text("ok")
    return workspace


def queries(count: int, seed: int = 11, *, repeated: bool = True) -> list[str]:
    """Realistic queries: SciFact claims, plus short keyword and identifier-style ones. Repeated: drawn with
    replacement, a third of them short, as an agent asks again; else each once (in a shuffled order, over again
    only past all of them), so that no query's vector is already cached when it is asked."""
    dataset = load_scifact()
    rng = random.Random(seed)
    claims = list(dataset.queries.values())
    if not repeated:
        pool = claims + list(SHORT_QUERIES)
        rng.shuffle(pool)
        return [pool[i % len(pool)] for i in range(count)]
    out = []
    for i in range(count):
        out.append(rng.choice(SHORT_QUERIES) if i % 3 == 2 else rng.choice(claims))
    return out
