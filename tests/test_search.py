from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.config import QueryConfig
from memoryd.memory import AgentMemory
from memoryd.search.hybrid import SearchError
from memoryd.sources.analyzer import match_expression, query_terms
from memoryd.store.sqlite import Store

from .conftest import write

NOTES = {
    "MEMORY.md": "# Atlas\n\n## Auth\nWe decided to use JWT with 24h expiry for authentication.\n",
    "memory/code.md": "# Code\nThe payment_processor module calls getUserById from src/memory/hybrid.ts on retry.\n",
    "memory/vi.md": "# Thanh toán\nKhách hàng muốn thanh toán bằng thẻ tín dụng. Đồng ý với đề xuất.\n",
    "memory/zh.md": "# 决定\n我们决定使用新的支付系统。钱包服务下周上线。\n",
    "memory/ja.md": "# 決定\n東京のサーバーを使うことにした。\n",
    "memory/th.md": "# ตัดสินใจ\nเราตัดสินใจใช้ระบบชำระเงินใหม่สำหรับลูกค้า\n",
    "memory/th-latin.md": "# งาน\nย้ายCIของbillingจากCircleCIไปGitLab CIแล้ว\n",
    "memory/zh-latin.md": "# 发布\n把checkout的部署从Helm换成ArgoCD了\n",
    "memory/lo.md": "# ກອງປະຊຸມ\nພວກເຮົາຕັດສິນໃຈໃຊ້ລະບົບໃໝ່\n",
    "memory/km.md": "# កិច្ចប្រជុំ\nយើងសម្រេចចិត្តប្រើប្រព័ន្ធថ្មី\n",
    "memory/my.md": "# အစည်းအဝေး\nကျွန်ုပ်တို့ စနစ်အသစ်ကို သုံးရန် ဆုံးဖြတ်ခဲ့သည်\n",
    "memory/other.md": "# Groceries\nBuy apples, bananas and oat milk on Saturday.\n",
}


@pytest.fixture
def memory(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> AgentMemory:
    for rel, text in NOTES.items():
        write(workspace / rel, text)
    mem = memory_factory()
    mem.sync()
    return mem


def top_path(memory: AgentMemory, query: str, mode: str = "keyword") -> str | None:
    results = memory.search(query, mode=mode).results
    return results[0].path if results else None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("payment_processor", "memory/code.md"),
        ("getUserById", "memory/code.md"),
        ("getuserbyid", "memory/code.md"),
        ("src/memory/hybrid.ts", "memory/code.md"),
        ("hybrid.ts", "memory/code.md"),
        ("thanh toán", "memory/vi.md"),
        ("thanh toan", "memory/vi.md"),
        ("dong y", "memory/vi.md"),
        ("tín dụng", "memory/vi.md"),
        ("支付", "memory/zh.md"),
        ("钱", "memory/zh.md"),
        ("支付系统", "memory/zh.md"),
        ("東京", "memory/ja.md"),
        ("サーバー", "memory/ja.md"),
        ("ชำระเงิน", "memory/th.md"),
        ("ลูกค้า", "memory/th.md"),
        ("ระบบ", "memory/th.md"),  # a word inside a longer one
        ("ระบบชำระเงินใหม่สำหรับใคร", "memory/th.md"),  # a question, segmented into words
        # Latin words written against Thai or Chinese with no space between: words of their own
        ("billing ใช้ CI ตัวไหน", "memory/th-latin.md"),
        ("GitLab", "memory/th-latin.md"),
        ("ArgoCD", "memory/zh-latin.md"),
        ("checkout 部署", "memory/zh-latin.md"),
        ("ລະບົບ", "memory/lo.md"),
        ("ប្រព័ន្ធ", "memory/km.md"),
        ("စနစ်", "memory/my.md"),
        ("JWT expiry", "MEMORY.md"),
        ("JWT expiry nonexistentword", "MEMORY.md"),
    ],
)
def test_keyword_search_in_every_script(memory: AgentMemory, query: str, expected: str) -> None:
    assert top_path(memory, query) == expected


