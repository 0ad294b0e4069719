"""Turn text into search tokens that work in every script, for indexing and for queries alike.

FTS5's own tokenizers either drop what they do not know (the seed design kept only [A-Za-z0-9_]) or
cannot match words shorter than three characters (trigram). So memoryd analyzes text itself and hands
FTS5 space-separated tokens:

* Latin-script words are lowercased, folded and Porter-stemmed (Vietnamese ``thanh toán`` -> ``thanh toan``,
  ``đ`` -> ``d``); the exact accented form is kept in a second column so that accurate queries still rank first.
* Identifiers are split into parts (``payment_processor``, ``getUserById``, ``src/memory/hybrid.ts``)
  and also kept whole in the exact column.
* Scripts written without spaces (Thai, Lao, Khmer, Burmese, Chinese, Japanese) are split into words by ICU's
  dictionary word break. Their characters also go, one token each, to a `grams` column, where a query word is
  matched as a phrase of its characters: a word the dictionary splits differently in the note and in the query,
  or a one- or two-character word inside a longer one, is still found.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from memoryd.sources.segment import segment_words
from memoryd.sources.text import DENSE_CHAR, DENSE_CLUSTER, SCRIPT_EDGE, WORD_CHAR_CLASS

_COMPOUND = re.compile(f"{WORD_CHAR_CLASS}+(?:[._/:@#\\-]+{WORD_CHAR_CLASS}+)*")
_JOINERS = re.compile(r"[._/:@#\-]+|_+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_COMBINING = re.compile("[\u0300-\u036f]")
MAX_QUERY_TERMS = 32
MAX_TOKEN_CHARS = 64
# snowballstemmer's stemmers keep the word being stemmed on the instance: one shared by the threads that sync,
# reindex and search garbled stems and raised IndexError (a reindex under search load failed), so each thread has
# its own.
_STEMMERS = threading.local()
_STEMMABLE = re.compile(r"[a-z]{3,}")


@dataclass(frozen=True)
class Analyzed:
    body: str  # folded tokens, in order: phrase queries match across them
    exact: str  # whole identifiers and accented forms
    grams: str = ""  # characters of unspaced scripts, one token each


@dataclass(frozen=True)
class Term:
    """One query term: a phrase of body tokens, or any of its exact forms."""

    phrase: tuple[str, ...]
    exact: tuple[str, ...] = ()
    grams: tuple[str, ...] = ()  # the word's characters, matched as a phrase in the grams column


def fold_text(text: str) -> str:
    """Lowercase and strip Latin diacritics (and map đ), leaving other scripts' marks alone."""
    lowered = text.lower().replace("đ", "d")
    if lowered.isascii():
        return lowered
    stripped = _COMBINING.sub("", unicodedata.normalize("NFD", lowered))
    return unicodedata.normalize("NFC", stripped)


fold = lru_cache(maxsize=65536)(fold_text)


@lru_cache(maxsize=262144)
def stem(token: str) -> str:
    """Porter stem for plain lowercase ASCII words; everything else passes through."""
    if not _STEMMABLE.fullmatch(token):
        return token
    stemmer = getattr(_STEMMERS, "porter", None)
    if stemmer is None:
        stemmer = _STEMMERS.porter = snowballstemmer.stemmer("porter")
    return stemmer.stemWord(token)


def _split_part(part: str) -> list[str]:
    """Split one identifier part at camelCase boundaries (ASCII only)."""
    if part.isascii() and not part.islower() and not part.isupper():
        pieces = _CAMEL.findall(part)
        if len(pieces) > 1 and "".join(pieces) == part:
            return pieces
    return [part]


def _clusters(word: str) -> tuple[str, ...]:
    """A dense-script word's characters, each with its combining marks."""
    return tuple(m.group() for m in DENSE_CLUSTER.finditer(word))


@dataclass(frozen=True)
class _Compound:
    tokens: tuple[str, ...]  # folded body tokens
    exact: tuple[str, ...]  # extra exact forms
    dense: bool  # contains dense-script characters
    grams: tuple[tuple[str, ...], ...] = ()  # per body token: its characters when it is a dense-script word


