from __future__ import annotations

import hashlib
import itertools

from memoryd.sources.markdown import chunk_markdown, split_lines
from memoryd.sources.text import estimate_tokens


def _assert_lines_match(text: str, chunks: list) -> None:
    lines = split_lines(text)
    for chunk in chunks:
        window = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.text in window, (chunk.start_line, chunk.end_line)
        first = chunk.text.split("\n")[0]
        assert first.strip() in lines[chunk.start_line - 1]


def test_headings_start_chunks_and_give_context() -> None:
    text = "# Project\nintro line\n\n## Auth\nJWT with 24h expiry\n\n### Tokens\nrefresh daily\n\n## Billing\nstripe\n"
    chunks = chunk_markdown(text)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (4, 5), (7, 8), (10, 11)]
    assert [c.heading for c in chunks] == ["Project", "Project > Auth", "Project > Auth > Tokens", "Project > Billing"]
    # The chunk starting at its heading carries only the parents as extra context.
    assert chunks[2].context == "Project > Auth"
    assert chunks[2].embed_input.startswith("Project > Auth\n### Tokens")
    assert chunks[0].context == ""
    _assert_lines_match(text, chunks)


def test_budget_overlap_and_line_numbers() -> None:
    lines = [f"line {i} " + "word " * 18 for i in range(1, 121)]  # ~25 tokens a line
    text = "\n".join(lines) + "\n"
    chunks = chunk_markdown(text, max_tokens=100, overlap_tokens=30)
    assert len(chunks) > 5
    for chunk in chunks:
        assert estimate_tokens(chunk.text) <= 110
    for before, after in itertools.pairwise(chunks):
        assert after.start_line <= before.end_line, "consecutive chunks overlap"
        assert after.start_line > before.start_line
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 120
    _assert_lines_match(text, chunks)


def test_fenced_code_is_not_cut_unless_it_alone_is_too_big() -> None:
    code = "```python\n" + "\n".join(f"x{i} = {i}  # value" for i in range(12)) + "\n```"
    text = "intro " * 60 + "\n" + code + "\nafter\n"
    chunks = chunk_markdown(text, max_tokens=100, overlap_tokens=20)
    holding = [c for c in chunks if "x0 = 0" in c.text]
    assert holding and "```python" in holding[0].text and "x11 = 11" in holding[0].text
    big = "```\n" + "\n".join(f"line_{i} = compute({i})" for i in range(300)) + "\n```\n"
    pieces = chunk_markdown(big, max_tokens=100, overlap_tokens=20)
    assert len(pieces) > 3
    assert all(estimate_tokens(c.text) <= 110 for c in pieces)
    _assert_lines_match(big, pieces)


def test_very_long_lines_are_split_on_the_same_line() -> None:
    line = " ".join(f"Sentence {i} tells something new." for i in range(400))
    text = f"# Title\n\n{line}\n"
    chunks = chunk_markdown(text, max_tokens=100, overlap_tokens=20)
    assert len(chunks) > 10
    assert chunks[0].start_line == 1  # the title stays with the first piece
    assert all(c.start_line == c.end_line == 3 for c in chunks[1:])
    assert all(estimate_tokens(c.text) <= 110 for c in chunks)
    joined = " ".join(c.text for c in chunks)
    assert "Sentence 0 tells" in joined and "Sentence 399 tells" in joined
    unbroken = "x" * 5000
    pieces = chunk_markdown(unbroken, max_tokens=100, overlap_tokens=0)
    assert "".join(p.text for p in pieces) == unbroken


def test_dense_scripts_count_one_token_per_character() -> None:
    text = "支付系统" * 300
    chunks = chunk_markdown(text, max_tokens=100, overlap_tokens=10)
    assert all(len(c.text) <= 100 for c in chunks)
    assert len(chunks) >= 12


def test_hashes_are_sha256_of_the_embedding_input() -> None:
    chunks = chunk_markdown("# A\nalpha\n## B\nbeta\n")
    for chunk in chunks:
        assert chunk.hash == hashlib.sha256(chunk.embed_input.encode()).hexdigest()
    assert len({c.hash for c in chunks}) == len(chunks)


def test_broken_markdown_still_chunks() -> None:
    text = "# Unclosed fence\n```\ncode forever\n#### not a heading inside code\n\r\nmore\x00odd\ufffd\n"
    chunks = chunk_markdown(text)
    assert chunks and chunks[0].start_line == 1
    assert all("not a heading" not in c.heading for c in chunks)
    assert chunk_markdown("") == [] and chunk_markdown("\n\n  \n") == []


def test_a_heading_never_makes_a_chunk_alone() -> None:
    """A long line with no sentence ends (Thai is written so) is cut to the budget; the heading above it goes
    with the first piece rather than alone, where it would match every question about its section alike."""
    thai = " ".join(["ทีมรับของแพนเธอร์สถอดใจที่คะแนนได้อันดับที่หกของลีก"] * 60)
    for text in (f"# Super Bowl 50\n\n{thai}\n", f"## Notes\n\n\n{'x' * 2000}\n"):
        chunks = chunk_markdown(text, max_tokens=100, overlap_tokens=20)
        assert len(chunks) > 1
        assert chunks[0].start_line == 1 and "\n" in chunks[0].text
        assert all(c.text.strip().lstrip("#").strip() not in ("Super Bowl 50", "Notes") for c in chunks)
        assert all(estimate_tokens(c.text) <= 110 for c in chunks)
        _assert_lines_match(text, chunks)


def test_token_estimate_follows_the_script() -> None:
    """Alphabetic scripts written without spaces (Thai, Lao, Khmer, Burmese) take about three characters per
    model token, CJK about one, Latin about four; a Thai note is cut into chunks of the budget, not a third."""
    thai = "ทีมรับของแพนเธอร์สถอดใจที่คะแนนได้อันดับที่หก" * 10
    assert estimate_tokens(thai) == -(-len(thai) // 3)
    assert estimate_tokens("黑豹队的防守只丢了") == 9
    assert estimate_tokens("payment processor") == 5
    assert estimate_tokens("Kawann Short ทีมรับ 黑豹") == 8  # 14 other characters / 4 + 6 Thai / 3 + 2 CJK, rounded up
    assert estimate_tokens("Kawann Short ทีมรับ ทีมรับ 黑豹") == 10  # 15 / 4 + 12 / 3 + 2 = 9.75
    paragraph = " ".join([thai[:90]] * 12)  # ~1,090 characters, about 365 tokens
    assert len(chunk_markdown(f"# Title\n\n{paragraph}\n")) == 1
