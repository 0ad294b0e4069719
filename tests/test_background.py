"""search.background: a small index is searched as if filled up to the pool with sentences about nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from memoryd.embeddings.base import EmbeddingError
from memoryd.embeddings.hashing import HashingEmbedder
from memoryd.embeddings.select import ProviderChain
from memoryd.memory import AgentMemory
from memoryd.search.background import SENTENCES, background_vectors, padded
from memoryd.search.fusion import Candidate, adaptive_fusion
from memoryd.store.vectors import VectorScan
from tests.conftest import write


def unit(rows: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_the_pool_is_filled_with_the_backgrounds_nearest_and_the_distribution_is_theirs_and_the_chunks() -> None:
    query = unit([[1.0, 0.0, 0.0]])[0]
    background = unit([[0.2, 1.0, 0.0], [0.6, 1.0, 0.0], [0.0, 0.0, 1.0], [0.4, 0.0, 1.0]])
    chunks = np.array([0.9, 0.8])
    scan = VectorScan([(1, 0.9), (2, 0.8)], float(chunks.mean()), float(chunks.std()), 2)
    filled = padded(scan, background, query, pool=4)
    nearest = np.sort(background @ query)[::-1][:2]
    everything = np.concatenate([chunks, nearest])
    assert filled.count == 4 and filled.hits == scan.hits
    assert np.isclose(filled.mean, everything.mean()) and np.isclose(filled.std, everything.std())
    assert np.isclose(filled.floor, nearest[0])  # a note scores on the vector side as far as it beats the nearest
    assert padded(scan, background, query, pool=2) is scan  # a pool the index fills needs nothing
    mapped = VectorScan(scan.hits, scan.mean, scan.std, 2, {"en": (1.0, 0.0), "vi": (1.2, -0.1)}, {1: "en", 2: "vi"})
    assert padded(mapped, background, query, pool=4) is mapped  # per-language scales: not the raw cosines' scale


def test_the_vector_side_is_scaled_from_the_background_floor_not_from_the_worse_of_two_notes() -> None:
    def scores(scan: VectorScan, second: float = 0.86) -> list[float]:
        pool = [Candidate(1, vector_score=0.89, text_score=1.0), Candidate(2, vector_score=second, text_score=None)]
        adaptive_fusion(pool, 0.5, 0.5, has_vector=True, has_text=True, scan=scan, span=2.0)
        return [c.score for c in pool]

    two = VectorScan([(1, 0.89), (2, 0.86)], 0.875, 0.015, 2)
    assert scores(two)[1] == 0.0  # min-max over two candidates: the second scores nothing
    filled = VectorScan(two.hits, 0.78, 0.02, 24, floor=0.76)
    best, other = scores(filled)
    assert best > other > 0.2  # above the default min_score
    # where the notes barely beat the background, the vector side spans at least BACKGROUND_WIDTH deviations of
    # the distribution: cosines that differ by noise do not stretch to the whole 0..1
    close = VectorScan(two.hits, 0.80, 0.02, 24, floor=0.885)
    assert scores(close, second=0.887)[1] < 0.1  # min-max alone: 0.5 * 0.4


def test_the_background_holds_the_first_class_languages() -> None:
    scripts = {
        "vi": any("ơ" in s or "ư" in s for s in SENTENCES),
        "zh": any("\u4e00" <= c <= "\u9fff" for s in SENTENCES for c in s),
        "th": any("\u0e00" <= c <= "\u0e7f" for s in SENTENCES for c in s),
    }
    assert all(scripts.values()), scripts


class Flaky(HashingEmbedder):
    """A provider whose document embedding fails (a remote one rate-limited), counting its attempts."""

    provider = "flaky"

    def __init__(self) -> None:
        super().__init__(256)
        self.attempts = 0

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        self.attempts += 1
        raise EmbeddingError("429 too many requests")


def test_a_search_never_moves_a_chain_to_its_fallback_and_waits_before_asking_again() -> None:
    primary = Flaky()
    chain = ProviderChain([primary, HashingEmbedder(256)])
    assert background_vectors(chain) is None
    assert background_vectors(chain) is None
    assert chain.provider == "flaky" and chain.fallback_reason is None  # only a sync's failure moves a chain
    assert primary.attempts == 1  # not again within RETRY_SECONDS


def test_a_small_memory_is_searched_against_the_background_and_a_query_of_no_words_breaks_nothing(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    write(workspace / "memory/a.md", "# Cache\n\nbilling keeps its sessions in Redis.\n")
    write(workspace / "memory/b.md", "# Queue\n\nbilling sends its invoices through RabbitMQ.\n")
    memory = memory_factory()
    memory.sync()
    for query in ("???", "🙂🙂", "!!"):  # a zero query vector: every cosine alike
        assert memory.search(query, mode="hybrid").mode == "hybrid"
    found = memory.search("billing sessions Redis", mode="hybrid", explain=True).results
    assert [r.path for r in found][:1] == ["memory/a.md"]
    assert background_vectors(memory.embedder) is not None  # made for the hash provider, held for the next search


def test_a_note_that_holds_the_question_stays_found_when_a_background_sentence_is_nearer(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    """In one note every word's IDF is 0, so the keyword evidence is no measure: were it weighed, the keyword side
    would hand its weight to a vector side on which the note scores 0 (the background's cat is nearer)."""
    write(workspace / "MEMORY.md", "# Pets\nThe cat is called Miso.\n")
    memory = memory_factory()
    memory.sync()
    assert [r.path for r in memory.search("cat name", mode="hybrid").results] == ["MEMORY.md"]
