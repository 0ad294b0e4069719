"""Window vectors: each chunk cut again into windows of a few sentences, embedded beside the chunk by sync, kept and
dropped with it by the store, and blended into a vector candidate's similarity by search."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from memoryd.config import ChunkingConfig, QueryConfig
from memoryd.embeddings.hashing import HashingEmbedder
from memoryd.ingest.batch import chunking_signature
from memoryd.ingest.windows import window_inputs
from memoryd.memory import AgentMemory

from .conftest import CountingEmbedder, write

TOPICS = [
    "The billing service retries failed invoices three times before it pages the on-call engineer.",
    "Our staging cluster runs on two small nodes and is rebuilt from scratch every Sunday night.",
    "The quokka lives on Rottnest Island near Perth and the team mascot is a quokka plush toy.",
    "Release notes are drafted by whoever merges the last pull request of the sprint.",
    "Database backups are copied to a second region and restored into a scratch server monthly.",
    "The design review happens on Thursdays and every decision is written to the decisions log.",
]
LONG_NOTE = "# Team handbook\n\n" + "\n\n".join(TOPICS) + "\n"
SHORT_NOTE = "# Island trip\n\nWe visited an island near Perth.\n"


def _chunks(memory: AgentMemory) -> dict[str, tuple[int, str, str]]:
    ids = list(range(1, memory.store.chunk_count() + 50))
    rows = memory.store.chunks_by_ids(ids)
    return {row.path: (row.id, row.heading, row.text) for row in rows.values()}


def test_sync_stores_each_chunks_window_vectors_and_drops_them_with_it(
    workspace, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "handbook.md", LONG_NOTE)
    write(workspace / "memory" / "trip.md", SHORT_NOTE)
    embedder = CountingEmbedder()
    memory = memory_factory(embedder)
    memory.sync()
    chunks = _chunks(memory)
    long_id, heading, text = chunks["memory/handbook.md"]
    short_id = chunks["memory/trip.md"][0]
    stored = memory.store.window_vectors([long_id, short_id])
    expected = window_inputs(heading, text)
    assert len(expected) >= 3  # the handbook is one chunk of several windows
    assert stored[long_id].shape == (len(expected), embedder.dims)
    own = HashingEmbedder(embedder.dims).embed_documents(expected)
    assert np.allclose(stored[long_id], own, atol=2e-3)  # float16 on disk
    assert stored[short_id].shape[0] == 0  # one window: its own vector says it all
    assert set(expected) <= set(embedder.calls)

    embedder.calls.clear()
    memory.sync(force=True)
    assert embedder.calls == []  # chunks and windows come from the embedding cache
    (workspace / "memory" / "handbook.md").unlink()
    memory.sync()
    assert memory.store.window_vectors([long_id]) == {}


def test_windows_embedded_later_come_with_the_chunk_vectors(
    workspace, agent_factory, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "handbook.md", LONG_NOTE)
    memory = AgentMemory(agent_factory(), HashingEmbedder(), embed_later=True)
    try:
        memory.sync()
        (chunk_id, heading, text) = _chunks(memory)["memory/handbook.md"]
        assert memory.store.window_vectors([chunk_id]) == {}  # keyword-searchable, not yet embedded
        memory.embed_pending()
        assert memory.store.window_vectors([chunk_id])[chunk_id].shape[0] == len(window_inputs(heading, text))
    finally:
        memory.close()


def test_windows_off_stores_none_and_changes_the_chunking_signature(
    workspace, agent_factory, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "handbook.md", LONG_NOTE)
    memory = memory_factory(chunking=ChunkingConfig(windows=False))
    memory.sync()
    chunk_id = _chunks(memory)["memory/handbook.md"][0]
    assert memory.store.window_vectors([chunk_id]) == {}
    on = agent_factory()
    assert chunking_signature(on) != chunking_signature(replace(on, chunking=ChunkingConfig(windows=False)))


def test_search_blends_a_chunks_own_cosine_with_its_best_windows(
    workspace, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory" / "handbook.md", LONG_NOTE)
    write(workspace / "memory" / "trip.md", SHORT_NOTE)
    query = "quokka on Rottnest Island"
    scores = {}
    for weight in (0.0, 0.5):
        memory = memory_factory(query=QueryConfig(window_weight=weight))
        memory.sync()
        found = memory.search(query, mode="vector", explain=True).results
        scores[weight] = {r.path: r.vector_score for r in found}
        _, heading, text = _chunks(memory)["memory/handbook.md"]
        memory.close()
    embedder = HashingEmbedder()
    q = embedder.embed_query(query)
    windows = embedder.embed_documents(window_inputs(heading, text))
    own = scores[0.0]["memory/handbook.md"]
    best = float((windows @ q).max())
    assert best > own  # the quokka window is nearer the question than the whole handbook
    assert abs(scores[0.5]["memory/handbook.md"] - (0.5 * own + 0.5 * best)) < 5e-3
    assert scores[0.5]["memory/trip.md"] == scores[0.0]["memory/trip.md"]  # one window: its own cosine
