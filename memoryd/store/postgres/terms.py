"""memoryd's keyword columns as PostgreSQL holds them, and BM25 over them as FTS5 computes it.

Sync hands every store the same four analysed columns (body, exact, heading, grams). FTS5 splits each column
with its unicode61 tokenizer; `column_tokens` splits them the same way, so both stores see the same tokens. A
chunk becomes a `tsvector` whose lexemes are those tokens (weight label A-D says the column; positions say the
order, with a gap between columns so that no phrase spans two), found through a GIN index, and a `jsonb` map of
each token's counts in the four columns packed into one integer (16 bits a column, body lowest), from which the SQL
of `score_sql` ranks the matching chunks by FTS5's bm25() formula (k1 1.2, b 0.75, per-column weights, IDF clamped
to 1e-6). `ts_rank` is never used: it is not BM25 and knows nothing of the per-column weights.

Packed, a chunk's map is a third of the size of one holding an array of four counts a token, small enough to stay
uncompressed in the row (see schema.LAYOUT), and BM25 reads it once per query token. Rows an older memoryd wrote
(arrays) are still read, until the reindex rewrites them."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memoryd.store.rows import Phrase

COLUMNS = ("body", "exact", "heading", "grams")
LABELS = "ABCD"
K1 = 1.2
B = 0.75
MAX_POSITION = 16_383  # PostgreSQL's last tsvector position
MAX_POSITIONS = 255  # positions kept per lexeme (PostgreSQL keeps 256)
MAX_LEXEME_BYTES = 2_046
COUNT_BITS = 16  # per column in a packed count; a chunk holds far fewer than 65,535 of one token
MAX_COUNT = (1 << COUNT_BITS) - 1

_TOKEN_CATEGORIES = ("L", "N", "M")  # unicode61 categories 'L* N* Co M*', with tokenchars '_'


def _token_char(ch: str) -> bool:
    category = unicodedata.category(ch)
    return ch == "_" or category[0] in _TOKEN_CATEGORIES or category == "Co"


def column_tokens(text: str) -> list[str]:
    """Tokens of one keyword column as FTS5's unicode61 tokenizer makes them (case folded, nothing removed)."""
    if text.isascii():
        return re.findall(r"[0-9A-Za-z_]+", text.lower())
    tokens: list[str] = []
    current: list[str] = []
    for ch in text:
        if _token_char(ch):
            current.append(ch)
        elif current:
            tokens.append("".join(current).lower())
            current = []
    if current:
        tokens.append("".join(current).lower())
    return tokens


@dataclass(frozen=True)
class Encoded:
    """A chunk's keyword columns for PostgreSQL."""

    tsvector: str  # a tsvector literal
    counts: dict[str, int]  # token -> occurrences in body, exact, heading, grams, packed (`pack`)
    length: int  # tokens in every column (FTS5's row size)


def pack(per_column: Sequence[int]) -> int:
    """A token's counts in the four columns as one integer, 16 bits each, body lowest."""
    return sum(min(count, MAX_COUNT) << (COUNT_BITS * column) for column, count in enumerate(per_column))


def _lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def encode(columns: Sequence[str]) -> Encoded:
    """The tsvector, per-column counts and length of a chunk's four keyword columns."""
    positions: dict[str, list[str]] = {}
    counts: dict[str, list[int]] = {}
    position = 0
    length = 0
    for column, text in enumerate(columns):
        tokens = column_tokens(text)
        length += len(tokens)
        for token in tokens:
            position += 1
            counts.setdefault(token, [0, 0, 0, 0])[column] += 1
            held = positions.setdefault(token, [])
            if position <= MAX_POSITION and len(held) < MAX_POSITIONS:
                held.append(f"{position}{LABELS[column]}")
        position += 1  # no phrase across two columns
    body = " ".join(
        f"{_lexeme(token)}:{','.join(held)}" if held else _lexeme(token)
        for token, held in positions.items()
        if len(token.encode()) <= MAX_LEXEME_BYTES
    )
    return Encoded(body, {token: pack(per_column) for token, per_column in counts.items()}, length)


def document_terms(columns: Sequence[str]) -> Counter[str]:
    """Each distinct token of a chunk once: what the vocabulary's document counts add up."""
    return Counter({token for text in columns for token in column_tokens(text)})


def phrase_tokens(phrase: Phrase) -> list[str]:
    return [t for part in phrase.tokens for t in column_tokens(part)]


