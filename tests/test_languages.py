"""Notes in several languages in one index: each chunk's language, and each language's scores read on one scale
(memoryd.sources.language, memoryd.store.languages)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memoryd.config import default_data_dir
from memoryd.embeddings.local import LocalEmbedder
from memoryd.embeddings.models import prepare as prep
from memoryd.memory import AgentMemory
from memoryd.search.filters import Filters
from memoryd.sources.language import language_of, release_if_idle
from memoryd.store.languages import MIN_GROUP, apply_maps, big_groups, language_maps

from .conftest import write
from .languages import ACROSS, CHINESE, ENGLISH, IDENTIFIER, write_notes

DATA_DIR = Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())


def _everything() -> Filters:
    return Filters.parse(None, None, None, None, None)


def test_a_chunk_is_labelled_with_its_language_or_none() -> None:
    assert language_of("The team decided to move the billing database to a new server.") == "en"
    assert language_of("Khách hàng muốn thanh toán bằng thẻ tín dụng từ tháng sau.") == "vi"
    assert language_of("周五下午三点在三楼会议室给新同事办欢迎会。") == "zh"
    assert language_of("ทีมงานตัดสินใจย้ายฐานข้อมูลไปยังเซิร์ฟเวอร์ใหม่") == "th"
    assert language_of("x = 1 + 2") == ""  # too few letters to tell
    assert language_of("def payment_processor(x): return x + 1") == ""  # no language sure enough
    # the identifier (about 70 MB) is dropped once unused, and loaded again by the next sync that labels
    assert not release_if_idle(60.0)
    assert release_if_idle(0.0) and not release_if_idle(0.0)
    assert language_of("Quản trị website tất cả các ngày") == "vi"


def test_each_language_is_read_on_the_scale_of_the_one_the_query_scores_highest() -> None:
    rng = np.random.default_rng(7)
    own, other = rng.normal(0.80, 0.05, 100), rng.normal(0.60, 0.02, 80)
    scores = np.concatenate([own, other, [0.99, -np.inf]]).astype(np.float32)
    codes = np.array([0] * 100 + [1] * 80 + [-1, 1], dtype=np.int16)
    maps = language_maps(scores, codes, big_groups(codes))
    assert maps[0] == pytest.approx((1.0, 0.0))
    mapped = scores.copy()
    apply_maps(mapped, codes, maps)
    assert mapped[100:180].mean() == pytest.approx(own.mean(), abs=1e-4)
    assert mapped[100:180].std() == pytest.approx(own.std(), abs=1e-4)
    assert mapped[180] == scores[180] and mapped[181] == -np.inf  # unknown language kept; left out stays out
    # the other language's best is now among the first language's best, where its cosine put it far below
    assert scores[100:180].max() < np.sort(own)[-60] and mapped[100:180].max() > np.sort(own)[-10]
    assert language_maps(scores[:100], codes[:100], big_groups(codes[:100])) == {}  # one language: left alone
    few = np.array([0] * 100 + [1] * (MIN_GROUP - 1), dtype=np.int16)
    assert big_groups(few) == [0]


def test_only_an_index_in_several_languages_is_mapped(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    for i, text in enumerate(ENGLISH):
        write(workspace / "memory" / "en" / f"e{i:02d}.md", text + "\n")
    memory = memory_factory()
    memory.sync()
    query = memory.embedder.embed_query("billing database")  # type: ignore[union-attr]
    alone = memory.vectors.scan(query, 10)
    assert alone.scales == {} and alone.language == {}
    ids = sorted(memory.store.chunk_ids(_everything()))
    assert set(memory.store.languages(ids).values()) == {"en"}
    write_notes(workspace)
    memory.sync()
    both = memory.vectors.scan(query, 10)
    assert set(both.scales) == {"en", "zh"}
    assert memory.status()["languages"] == {"en": len(ENGLISH), "zh": len(CHINESE) - 1}  # one zh note: unsure
    raw = memory.vectors.similarity(query, [cid for cid, _ in both.hits])
    for chunk_id, score in both.hits:  # each hit's score is its cosine on the common scale
        assert score == pytest.approx(both.calibrated(chunk_id, raw[chunk_id]), abs=2e-3)
    for path in ("memory/zh/z00.md", "memory/zh/z01.md"):
        (workspace / path).unlink()
    for i in range(len(CHINESE)):
        (workspace / "memory" / "zh" / f"z{i:02d}.md").unlink(missing_ok=True)
    memory.sync()
    assert memory.vectors.scan(query, 10).scales == {}  # the Chinese notes gone: one language again


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder(prep.prepare(DATA_DIR).path)


@pytest.mark.slow
def test_a_question_finds_its_answer_written_in_the_other_language(
    workspace: Path, agent_factory: Callable, embedder: LocalEmbedder
) -> None:
    write_notes(workspace)
    with AgentMemory(agent_factory(provider="local"), embedder) as memory:
        memory.sync()
        ids = sorted(memory.store.chunk_ids(_everything()))
        paths = {cid: row.path for cid, row in memory.store.chunks_by_ids(ids).items()}
        outranked = {}
        for question, answer in ACROSS:
            for mode in ("vector", "hybrid"):
                assert memory.search(question, mode=mode).results[0].path == answer, (question, mode)
            raw = memory.vectors.similarity(embedder.embed_query(question), ids)
            answer_score = next(raw[cid] for cid, path in paths.items() if path == answer)
            outranked[question] = sum(score > answer_score for score in raw.values())
        # what it corrects: by cosine alone, notes in the question's language outranked an answer
        assert max(outranked.values()) >= 3, outranked
        name, holder = IDENTIFIER
        assert memory.search(name).results[0].path == holder


def test_a_candidate_keyword_search_could_not_read_is_weighed_by_its_vector_alone() -> None:
    """In an index of several languages, keyword hits in one language say nothing of notes in another: those are
    weighed as if the keyword side had no evidence, as far as the vector side is confident."""
    from memoryd.search.fusion import Candidate, adaptive_fusion, keyword_reach
    from memoryd.store.vectors import VectorScan

    def candidates() -> list[Candidate]:
        return [
            Candidate(1, vector_score=0.70, text_score=1.0, vector_rank=2, text_rank=1),  # zh, matched by keyword
            Candidate(2, vector_score=0.60, text_score=0.8, vector_rank=3, text_rank=2),  # zh
            Candidate(3, vector_score=0.80, vector_rank=1),  # en: no keyword hit is in English
        ]

    languages = {1: "zh", 2: "zh", 3: "en"}
    mixed = VectorScan([], 0.2, 0.1, 1000, {"zh": (1.0, 0.0), "en": (1.3, -0.1)}, languages)
    assert keyword_reach(candidates(), mixed) == {"zh": 1.0, "en": 0.0}
    assert keyword_reach(candidates(), VectorScan([], 0.2, 0.1, 1000)) == {}  # one language: none measured

    def ranked(scan: VectorScan, evidence: float) -> list[int]:
        found = candidates()
        adaptive_fusion(
            found, 0.5, 0.5, has_vector=True, has_text=True, scan=scan, span=2.0,
            evidence=evidence, evidence_floor=0.4, evidence_span=0.6,
        )  # fmt: skip
        return [c.chunk_id for c in sorted(found, key=lambda c: -c.score)]

    assert ranked(mixed, evidence=1.0)[0] == 3  # the confident vector side's best, out of the keyword side's reach
    one_language = VectorScan([], 0.2, 0.1, 1000)
    assert ranked(one_language, evidence=1.0)[0] == 1  # the same lists in one language: keyword evidence counts
    unsure = VectorScan([], 0.2, 0.1, 1000, mixed.scales, languages)
    unsure.mean, unsure.std = 0.79, 0.01  # nothing stands out: the vector side takes nothing over
    assert ranked(unsure, evidence=1.0)[0] == 1


def test_memctl_status_names_the_languages_of_a_mixed_index() -> None:
    from memoryd_client.commands import status_line as _status_line

    agent = {
        "agent": "main",
        "workspace": "/ws",
        "files": 3,
        "chunks": 3,
        "embedded_chunks": 3,
        "vector_available": False,
    }
    assert "languages" not in _status_line({**agent, "languages": {"en": 120}})  # one language: nothing to say
    assert "  languages: zh 80, en 35 chunks" in _status_line({**agent, "languages": {"en": 35, "zh": 80}})
