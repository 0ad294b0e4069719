"""bench.knowledge: its synthetic year is deterministic and well formed, and its scoring runs end to end on a
small keyword-only corpus."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from bench.knowledge import (
    FACTS,
    Corpus,
    Fact,
    Statement,
    build_corpus,
    held_at,
    judge_before,
    judge_now,
    measure,
    write_workspace,
)
from bench.knowledge_data import LANGUAGES
from memoryd.config import EmbeddingConfig
from memoryd.search.statements import CHANGE, says_change
from memoryd.sources.transcripts import turns_of

SCRIPTS = {
    "zh": r"[\u4e00-\u9fff]",
    "th": r"[\u0e00-\u0e7f]",
    "vi": r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệịỉĩọỏốồổỗộớờởỡợụủứừửữựỳỷỹýàáèéìíòóùú]",
}


@pytest.fixture(scope="module")
def corpora() -> dict[str, Corpus]:
    return {lang: build_corpus(lang) for lang in LANGUAGES}


def test_the_same_seed_gives_the_same_year_and_another_seed_another() -> None:
    first, again, other = build_corpus("vi", 7, 20), build_corpus("vi", 7, 20), build_corpus("vi", 8, 20)
    assert first.files == again.files and first.questions == again.questions
    assert [f.statements for f in first.facts] == [f.statements for f in again.facts]
    assert first.files != other.files


def test_every_language_follows_the_same_plan(corpora: dict[str, Corpus]) -> None:
    shapes = {
        lang: [[(s.value, s.day, s.path.split("/")[0]) for s in fact.statements] for fact in corpus.facts]
        for lang, corpus in corpora.items()
    }
    assert all(shape == shapes["en"] for shape in shapes.values())


def test_each_facts_statements_are_dated_in_order_in_files_of_their_own(corpora: dict[str, Corpus]) -> None:
    corpus = corpora["en"]
    assert len(corpus.facts) == FACTS
    assert {len(f.statements) for f in corpus.facts} == {2, 3, 4}
    for fact in corpus.facts:
        days = [s.day for s in fact.statements]
        assert days == sorted(days) and len(set(days)) == len(days)
        assert len({s.path for s in fact.statements}) == len(days)
        assert len({s.value for s in fact.statements}) == len(days)
        assert fact.statements[0].kind in ("first", "clause")
        assert all(s.kind in ("names_old", "new_only", "clause") for s in fact.statements[1:])
    subjects_per_attribute: dict[str, set[str]] = {}
    for fact in corpus.facts:
        subjects_per_attribute.setdefault(fact.attribute, set()).add(fact.subject)
    assert min(len(s) for s in subjects_per_attribute.values()) >= 3


def test_every_statement_is_at_its_line(corpora: dict[str, Corpus]) -> None:
    for corpus in corpora.values():
        turns = {
            path: {t.line: t for t in turns_of(list(enumerate(text.splitlines(), 1)))}
            for path, text in corpus.files.items()
            if path.endswith(".jsonl")
        }
        for fact in corpus.facts:
            for statement in fact.statements:
                if statement.path.endswith(".md"):
                    assert statement.text in corpus.files[statement.path].splitlines()[statement.line - 1]
                else:
                    turn = turns[statement.path][statement.line]
                    assert statement.text in turn.text and turn.timestamp is not None
        assert any(p.endswith(".jsonl") for p in corpus.files) and any(p.endswith(".md") for p in corpus.files)


def test_daily_notes_hold_two_to_five_entries(corpora: dict[str, Corpus]) -> None:
    for corpus in corpora.values():
        for path, text in corpus.files.items():
            if path.endswith(".md"):
                assert re.fullmatch(r"memory/2025-\d\d-\d\d\.md", path)
                entries = [line for line in text.splitlines() if line and not line.startswith("#")]
                assert 2 <= len(entries) <= 5, (path, text)


def test_questions_ask_now_twice_and_before_once_in_each_language(corpora: dict[str, Corpus]) -> None:
    for lang, corpus in corpora.items():
        for index in range(len(corpus.facts)):
            kinds = sorted(q.kind for q in corpus.questions if q.fact == index)
            assert kinds == ["before", "now", "now"]
        now = [q for q in corpus.questions if q.kind == "now"]
        assert sum(q.timed for q in now) < len(now) / 3
        assert len({q.text for q in corpus.questions}) > len(corpus.questions) * 0.9
        if lang in SCRIPTS:
            written = [q for q in corpus.questions if re.search(SCRIPTS[lang], q.text.lower())]
            assert len(written) > len(corpus.questions) * 0.9, lang
        else:
            assert all(q.text.isascii() for q in corpus.questions)


def _fact(*places: tuple[str, int]) -> Fact:
    statements = [
        Statement(0, i, f"v{i}", dt.date(2025, 1, 1 + i), "first", "", path, line)
        for i, (path, line) in enumerate(places)
    ]
    return Fact("billing", "cache", statements)


def _hit(path: str, start: int, end: int) -> dict[str, object]:
    return {"path": path, "start_line": start, "end_line": start, "chunk_start_line": start, "chunk_end_line": end}


def test_a_statement_is_held_by_the_first_result_whose_chunk_covers_its_line() -> None:
    fact = _fact(("memory/a.md", 3), ("memory/b.md", 7), ("memory/c.md", 4))
    results = [_hit("memory/b.md", 1, 5), _hit("memory/a.md", 1, 9), _hit("memory/b.md", 6, 9)]
    assert [held_at(results, s) for s in fact.statements] == [1, 2, None]
    assert judge_now(results, fact) == (False, True)  # the current one is not found: it ranks below all
    assert judge_before(results, fact) and not judge_before(results, fact, top=2)
    newest_first = [_hit("memory/c.md", 1, 6), *results]
    assert judge_now(newest_first, fact) == (True, False)
    assert judge_now([], fact) == (False, False)


def test_scoring_runs_on_a_small_keyword_corpus(tmp_path: Path) -> None:
    corpus = build_corpus("en", 3, 12)
    found = measure(corpus, tmp_path, ("keyword",), EmbeddingConfig(provider="none"))
    row = found["keyword"]
    assert found["facts"] == 12 and row["now_questions"] == 24 and row["before_questions"] == 12
    for key in ("now_newest_above_older", "now_older_first", "now_newest_in_top10", "before_top3"):
        assert 0.0 <= row[key] <= 1.0
    assert row["now_newest_above_older"] + row["now_older_first"] <= 1.0
    assert row["now_newest_in_top10"] > 0 and row["p50_ms"] > 0
    write_workspace(build_corpus("en", 3, 6), tmp_path / "workspace")
    kept = {p.relative_to(tmp_path / "workspace").as_posix() for p in (tmp_path / "workspace").rglob("*.*")}
    assert kept == set(build_corpus("en", 3, 6).files)


def test_as_asked_every_statement_and_question_names_the_attribute_by_its_first_name() -> None:
    from bench.knowledge_data import ATTRIBUTES

    first_name = {a.key: a.names for a in ATTRIBUTES}

    def names(name: str, text: str) -> bool:  # Thai and Chinese are written with and without spaces around Latin
        return name.lower().replace(" ", "") in text.lower().replace(" ", "")

    for lang in LANGUAGES:
        varied, asked = build_corpus(lang, 5, 30), build_corpus(lang, 5, 30, "asked")
        assert [[(s.value, s.day) for s in f.statements] for f in asked.facts] == [
            [(s.value, s.day) for s in f.statements] for f in varied.facts
        ]
        for fact in asked.facts:
            first = first_name[fact.attribute][lang][0]
            assert all(s.kind != "clause" and names(first, s.text) for s in fact.statements), fact
        for question in asked.questions:
            assert names(first_name[asked.facts[question.fact].attribute][lang][0], question.text)
        synonyms = [
            s for f in varied.facts for s in f.statements if not names(first_name[f.attribute][lang][0], s.text)
        ]
        assert synonyms, lang  # the varied year does use other names


def test_the_hints_of_a_change_miss_no_line_that_says_one(corpora: dict[str, Corpus]) -> None:
    """says_change looks for CHANGE only in a text that holds one of its hints: on every line of the year, in each
    language and phrasing, it says what CHANGE does, and some lines say a change and some do not."""
    years = [*corpora.values(), *(build_corpus(lang, phrasing="asked") for lang in LANGUAGES)]
    lines = {line for corpus in years for text in corpus.files.values() for line in text.splitlines()}
    said = {line: bool(CHANGE.search(line)) for line in lines}
    assert {line for line in lines if says_change(line) != said[line]} == set()
    assert 0 < sum(said.values()) < len(lines)