def phrase_query(phrase: Phrase) -> str:
    """A tsquery matching the phrase in its columns."""
    labels = "".join(LABELS[c] for c in phrase.columns) if phrase.columns else ""
    mark = f":{labels}" if labels and len(labels) < 4 else ""
    tokens = phrase_tokens(phrase)
    if not tokens:
        return ""
    inner = " <-> ".join(f"{_lexeme(t)}{mark}" for t in tokens)
    return f"({inner})" if len(tokens) > 1 else inner


def match_query(groups: Sequence[Sequence[Phrase]]) -> str:
    """A tsquery for all groups, each matched by any of its phrases ('' when nothing can match)."""
    parts = []
    for group in groups:
        alternatives = [q for q in (phrase_query(p) for p in group) if q]
        if not alternatives:
            return ""
        parts.append("(" + " | ".join(alternatives) + ")")
    return " & ".join(parts)


def idf(rows: int, hits: int) -> float:
    """FTS5's IDF: log((N - n + 0.5) / (n + 0.5)), at least 1e-6."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows else 0.0
    return value if value > 0 else 1e-6


@dataclass(frozen=True)
class Scoring:
    """The SQL ranking matching chunks by FTS5's bm25() in four nested selects, so that no value is computed
    twice: `inner` reads each token's entry in a chunk's `c.tf` (and whether each phrase of several tokens
    occurs), `decoded` turns an entry into its packed counts `t0, t1, ...`, `middle` turns those into each
    phrase's weighted frequency `f0, f1, ...` and the length norm `n`, and `score` adds up the phrases' BM25."""

    inner: list[str]
    inner_params: list[object]
    decoded: list[str]
    middle: list[str]
    middle_params: list[object]
    score: str
    score_params: list[object]


def _decoded(entry: str) -> str:
    """A chunk's packed counts of a token from its `tf` entry: an integer, or an older memoryd's array of four."""
    arrays = " | ".join(f"(({entry} ->> {c})::bigint << {COUNT_BITS * c})" for c in range(4))
    return f"CASE jsonb_typeof({entry}) WHEN 'number' THEN ({entry})::bigint WHEN 'array' THEN {arrays} ELSE 0 END"


def score_sql(phrases: Sequence[Phrase], idfs: Sequence[float], weights: Sequence[float], avg_length: float) -> Scoring:
    """The Scoring of `phrases`: over a subquery `y` holding the decoded columns and `doc_len`, itself over one
    `x` holding the inner ones, and inside a subquery `z` holding the middle ones. A phrase of several tokens
    counts as often as its rarest token occurs in each of its columns where it occurs at all: PostgreSQL tells
    that a phrase occurs, not how often."""
    inner: list[str] = []
    inner_params: list[object] = []
    decoded: list[str] = []
    token_column: dict[str, str] = {}

    def column_of(token: str) -> str:
        if token not in token_column:
            name = token_column[token] = f"t{len(token_column)}"
            inner.append(f"c.tf -> %s AS j{name}")
            inner_params.append(token)
            decoded.append(f"{_decoded(f'x.j{name}')} AS {name}")
        return token_column[token]

    middle = [f"{K1} * (1 - {B} + {B} * y.doc_len::float8 / %s) AS n"]
    middle_params: list[object] = [max(avg_length, 1e-9)]
    terms: list[str] = []
    params: list[object] = []
    for index, (phrase, weight_idf) in enumerate(zip(phrases, idfs, strict=True)):
        tokens = phrase_tokens(phrase)
        if not tokens:
            continue
        columns = phrase.columns or tuple(range(4))
        per_column = []
        for column in columns:
            if not weights[column]:
                continue
            shift = f" >> {COUNT_BITS * column}" if column else ""
            counts = [f"(y.{column_of(t)}{shift} & {MAX_COUNT})::float8" for t in tokens]  # float8, not numeric
            count = counts[0] if len(counts) == 1 else f"least({', '.join(counts)})"
            per_column.append(f"{float(weights[column])} * {count}")
        if not per_column:
            continue
        frequency = " + ".join(per_column)
        if len(tokens) > 1:
            inner.append(f"c.tsv @@ %s::tsquery AS m{index}")
            inner_params.append(phrase_query(phrase))
            decoded.append(f"x.m{index}")
            frequency = f"CASE WHEN y.m{index} THEN {frequency} ELSE 0 END"
        middle.append(f"{frequency} AS f{index}")
        terms.append(f"%s * z.f{index} * {K1 + 1} / (z.f{index} + z.n)")
        params.append(weight_idf)
    return Scoring(inner, inner_params, decoded, middle, middle_params, " + ".join(terms) or "0", params)