RARE = ["quartz", "mango", "violet", "copper", "saffron"]


def _term_notes(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> AgentMemory:
    """Ten notes: "lantern" in six, "heron" in three, each RARE word in one."""
    for i in range(10):
        words = ["lantern"] * (i < 6) + ["heron"] * (i < 3) + RARE[i : i + 1] + [f"filler{i}"]
        write(workspace / "memory" / f"n{i}.md", f"# Note {i}\n{' '.join(words)} here\n")
    memory = memory_factory()
    memory.sync()
    return memory


def test_only_terms_in_most_chunks_are_dropped_from_a_long_query(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    """A term in more than half of the chunks gets no weight from BM25 and is dropped when rarer ones remain; one
    in a third of them still counts (Vietnamese syllables recur across words: dropping them cost XQuAD vi keyword
    MRR@10 0.06)."""
    from memoryd.search.keyword import informative_terms
    from memoryd.sources.analyzer import query_terms

    memory = _term_notes(workspace, memory_factory)
    kept = {t.phrase[0] for t in informative_terms(memory.store, query_terms("lantern heron " + " ".join(RARE)))}
    assert "lantern" not in kept and "heron" in kept and set(RARE) <= kept
    assert {t.phrase[0] for t in informative_terms(memory.store, query_terms("lantern heron"))} == {"lantern", "heron"}
    hits = memory.search("heron quartz mango violet copper saffron", mode="keyword").results
    assert hits[0].path == "memory/n0.md"  # heron and quartz: the only note with both


def test_low_weight_terms_go_once_their_postings_are_costly(
    workspace: Path, memory_factory: Callable[..., AgentMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a large index a term in a fifth of the chunks (little BM25 weight, a long posting list) is dropped too;
    COSTLY_POSTINGS stands in here for a posting list of 50,000 chunks."""
    from memoryd.search import keyword
    from memoryd.sources.analyzer import query_terms

    memory = _term_notes(workspace, memory_factory)
    query = query_terms("heron " + " ".join(RARE))
    assert "heron" in {t.phrase[0] for t in keyword.informative_terms(memory.store, query)}
    monkeypatch.setattr(keyword, "COSTLY_POSTINGS", 2)
    assert {t.phrase[0] for t in keyword.informative_terms(memory.store, query)} == set(RARE)


def test_common_terms_only_score_what_rarer_terms_found_unless_that_is_too_little(
    workspace: Path, memory_factory: Callable[..., AgentMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """RECRUIT_POSTINGS stands in here for a posting list of 20,000 chunks: "heron" (in three notes) then scores
    the chunks "quartz" and "mango" found, with the same scores as when every term recruits, and the notes holding
    only "heron" come back when the rare terms find fewer chunks than asked for."""
    from memoryd.search import keyword

    memory = _term_notes(workspace, memory_factory)
    store = memory.store

    def ranked(query: str, limit: int) -> list[tuple[int, float]]:
        return [(h.chunk_id, round(h.bm25, 9)) for h in keyword.keyword_search(store, query, limit)]

    full = {(q, n): ranked(q, n) for q, n in (("heron quartz mango", 2), ("heron quartz", 3))}
    calls: list[list[str]] = []
    real = store.bm25_many

    def spy(queries, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append([q.expression for q in queries])
        return real(queries, *args, **kwargs)

    monkeypatch.setattr(store, "bm25_many", spy)
    monkeypatch.setattr(keyword, "RECRUIT_POSTINGS", 2)
    assert ranked("heron quartz mango", 2) == full["heron quartz mango", 2]
    assert calls[-1][0] == '("quartz" OR "mango") AND ("heron")'  # heron recruited nothing
    # "quartz" finds one note of the three asked for: the notes holding only "heron" are ranked too
    split = ranked("heron quartz", 3)
    assert split == full["heron quartz", 3] and len(split) == 3


def _random_notes(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> AgentMemory:
    """Notes whose sections hold "w0" (in about 45% of them) to "w23" (in about 1%) each with odds falling by a
    sixth, one to three times, among fillers that vary their lengths: scores differ by frequency and length."""
    import random

    rng = random.Random(5)
    for n in range(80):
        sections = []
        for _ in range(rng.randint(1, 3)):
            words = [f"w{i}" for i in range(24) if rng.random() < 0.45 * 0.83**i for _ in range(rng.randint(1, 3))]
            words += [f"filler{rng.randint(0, 999)}" for _ in range(rng.randint(0, 25))]
            rng.shuffle(words)
            sections.append(" ".join(words) or "empty")
        write(workspace / "memory" / f"r{n}.md", "".join(f"## Part {s}\n{text}\n\n" for s, text in enumerate(sections)))
    memory = memory_factory()
    memory.sync()
    return memory


def _every_chunk_ranked(store: Store, query: str, limit: int) -> list[float]:
    """The top scores when every chunk holding any term is ranked, those holding all of them boosted."""
    from memoryd.search import keyword

    terms = keyword.informative_terms(store, query_terms(query))
    scores = dict(store.bm25(match_expression(terms, "OR"), keyword.BM25_WEIGHTS, 10_000))
    if len(terms) > 1:
        for chunk_id, score in store.bm25(match_expression(terms, "AND"), keyword.BM25_WEIGHTS, 10_000):
            scores[chunk_id] = score * keyword.ALL_TERMS_BOOST
    return [round(s, 9) for s in sorted(scores.values(), reverse=True)[:limit]]


def test_the_chunks_holding_every_term_bound_what_the_others_must_score(
    workspace: Path, memory_factory: Callable[..., AgentMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the chunks holding every term fill the limit, the last of them bounds the rest (MaxScore): a term too
    weak to reach it alone only scores, and chunks holding none of the stronger terms are never ranked. The top
    scores stay those of ranking every chunk that holds any term, for short and long queries alike."""
    from memoryd.search import keyword

    memory = _random_notes(workspace, memory_factory)
    store = memory.store
    ran: list[str] = []
    real_one, real_many = store.bm25, store.bm25_many

    def one(query, *args, **kwargs):  # type: ignore[no-untyped-def]
        ran.append(getattr(query, "expression", query))
        return real_one(query, *args, **kwargs)

    def many(queries, *args, **kwargs):  # type: ignore[no-untyped-def]
        ran.extend(q.expression for q in queries)
        return real_many(queries, *args, **kwargs)

    monkeypatch.setattr(store, "bm25", one)
    monkeypatch.setattr(store, "bm25_many", many)
    bounded = 0
    short = ["w0 w1", "w1 w2", "w0 w5", "w3 w9", "w1 w22"]
    for query in [*short, "w2 w3 w4", "w0 w1 w2 w3", "w7 w12 w20", "w0 w4 w8 w16"]:
        for limit in (3, 8, 20):
            ran.clear()
            hits = keyword.keyword_search(store, query, limit)
            searched = list(ran)
            assert [round(h.bm25, 9) for h in hits] == _every_chunk_ranked(store, query, limit), (query, limit)
            anything = " OR ".join(f'"{w}"' for w in query.split())
            bounded += searched[0] == " AND ".join(f'"{w}"' for w in query.split()) and anything not in searched
    assert bounded >= 6  # the bound spared the any-term query for the short queries of frequent words
    for df, term in keyword.weighed_terms(store, query_terms("w0 w2 w5 w9 w14")):
        best = real_one(f'"{term.phrase[0]}"', keyword.BM25_WEIGHTS, 1)[0][1]
        assert best < keyword._ceiling(df, term, store.chunk_count()) < 1.5 * best  # a ceiling, and a close one

    monkeypatch.setattr(keyword, "_expected_complete", lambda weighed, chunks: 0.0)
    ran.clear()
    keyword.keyword_search(store, "w0 w1", 8)
    assert '"w0" OR "w1"' in ran  # without the bound every chunk holding either word is ranked


def test_side_by_side_fts_queries_answer_as_one_by_one(memory: AgentMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    from memoryd.search.filters import Filters
    from memoryd.store.sqlite import keyword as store

    monkeypatch.setattr(store, "PARALLEL_FTS_CHUNKS", 1)

    expressions = ['"jwt"', '"payment_processor" OR "jwt"', '"groceri"', '"nothing_matches_this"']
    for filters in (None, Filters.parse(None, "memory/", None, None, None)):
        alone = [memory.store.bm25(e, (1.0, 0.25, 1.0, 0.5), 5, filters) for e in expressions]
        assert memory.store.bm25_many(expressions, (1.0, 0.25, 1.0, 0.5), 5, filters) == alone
    assert any(alone) and memory.store._fts_pool is not None  # the side queries ran on the FTS threads


@pytest.mark.parametrize(
    "query", ['"JWT', "JWT*", "auth: JWT", "-JWT", "(JWT", "NEAR(JWT expiry)", "JWT OR", "AND", "^JWT", "{body}: x"]
)
def test_fts_syntax_is_data(memory: AgentMemory, query: str) -> None:
    response = memory.search(query, mode="keyword")
    assert response.mode == "keyword"
    if "JWT" in query:
        assert response.results and response.results[0].path == "MEMORY.md"


def test_punctuation_only_query_finds_nothing_without_error(memory: AgentMemory) -> None:
    assert memory.search("?!* ---", mode="keyword").results == []


def test_text_scores_are_graded_not_all_one(memory: AgentMemory) -> None:
    results = memory.search("JWT authentication payment_processor retry apples", mode="keyword", max_results=10).results
    scores = [r.text_score for r in results]
    assert scores[0] == 1.0
    assert len(set(scores)) > 1 and min(scores) < 1.0
    assert scores == sorted(scores, reverse=True)


def test_result_shape_citation_and_snippet(workspace: Path, memory: AgentMemory) -> None:
    long_note = (
        "# Long\n"
        + "\n".join(f"filler line {i} about nothing much" for i in range(60))
        + "\nthe zebra_migration finished\n"
        + "\n".join(f"tail line {i}" for i in range(20))
        + "\n"
    )
    write(workspace / "memory" / "long.md", long_note)
    memory.sync()
    result = memory.search("zebra_migration", mode="keyword").results[0]
    assert result.path == "memory/long.md" and result.source == "memory"
    assert len(result.snippet) <= 700
    assert "zebra_migration" in result.snippet
    assert result.citation == f"memory/long.md#L{result.start_line}-L{result.end_line}"
    lines = long_note.split("\n")
    assert result.snippet == "\n".join(lines[result.start_line - 1 : result.end_line])


def test_hybrid_keeps_keyword_only_hits_above_min_score(memory: AgentMemory) -> None:
    response = memory.search("payment_processor", min_score=0.35)
    assert response.mode == "hybrid"
    assert response.results[0].path == "memory/code.md"
    assert response.results[0].text_score == 1.0
    assert response.results[0].vector_score is not None


def test_min_score_and_max_results(memory: AgentMemory) -> None:
    many = memory.search("the a of JWT apples payment", mode="keyword", max_results=2, min_score=0.0)
    assert len(many.results) == 2
    none = memory.search("JWT", mode="keyword", min_score=1.01)
    assert none.results == []


def test_rrf_fusion_is_offered(memory: AgentMemory) -> None:
    response = memory.search("JWT authentication expiry", fusion="rrf")
    assert response.fusion == "rrf" and response.results[0].path == "MEMORY.md"
    assert 0 < response.results[0].score <= 1.0


def test_vector_mode_uses_vectors_only(memory: AgentMemory) -> None:
    response = memory.search("JWT authentication expiry", mode="vector")
    assert response.mode == "vector"
    assert all(r.text_score is None for r in response.results)
    assert response.results[0].path == "MEMORY.md"


def test_without_embeddings_search_is_keyword_only(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> None:
    write(workspace / "MEMORY.md", NOTES["MEMORY.md"])
    mem = memory_factory(provider="none")
    mem.sync()
    for mode in ("hybrid", "vector"):
        response = mem.search("JWT", mode=mode)
        assert response.mode == "keyword" and response.degraded
        assert response.results[0].path == "MEMORY.md"
    assert mem.status()["vector_available"] is False


def test_sources_filter(memory: AgentMemory) -> None:
    assert memory.search("JWT", sources=["sessions"]).results == []
    assert memory.search("JWT", sources=["memory"]).results


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"query": ""}, "empty"),
        ({"query": 5}, "string"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "max_results": 0}, "max_results"),
        ({"query": "x", "max_results": "3"}, "max_results"),
        ({"query": "x", "min_score": "high"}, "min_score"),
        ({"query": "x", "sources": ["email"]}, "source"),
        ({"query": "x" * 9000}, "longer"),
    ],
)
def test_bad_requests_are_clear_errors(memory: AgentMemory, kwargs: dict, message: str) -> None:
    query = kwargs.pop("query")
    with pytest.raises(SearchError, match=message):
        memory.search(query, **kwargs)


def test_query_settings_come_from_config(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> None:
    for i in range(10):
        write(workspace / "memory" / f"n{i}.md", f"# Note {i}\nshared topic kiwi number {i}\n")
    mem = memory_factory(query=QueryConfig(max_results=3))
    mem.sync()
    assert len(mem.search("kiwi").results) == 3


def test_a_repeated_query_is_embedded_once(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> None:
    from memoryd.embeddings.hashing import HashingEmbedder

    class QueryCounter(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__(64)
            self.queries: list[str] = []

        def embed_query(self, text: str):  # type: ignore[no-untyped-def]
            self.queries.append(text)
            return super().embed_query(text)

    write(workspace / "memory" / "a.md", "# A\nthe kiwi orchard needs water\n")
    embedder = QueryCounter()
    memory = memory_factory(embedder)
    memory.sync()
    first = memory.search("kiwi orchard", mode="hybrid").results
    again = memory.search("kiwi orchard", mode="hybrid").results
    memory.search("water", mode="hybrid")
    assert embedder.queries == ["kiwi orchard", "water"]
    assert [r.score for r in first] == [r.score for r in again]


def test_the_int8_matrix_finds_what_float32_finds_and_scores_within_its_precision(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    import numpy as np

    from memoryd.store.sqlite.matrix import quantize

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((500, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    codes, scales = quantize(vectors)
    assert codes.dtype == np.int8 and np.abs(codes.astype(np.float32) * scales[:, None] - vectors).max() < 0.01
    for i in range(40):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\nnote number {i} about topic {i % 7}\n")
    memory = memory_factory()
    memory.sync()
    ids, matrix = memory.store.all_vectors()
    query = matrix[5] + 0.01
    query /= np.linalg.norm(query)
    exact = matrix @ query
    hits = memory.vectors.search(query, 5)
    order = np.argsort(-exact)
    assert hits[0][0] == int(ids[order[0]])  # the nearest one first
    assert {cid for cid, _ in hits} <= {int(ids[i]) for i in order[:8]}  # the rest among the nearest
    # the reported score is the cosine to within half an int8 step per component: |error| <= scale/2 * |q|_1
    _, row_scales = quantize(matrix)
    bound = row_scales / 2 * np.abs(query).sum() + 1e-6
    everyone = memory.vectors.similarity(query, [int(i) for i in ids])
    assert len(everyone) == len(ids)
    for row, cid in enumerate(ids):
        assert abs(everyone[int(cid)] - float(exact[row])) <= bound[row]
    for cid, score in hits:
        assert score == everyone[cid]


def test_a_large_scan_in_two_halves_scores_every_row_as_one_thread_does(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from memoryd.store.sqlite import matrix as vector

    rng = np.random.default_rng(5)
    codes = rng.integers(-127, 128, size=(10_000, 48), dtype=np.int8)
    scales = rng.random(10_000, dtype=np.float32)
    query = rng.standard_normal(48).astype(np.float32)
    alone = vector._approximate(codes, scales, 9_999, query)  # below PARALLEL_ROWS: one thread
    monkeypatch.setattr(vector, "PARALLEL_ROWS", 1_000)
    halves = vector._approximate(codes, scales, 9_999, query)
    assert np.array_equal(halves, alone) and len(halves) == 9_999
    with vector._SCAN_HELPER_FREE:  # another search holds the helper: this one scans alone, without waiting
        assert np.array_equal(vector._approximate(codes, scales, 9_999, query), alone)
    query_codes, query_scale = vector.quantize(query[None, :])
    products = codes[:9_999].astype(np.int64) @ query_codes[0].astype(np.int64)  # exact integer products
    assert np.allclose(alone, products * scales[:9_999] * query_scale[0], rtol=1e-5)
    # against the float32 query: within half a query step per component
    bound = scales[:9_999] * (np.abs(codes[:9_999]).astype(np.float32).sum(axis=1) * query_scale[0] / 2) + 1e-3
    assert np.all(np.abs(alone - (codes[:9_999].astype(np.float32) @ query) * scales[:9_999]) <= bound)


def test_the_matrix_grows_in_bounded_steps_and_compacts(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    for i in range(60):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\nnote number {i}\n")
    memory = memory_factory()
    memory.sync()
    assert len(memory.vectors) == 60
    row = memory.vectors.dims + 4 + 8 + 2  # int8 codes, a float32 scale, an int64 id, an int16 language

    def id_map() -> int:  # a row number per chunk id, up to the largest
        return 4 * (int(memory.store.all_vectors()[0].max()) + 1)

    assert memory.vectors.nbytes == 60 * row + id_map()  # a fresh load keeps no spare room
    for i in range(60, 65):
        write(workspace / "memory" / f"n{i}.md", f"# N{i}\nnote number {i}\n")
    memory.sync()
    grown = memory.vectors.nbytes
    assert 65 * row + id_map() < grown <= (65 + 1024) * row + id_map() + 4 * 1024  # a bounded step, not doubled
    for i in range(50):
        (workspace / "memory" / f"n{i}.md").unlink()
    memory.sync()
    assert len(memory.vectors) == 15 and memory.vectors.nbytes == grown  # holes, until compacted
    memory.vectors.compact()
    assert memory.vectors.nbytes == 15 * row + id_map()  # holes and spare room given back
    assert memory.vectors.similarity(memory.store.all_vectors()[1][0], [1, 2, 3]) == {}  # removed chunks are gone
    ids = set(memory.store.all_vectors()[0].tolist())
    assert {cid for cid, _ in memory.vectors.search(memory.store.all_vectors()[1][0], 3)} <= ids


def test_keyword_evidence_tells_a_held_query_from_a_stray_match(memory: AgentMemory) -> None:
    """The best hit holding every query word scores about the query's whole weight; one that shares a single word
    with a question mostly in another script scores a small part of it."""
    from memoryd.search.keyword import keyword_evidence, keyword_search

    held = "JWT expiry authentication"
    stray = "JWT 我们应该如何处理认证的过期时间问题"  # one shared token, the rest in words no note holds
    strong = keyword_evidence(memory.store, query_terms(held), keyword_search(memory.store, held, 10))
    weak = keyword_evidence(memory.store, query_terms(stray), keyword_search(memory.store, stray, 10))
    assert strong is not None and weak is not None
    assert strong > 0.8 and weak < 0.35 and weak < strong / 3
    assert keyword_evidence(memory.store, query_terms("nothing matches zzqx"), []) is None  # no ranking to weigh


def test_adaptive_fusion_moves_unearned_keyword_weight_to_a_confident_vector_side() -> None:
    from memoryd.search.fusion import Candidate, adaptive_fusion
    from memoryd.store.vectors import VectorScan

    def fused(evidence: float, std: float) -> list[int]:
        cands = [
            Candidate(1, vector_score=0.85, text_score=1.0, text_rank=1, vector_rank=2),
            Candidate(2, vector_score=0.90, text_score=0.1, text_rank=2, vector_rank=1),
            Candidate(3, vector_score=0.30, vector_rank=3),
        ]
        scan = VectorScan([], 0.2, std, 1000)
        adaptive_fusion(
            cands, 0.5, 0.5, has_vector=True, has_text=True, scan=scan, span=2.0,
            evidence=evidence, evidence_floor=0.1, evidence_span=0.3,
        )  # fmt: skip
        return [c.chunk_id for c in sorted(cands, key=lambda c: -c.score)][:2]

    assert fused(evidence=1.0, std=0.05) == [1, 2]  # the keyword side holds the query: it keeps its weight
    assert fused(evidence=0.05, std=0.05) == [2, 1]  # a stray match: the confident vector side decides
    assert fused(evidence=0.05, std=1.0) == [1, 2]  # an unsure vector side takes nothing over

    def close_call(evidence: float) -> list[int]:
        cands = [
            Candidate(1, vector_score=0.80, text_score=1.0, text_rank=1, vector_rank=2),
            Candidate(2, vector_score=0.90, text_score=0.8, text_rank=2, vector_rank=1),
            Candidate(3, vector_score=0.30, vector_rank=3),
        ]
        adaptive_fusion(
            cands, 0.5, 0.5, has_vector=True, has_text=True, scan=VectorScan([], 0.2, 0.25, 1000), span=2.0,
            evidence=evidence, evidence_floor=0.3, evidence_span=0.4,
        )  # fmt: skip
        return [c.chunk_id for c in sorted(cands, key=lambda c: -c.score)][:2]

    # a vector side about a third sure (confidence 0.29) already outranks a stray keyword match (the weight moves
    # by a root of the confidence, TAKEOVER_POWER: in proportion to it, the stray match kept the lead), not a held one
    assert close_call(evidence=0.05) == [2, 1]
    assert close_call(evidence=1.0) == [1, 2]


def test_stemming_from_many_threads_gives_the_stems_one_thread_does() -> None:
    """Sync, reindex and searches analyse text on threads of their own; a stemmer shared between them garbled
    stems and raised IndexError (a reindex under search load failed)."""
    import random
    import sys
    import threading

    from memoryd.sources.analyzer import stem

    uncached = stem.__wrapped__
    rng = random.Random(1)
    endings = ["ational", "ization", "fulness", "iveness", "ing", "ed", "s", "ly"]
    words = ["".join(rng.choice("aeioulnrstcdpmgh") for _ in range(rng.randint(3, 12))) + rng.choice(endings)]
    words += ["".join(rng.choice("aeioulnrstcdpmgh") for _ in range(rng.randint(3, 12))) + e for e in endings * 300]
    expected = [uncached(w) for w in words]
    failures: list[str] = []

    def work() -> None:
        try:
            if [uncached(w) for w in words] != expected:
                failures.append("a stem differed")
        except Exception as exc:
            failures.append(repr(exc))

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often, as they do under load
    try:
        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert failures == []


def test_the_stemmer_in_c_stems_as_snowballs_own_porter_does() -> None:
    """PyStemmer, a dependency, is what snowballstemmer hands the analyzer (ten times faster); an index built by
    either holds the same tokens, so a checkout without it would still find what one with it wrote."""
    import random

    import snowballstemmer
    import Stemmer
    from snowballstemmer.porter_stemmer import PorterStemmer

    from memoryd.sources.analyzer import stem

    assert isinstance(snowballstemmer.stemmer("porter"), Stemmer.Stemmer)
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdeilmnoprstuvyz") for _ in range(rng.randint(3, 14))) for _ in range(20000)]
    words += [
        "relational",
        "generalization",
        "probability",
        "happiness",
        "ponies",
        "hoping",
        "conflated",
        "sensitivity",
        "agreed",
    ]
    reference = PorterStemmer()
    assert [stem.__wrapped__(w) for w in words] == [reference.stemWord(w) for w in words]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12: its count never moves")
def test_vector_search_takes_no_reference_from_none(memory: AgentMemory) -> None:
    """A C call that returns None without a reference, once per search, killed a long-running daemon when None's
    count reached zero ("none_dealloc"): simsimd.cdist with out= did (6.5.16)."""
    memory.search("heron", mode="vector")
    drops = []
    for attempt in range(3):  # other threads hold and free references to None too: a leak loses 400 every time
        before = sys.getrefcount(None)
        for i in range(400):
            memory.search(f"heron migration {attempt} {i}", mode="vector")
        drops.append(before - sys.getrefcount(None))
        if drops[-1] < 100:
            return
    raise AssertionError(f"None lost references on every run of 400 searches: {drops}")


def test_a_cjk_iteration_mark_stays_with_its_word() -> None:
    from memoryd.sources.analyzer import analyze

    assert analyze("佐々木さん").body.split()[0] == "佐々木"
    assert analyze("ย้ายCIของbilling").body.split() == ["ย้าย", "ci", "ของ", "bill"]


def test_rare_terms_that_find_too_little_widen_to_what_can_reach_the_page(
    workspace: Path, memory_factory: Callable[..., AgentMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the chunks the rarest terms find cannot fill the page against what the commoner ones could add, the
    commoner terms too weak to reach its last score still only score (MaxScore): the page is the one ranking every
    chunk holding any term gives, without ranking the chunks that hold the commonest terms alone."""
    from memoryd.search import keyword

    lines = []
    for i in range(120):
        words = ["in the ward"]
        words += ["adult"] * (i % 12 == 0) + ["tissue"] * (i % 10 == 0) + ["cells"] * (i % 2 == 0)
        words += ["quokka"] * (i in (7, 53)) + ["memory"] * (i in (3, 41, 43, 91))
        lines.append(f"## Entry {i}\n{' '.join(words)} note {i}\n")
    write(workspace / "memory" / "ward.md", "\n".join(lines))
    memory = memory_factory()
    memory.sync()
    store = memory.store
    question = "in adult tissue most cells are memory quokka"
    everything = [(h.chunk_id, round(h.bm25, 9)) for h in keyword.keyword_search(store, question, 5)]
    monkeypatch.setattr(keyword, "RECRUIT_POSTINGS", 6)  # only terms in at most 6 chunks recruit
    monkeypatch.setattr(keyword, "RECRUIT_SHARE", 0.0)
    asked: list[str] = []
    ranked = store.bm25_many
    monkeypatch.setattr(store, "bm25_many", lambda qs, *a: (asked.extend(q.expression for q in qs), ranked(qs, *a))[1])
    monkeypatch.setattr(store, "bm25", lambda q, *a: (asked.append(q.expression), Store.bm25(store, q, *a))[1])
    widened = [(h.chunk_id, round(h.bm25, 9)) for h in keyword.keyword_search(store, question, 5)]
    assert widened == everything
    anything = match_expression(keyword.informative_terms(store, query_terms(question)), "OR")
    assert anything not in asked, asked  # the chunks holding only "in" were never ranked
    assert any('"tissu"' in q.split(" AND ")[0] and '"cell"' not in q.split(" AND ")[0] for q in asked), asked
