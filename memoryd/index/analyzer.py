"""Turn text into search tokens that work in every script, for indexing and for queries alike.

FTS5's own tokenizers either drop what they do not know (the seed design kept only [A-Za-z0-9_]) or
cannot match words shorter than three characters (trigram). So memoryd analyzes text itself and hands
FTS5 space-separated tokens:

* Latin-script words are lowercased, folded and Porter-stemmed (Vietnamese ``thanh toán`` -> ``thanh toan``,
  ``đ`` -> ``d``); the exact accented form is kept in a second column so that accurate queries still rank first.
* Identifiers are split into parts (``payment_processor``, ``getUserById``, ``src/memory/hybrid.ts``)
  and also kept whole in the exact column.
* Scripts written without spaces (Chinese, Japanese, Thai, ...) become one token per character, and a
  query's run of such characters becomes overlapping bigram phrases, so words of any length match.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from memoryd.sources.text import DENSE_CHAR, DENSE_CLUSTER, WORD_CHAR_CLASS

_COMPOUND = re.compile(f"{WORD_CHAR_CLASS}+(?:[._/:@#\\-]+{WORD_CHAR_CLASS}+)*")
_JOINERS = re.compile(r"[._/:@#\-]+|_+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_COMBINING = re.compile("[\u0300-\u036f]")
MAX_QUERY_TERMS = 32
MAX_TOKEN_CHARS = 64
_STEMMER = snowballstemmer.stemmer("porter")
_STEMMABLE = re.compile(r"[a-z]{3,}")


@dataclass(frozen=True)
class Analyzed:
    body: str  # folded tokens, in order: phrase queries match across them
    exact: str  # whole identifiers and accented forms


@dataclass(frozen=True)
class Term:
    """One query term: a phrase of body tokens, or any of its exact forms."""

    phrase: tuple[str, ...]
    exact: tuple[str, ...] = ()


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
    return _STEMMER.stemWord(token) if _STEMMABLE.fullmatch(token) else token


def _split_part(part: str) -> list[str]:
    """Split one identifier part at camelCase boundaries (ASCII only)."""
    if part.isascii() and not part.islower() and not part.isupper():
        pieces = _CAMEL.findall(part)
        if len(pieces) > 1 and "".join(pieces) == part:
            return pieces
    return [part]


def _dense_tokens(word: str) -> list[str]:
    """Break a word into runs: dense-script characters one by one, anything else whole."""
    out: list[str] = []
    pos = 0
    for match in DENSE_CLUSTER.finditer(word):
        if match.start() > pos:
            out.append(word[pos : match.start()])
        out.append(match.group())
        pos = match.end()
    if pos < len(word):
        out.append(word[pos:])
    return out


@dataclass(frozen=True)
class _Compound:
    tokens: tuple[str, ...]  # folded body tokens
    exact: tuple[str, ...]  # extra exact forms
    dense: bool  # contains dense-script characters


def _analyze_compound(raw: str) -> _Compound:
    parts = [p for p in _JOINERS.split(raw) if p]
    pieces: list[str] = []
    camel = False
    for part in parts:
        split = _split_part(part)
        camel = camel or len(split) > 1
        pieces.extend(split)
    tokens: list[str] = []
    exact: list[str] = []
    dense = False
    for piece in pieces:
        lowered = piece.lower()[:MAX_TOKEN_CHARS]
        if DENSE_CHAR.search(lowered):
            dense = True
            tokens.extend(fold(t) for t in _dense_tokens(lowered))
            continue
        folded = fold(lowered)
        tokens.append(stem(folded))
        if folded != lowered:
            exact.append(lowered)
    if len(pieces) > 1 and not dense:
        whole = "_".join(fold(p.lower()) for p in pieces)[:MAX_TOKEN_CHARS]
        exact.append(whole)
        if camel:
            exact.append(whole.replace("_", ""))
    return _Compound(tuple(tokens), tuple(exact), dense)


def _compounds(text: str) -> list[_Compound]:
    normalized = unicodedata.normalize("NFKC", text)
    return [_analyze_compound(m.group()) for m in _COMPOUND.finditer(normalized)]


def analyze(text: str) -> Analyzed:
    """Tokens of a document for the FTS5 columns."""
    body: list[str] = []
    exact: list[str] = []
    for compound in _compounds(text):
        body.extend(compound.tokens)
        exact.extend(compound.exact)
    return Analyzed(" ".join(body), " ".join(exact))


def _bigrams(tokens: tuple[str, ...]) -> list[tuple[str, ...]]:
    if len(tokens) <= 2:
        return [tokens]
    return [tokens[i : i + 2] for i in range(len(tokens) - 1)]


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
        run: list[str] = []
        for token in compound.tokens:
            if DENSE_CHAR.match(token):
                run.append(token)
                continue
            for gram in _bigrams(tuple(run)) if run else []:
                add(Term(gram))
            run = []
            add(Term((token,)))
        for gram in _bigrams(tuple(run)) if run else []:
            add(Term(gram))
    return terms


def _quote(token_phrase: tuple[str, ...] | str) -> str:
    text = token_phrase if isinstance(token_phrase, str) else " ".join(token_phrase)
    return '"' + text.replace('"', '""') + '"'


def term_expression(term: Term) -> str:
    alternatives = [_quote(term.phrase)] + [f"exact : {_quote(e)}" for e in term.exact]
    return alternatives[0] if len(alternatives) == 1 else "(" + " OR ".join(alternatives) + ")"


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
