"""memoryd.Memory: the library answers with the client's own types, and holds the index's lock while open."""

from __future__ import annotations

from pathlib import Path

import pytest

import memoryd
from memoryd.config import ChunkingConfig, EmbeddingConfig
from memoryd.store.lock import Locked
from memoryd_client import SearchHit, SearchResults

from .conftest import write


def test_the_library_answers_as_the_client_does(workspace: Path, data_dir: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    with memoryd.Memory.quick(workspace, data_dir, embedding=EmbeddingConfig(provider="hash")) as memory:
        assert memory.sync().files_indexed == 1
        found = memory.search("JWT expiry", max_results=3, type=None)
        assert isinstance(found, SearchResults) and isinstance(found.results[0], SearchHit)
        assert found.results[0].citation == "MEMORY.md#L1-L2" and found.raw["agent"] == "main"
        written = memory.write("Ann leads payments.", "people/ann.md", type="semantic")
        assert written["citation"] == "memory/people/ann.md#L1-L2" and written["indexed"]
        assert [h.path for h in memory.search("Ann payments", mode="keyword", type="semantic")] == [
            "memory/people/ann.md"
        ]
        assert memory.get("memory/people/ann.md")["text"].startswith("Ann leads payments.")
        assert memory.status()["files"] == 2
        with pytest.raises(Locked):
            memoryd.Memory.quick(workspace, data_dir, embedding=EmbeddingConfig(provider="hash"))
    with memoryd.Memory.quick(workspace, data_dir, embedding=EmbeddingConfig(provider="hash")) as again:
        assert again.status()["files"] == 2  # closed, so free again


def test_an_agent_of_a_config_file(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\n[[agents]]\nid = "notes"\nworkspace = "{workspace}"\n'
        '[agents.embedding]\nprovider = "hash"\n'
    )
    with memoryd.Memory.from_config(config, "notes") as memory:
        memory.sync()
        assert memory.search("JWT").raw["agent"] == "notes"


def test_a_write_analyses_only_the_chunks_of_its_note_it_changed(workspace: Path, data_dir: Path) -> None:
    """Today's note is written to all day and indexed whole after each write: its earlier chunks are not analysed
    again (their keyword columns are the same text's), and what the index holds is what a fresh sync makes."""
    from memoryd.ingest import batch

    sections = "\n".join(
        f"## Topic {n}\nThe {n}th decision concerns the shard router and its quota.\n" for n in range(12)
    )
    write(workspace / "memory" / "day.md", sections)
    with memoryd.Memory.quick(
        workspace, data_dir, embedding=EmbeddingConfig(provider="hash"), chunking=ChunkingConfig(tokens=32, overlap=0)
    ) as memory:
        memory.sync()
        before = batch._analysed.cache_info()
        written = memory.write("The pelican rollout waits for the shard router.", "day.md")
        after = batch._analysed.cache_info()
        assert written["indexed"]
        assert after.misses - before.misses <= 2  # the chunk the entry went into (and a new one after it)
        assert after.hits - before.hits >= 10  # the others, as they were
        found = memory.search("pelican rollout", mode="keyword")
        assert found.results and found.results[0].path == "memory/day.md"
