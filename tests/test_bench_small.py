"""bench.small_memory: the workspaces it cuts from a set, and what its report says."""

from __future__ import annotations

import random

from bench.datasets import Dataset
from bench.small_memory import UNPADDED, by_size, headline, markdown, summary, unpadded, workspaces
from memoryd.search.background import SENTENCES


def dataset() -> Dataset:
    docs = {f"d{i}": (f"title {i}", f"text {i}") for i in range(12)}
    queries = {f"q{i}": f"question {i}" for i in range(12)}
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(10)}
    qrels["q10"] = {"d3": 1, "d7": 1, "d9": 1}  # a question about several documents
    qrels["q11"] = {"d11": 1}
    return Dataset("toy", docs, queries, qrels)


def test_a_workspace_holds_every_note_its_questions_are_about_and_none_of_the_unrelated_ones() -> None:
    data = dataset()
    for size in (1, 2, 3, 5):
        for chosen, asked in workspaces(data, random.Random(size), size, 20):
            held = set(chosen)
            assert len(chosen) == size == len(held)
            assert all(docs and docs <= held for docs in asked["related"].values())
            assert all(not set(data.qrels[q]) & held for q in asked["unrelated"])
            assert len(asked["unrelated"]) == len(asked["related"])
            if size >= 3:  # the question about several documents brings them all
                assert {"d3", "d7", "d9"} <= held and asked["related"]["q10"] == {"d3", "d7", "d9"}


def test_the_report_reads_the_worst_set_and_every_size() -> None:
    row = {"found": 1.0, "mrr": 1.0, "stray": 0.5, "asked": 4}
    worse = {"found": 0.5, "mrr": 0.75, "stray": 1.0, "asked": 4}
    sets = {"a": {"2": {"hybrid": row, "keyword": row}}, "b": {"2": {"hybrid": worse, "keyword": row}}}
    found = {"sets": sets, "summary": summary(sets)}
    assert headline(found) == {
        "small memory: notes found, hybrid, worst set": 0.5,
        "small memory: notes an unrelated question gets, hybrid, mean": 0.75,
    }
    assert by_size(sets)["2"]["hybrid"] == {"found": 0.75, "mrr": 0.875, "stray": 0.75}
    assert "| b | 1.000 / 1.000 / 0.500 | 0.500 / 0.750 / 1.000 |" in markdown(found)  # keyword, then hybrid


def test_unpadded_searches_without_the_background_and_puts_it_back() -> None:
    from memoryd.embeddings.hashing import HashingEmbedder
    from memoryd.search import hybrid

    with unpadded(UNPADDED):
        assert hybrid.background_vectors(HashingEmbedder(16)) is None
    assert hybrid.background_vectors(HashingEmbedder(16)).shape == (len(SENTENCES), 16)  # type: ignore[union-attr]
