"""Every stage that works on user text stays linear on long unbroken runs of any character class.

A backtracking pattern over a 100,000-character word froze the whole daemon for 43 s (and a 999,000-character
one for over 20 minutes): Python's `re` holds the GIL for its whole scan. Each case here runs the full path a
note's text takes (redaction, chunking, tags, the keyword analyzer, snippets, transcripts, queries) over a
300,000-character run. Linear work takes well under a second per case; a quadratic stage takes minutes, so the
child process's deadline below is a hang guard, not a speed assertion."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model

RUN = 300_000
MOTIFS = [
    "w", "W", "9", " ", "\t", "\n", "\r\n", "-", "_", ".", ":", "/", "@", "#", "=", "'", '"', "<", ">", "`", "*", "|",
    "\\", "é", "ệ", "\u0301", "中", "ก", "\u0e31", "あ", "한", "😀", "\u200b", "\x0b",
    "a:", "a-", "a.", "a/", "a@", "aB", "Ab", "A1", "1a", "a_b", "- ", "# ", "> ", "| ", "1. ", "```\n", "~~~\n",
    "a://", "a://b:", "<!-- type:", "<!--", "-->", "-----BEGIN RSA PRIVATE KEY-----\n", "sk-", "sk-ant-", "Bearer ",
    "password=", "api_key: ", "AKIA", "eyJ", "eyJa.", "ghp_", "http://", "2026-01-01", "---\n", "\n\n",
]  # fmt: skip

CHILD = textwrap.dedent(
    """
    import json, sys
    from memoryd.search.snippets import best_snippet
    from memoryd.sources.analyzer import fts_row, query_terms, snippet_words
    from memoryd.sources.markdown import chunk_markdown, split_lines
    from memoryd.sources.metadata import annotate
    from memoryd.sources.redact import Redactor
    from memoryd.sources.transcripts import chunk_turns, turns_of

    redact = Redactor.create([r"internal-[a-z0-9]+"])
    for motif in json.loads(sys.stdin.read()):
        text = (motif * (RUN // len(motif) + 1))[:RUN]
        clean = redact(text)
        assert len(split_lines(clean)) == len(split_lines(text)), motif  # redaction keeps line numbers
        chunks = annotate(chunk_markdown(clean, 400, 80), clean, "memory/2026-01-01.md", 0.0)
        assert chunks or not clean.strip(), motif
        for chunk in chunks:
            fts_row(chunk.text, chunk.heading)
        words = {w: 1.0 for w in snippet_words(text[:8192])}
        for chunk in chunks[:50]:
            best_snippet(chunk.text, lambda i: i, words)
        query_terms(text[:8192])
        line = json.dumps({"role": "user", "content": text})
        turns = list(turns_of([(1, line)]))
        chunk_turns(turns, 400, 80)
        print(repr(motif), flush=True)
    """
).replace("RUN", str(RUN))


@pytest.mark.parametrize("part", range(3))
def test_every_text_stage_finishes_on_long_runs_of_every_character_class(part: int) -> None:
    motifs = MOTIFS[part::3]
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(json.dumps(motifs), timeout=240)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        done = out.strip().splitlines()
        stuck = motifs[len(done)] if len(done) < len(motifs) else "?"
        pytest.fail(f"text work did not finish (a stage is superlinear): stuck on {stuck!r} after {len(done)} motifs")
    assert proc.returncode == 0, err[-3000:]
    assert len(out.strip().splitlines()) == len(motifs)
