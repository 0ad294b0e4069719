"""bm25_topk, the ranking function keyword search gives FTS5: the scores of FTS5's own bm25(), to the last bit,
for the rows that can reach the k best; the others dropped before their lengths are read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.memory import AgentMemory
from memoryd.search.filters import Filters
from memoryd.search.keyword import BM25_WEIGHTS
from memoryd.sources.analyzer import match_expression, phrase_hits, query_terms
from memoryd.store import topk
from memoryd.store.rows import Match
from memoryd.store.sqlite import Store

from .conftest import write
from .test_search import NOTES, _random_notes

WEIGHTS = ", ".join(str(w) for w in BM25_WEIGHTS)
EXPRESSIONS = [
    '"w0"',
    '"w0" OR "w1"',
    '"w3" OR "w9" OR "w17"',
    '"w1" AND "w2"',
    '("w2" OR "w5") AND ("w0")',
    '"w4" OR exact : "w4" OR heading : "part"',
    '"w22"',
    '"nothing_holds_this"',
]


@pytest.fixture
def memory(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> AgentMemory:
    return _random_notes(workspace, memory_factory)


def _ranked(store: Store, query: str | Match, limit: int, loaded: bool, filters: Filters | None = None) -> list:
    store.rank_with_topk = loaded
    try:
        return store.bm25(query, BM25_WEIGHTS, limit, filters)
    finally:
        store.rank_with_topk = True


def test_it_is_built_and_loaded(memory: AgentMemory) -> None:
    assert topk.library() is not None
    assert memory.store.ranking_error is None
    assert (
        memory.store.reader.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'w0'"
            f" AND bm25_topk(chunks_fts, 1, '', {WEIGHTS}) > 0"
        ).fetchone()[0]
        >= 1
    )


@pytest.mark.parametrize("limit", [1, 3, 10, 1000])
def test_the_best_rows_and_their_scores_are_those_of_bm25(memory: AgentMemory, limit: int) -> None:
    path_filter = Filters.parse(None, "memory/r1", None, None, None)
    for expression in EXPRESSIONS:
        for filters in (None, path_filter):
            ours = _ranked(memory.store, expression, limit, True, filters)
            assert ours == _ranked(memory.store, expression, limit, False, filters), (expression, limit, filters)
    assert _ranked(memory.store, '"w0"', limit, True)  # the comparisons were not all of empty lists


@pytest.mark.parametrize(
    "query",
    [
        "payment_processor jwt retry",
        "thanh toán bằng thẻ",
        "支付系统 钱包",
        "ระบบชำระเงิน ลูกค้า",
        "getUserById hybrid.ts",
    ],
)
def test_the_hits_the_vocabulary_gives_are_those_fts5_counts(
    workspace: Path, memory_factory: Callable[..., AgentMemory], query: str
) -> None:
    """Keyword search hands bm25_topk each lone token's count from the vocabulary (and -1 for phrases, exact forms
    and characters, counted by FTS5): the scores are still bm25()'s, in every script."""
    for rel, text in NOTES.items():
        write(workspace / rel, text)
    memory = memory_factory()
    memory.sync()
    store = memory.store
    terms = query_terms(query)
    frequencies = store.document_frequencies(t for term in terms for t in term.phrase)
    for operator in ("OR", "AND"):
        expression = match_expression(terms, operator)
        hits = phrase_hits(terms, frequencies)
        assert len(hits) == expression.count('"') // 2  # one count per phrase
        ours = _ranked(store, Match(expression, hits), 10, True)
        assert ours == _ranked(store, expression, 10, False), (query, operator)
    assert _ranked(store, match_expression(terms, "OR"), 10, True)


def test_rows_that_cannot_reach_the_best_are_dropped_unscored(memory: AgentMemory) -> None:
    """A frequent word beside a rarer one: once three scores are kept, the rows holding only the frequent word
    cannot reach them and are dropped (NULL); no kept row's score changes; with room for every row, none is."""
    sql = f"SELECT bm25_topk(chunks_fts, ?, '', {WEIGHTS}) FROM chunks_fts WHERE chunks_fts MATCH '\"w0\" OR \"w12\"'"
    reader = memory.store.reader
    every = [r[0] for r in reader.execute(sql, (100_000,))]
    three = [r[0] for r in reader.execute(sql, (3,))]
    assert None not in every and len(every) > 20
    dropped = sum(s is None for s in three)
    assert dropped > len(three) // 2
    assert all(s == e for s, e in zip(three, every, strict=True) if s is not None)
    assert sorted(s for s in three if s is not None)[-3:] == sorted(every)[-3:]


def test_without_the_extension_keyword_search_ranks_with_bm25_and_says_why(
    memory: AgentMemory, workspace: Path, memory_factory: Callable[..., AgentMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_it = memory.search("w3 w9 w17", mode="keyword").results
    assert memory.status()["keyword_ranking"] == "bm25_topk"
    memory.close()  # one owner per index at a time
    monkeypatch.setattr(topk, "library", lambda: None)
    without = memory_factory()
    assert without.store.ranking_error is not None and "not built" in without.store.ranking_error
    assert without.status()["keyword_ranking"] == "bm25"
    assert [(r.path, r.score) for r in without.search("w3 w9 w17", mode="keyword").results] == [
        (r.path, r.score) for r in with_it
    ]


def test_hits_that_are_not_integers_are_an_error(memory: AgentMemory) -> None:
    import apsw

    sql = f"SELECT bm25_topk(chunks_fts, 3, ?, {WEIGHTS}) FROM chunks_fts WHERE chunks_fts MATCH 'w0'"
    with pytest.raises(apsw.MismatchError):
        memory.store.reader.execute(sql, ("1.0",)).fetchall()
    assert memory.store.reader.execute(sql, ("-1",)).fetchall()