@lru_cache(maxsize=16384)  # words recur: about 7 MB, half of what analysing a note costs
def _analyze_compound(raw: str) -> _Compound:
    parts = [p for p in _JOINERS.split(raw) if p]
    pieces: list[str] = []
    camel = False
    for part in parts:
        split = _split_part(part)
        camel = camel or len(split) > 1
        pieces.extend(split)
    tokens: list[str] = []
    grams: list[tuple[str, ...]] = []
    exact: list[str] = []
    dense = False
    for piece in pieces:
        if DENSE_CHAR.search(piece):
            dense = True
            for word in segment_words(piece.lower()):
                word = word[:MAX_TOKEN_CHARS]
                if DENSE_CHAR.search(word):
                    tokens.append(word)
                    grams.append(_clusters(word))
                else:
                    tokens.append(stem(fold(word)))
                    grams.append(())
            continue
        lowered = piece.lower()[:MAX_TOKEN_CHARS]
        folded = fold(lowered)
        tokens.append(stem(folded))
        grams.append(())
        if folded != lowered:
            exact.append(lowered)
    if len(pieces) > 1 and not dense:
        whole = "_".join(fold(p.lower()) for p in pieces)[:MAX_TOKEN_CHARS]
        exact.append(whole)
        if camel:
            exact.append(whole.replace("_", ""))
    return _Compound(tuple(tokens), tuple(exact), dense, tuple(grams))


def _compounds(text: str) -> list[_Compound]:
    normalized = SCRIPT_EDGE.sub(" ", unicodedata.normalize("NFKC", text))
    return [_analyze_compound(m.group()) for m in _COMPOUND.finditer(normalized)]


def analyze(text: str) -> Analyzed:
    """Tokens of a document for the FTS5 columns."""
    body: list[str] = []
    exact: list[str] = []
    grams: list[str] = []
    for compound in _compounds(text):
        body.extend(compound.tokens)
        exact.extend(compound.exact)
        for chars in compound.grams:
            grams.extend(chars)
    return Analyzed(" ".join(body), " ".join(exact), " ".join(grams))


def fts_row(text: str, heading: str) -> tuple[str, str, str, str]:
    """The chunks_fts columns of a chunk: body, exact, heading, grams."""
    doc = analyze(text)
    return doc.body, doc.exact, analyze(heading).body, doc.grams


def query_terms(query: str) -> list[Term]:
    """Terms of a query; any text is data, never FTS5 syntax."""
    terms: list[Term] = []
    seen: set[Term] = set()

    def add(term: Term) -> None:
        if term.phrase and term not in seen and len(terms) < MAX_QUERY_TERMS:
            seen.add(term)
            terms.append(term)

    for compound in _compounds(query):
        if not compound.dense:
            add(Term(compound.tokens, compound.exact))
            continue
        for token, chars in zip(compound.tokens, compound.grams, strict=True):
            add(Term((token,), grams=chars))
    return terms


def _quote(token_phrase: tuple[str, ...] | str) -> str:
    text = token_phrase if isinstance(token_phrase, str) else " ".join(token_phrase)
    return '"' + text.replace('"', '""') + '"'


def term_expression(term: Term) -> str:
    if term.grams:
        return f"({{body heading}} : {_quote(term.phrase)} OR grams : {_quote(term.grams)})"
    alternatives = [_quote(term.phrase)] + [f"exact : {_quote(e)}" for e in term.exact]
    return alternatives[0] if len(alternatives) == 1 else "(" + " OR ".join(alternatives) + ")"


def phrase_hits(terms: list[Term], frequencies: Mapping[str, int]) -> tuple[int, ...]:
    """For each FTS5 phrase of `match_expression(terms)`, in its order, how many chunks it matches where that is
    a token's count in the vocabulary (a lone token searched in every column), else -1 (a phrase, or one column)."""
    hits: list[int] = []
    for term in terms:
        if term.grams:
            hits += [-1, -1]
            continue
        lone = len(term.phrase) == 1 and term.phrase[0] in frequencies
        hits.append(frequencies[term.phrase[0]] if lone else -1)
        hits += [-1] * len(term.exact)
    return tuple(hits)


def match_expression(terms: list[Term], operator: str = "OR") -> str:
    """An FTS5 MATCH string joining the terms with OR (any term) or AND (all terms)."""
    return f" {operator} ".join(term_expression(t) for t in terms)


def snippet_words(query: str) -> set[str]:
    """Folded, unstemmed words of a query, for finding them in snippet lines by substring."""
    normalized = unicodedata.normalize("NFKC", query)
    words: set[str] = set()
    for match in _COMPOUND.finditer(normalized):
        for part in _JOINERS.split(match.group()):
            for piece in _split_part(part):
                folded = fold(piece)
                if len(folded) >= 2 or DENSE_CHAR.search(folded):
                    words.add(stem(folded) if len(folded) > 4 else folded)
    return words
