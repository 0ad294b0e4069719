"""BM25 over postings held in the daemon (postings.py), as terms.score_sql ranks in SQL, term for term: phrases of
several tokens are matched by position in SQL, for the chunks holding all their tokens only."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from memoryd.store.postgres.terms import COUNT_BITS, K1, MAX_COUNT, B, phrase_query, phrase_tokens
from memoryd.store.rows import Match


class Chunks(Protocol):
    doc_len: np.ndarray
    live: np.ndarray


class Held(Protocol):
    """Postings as ranking reads them."""

    @property
    def chunks(self) -> Chunks: ...
    def lists(self, token: str) -> tuple[np.ndarray, np.ndarray]: ...


def _column_counts(packed: np.ndarray, column: int) -> np.ndarray:
    return (packed >> (COUNT_BITS * column)) & MAX_COUNT


def _present(packed: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """Whether each packed count holds the token in any of `columns` (none named: any)."""
    mask = sum(MAX_COUNT << (COUNT_BITS * c) for c in columns or range(4))
    return (packed & np.int64(mask - (1 << 64) if mask >= 1 << 63 else mask)) != 0  # the last column's top bit: signed


def ranked(
    held: Held,
    match: Match,
    idfs: Sequence[float],
    weights: Sequence[float],
    avg_length: float,
    limit: int,
    verify: Callable[[list[str], list[int]], dict[int, list[bool]]],
) -> list[tuple[int, float]]:
    """BM25 of the chunks matching every group of `match`, summed phrase by phrase in the order terms.score_sql sums
    them (so that scores are the SQL ranking's to the last bit). Each phrase of one token is scored over the chunks
    holding that token only; phrases of several tokens over every candidate."""
    phrases = [p for group in match.groups for p in group]
    group_of = [g for g, group in enumerate(match.groups) for _ in group]
    tokens_of = [phrase_tokens(p) for p in phrases]
    lists = {t: held.lists(t) for t in dict.fromkeys(t for tokens in tokens_of for t in tokens)}
    if limit <= 0 or not any(len(ids) for ids, _ in lists.values()):
        return []
    # candidates: every chunk holding a token, in id order; `slot` maps a chunk id to its place among them
    marked = np.zeros(len(held.chunks.live), dtype=bool)
    for token_ids, _ in lists.values():
        marked[token_ids] = True
    ids = np.flatnonzero(marked)
    n = len(ids)
    slot = np.empty(len(held.chunks.live), dtype=np.int32)
    slot[ids] = np.arange(n, dtype=np.int32)
    places = {t: slot[token_ids] for t, (token_ids, _) in lists.items()}
    norm = K1 * (1 - B + B * held.chunks.doc_len[ids].astype(np.float64) / max(avg_length, 1e-9))
    matched = np.zeros((len(match.groups), n), dtype=bool)
    dense: dict[int, np.ndarray] = {}  # phrases of several tokens: frequency over every candidate
    positional: list[int] = []
    for index, (phrase, tokens) in enumerate(zip(phrases, tokens_of, strict=True)):
        if len(tokens) < 2:
            continue
        frequency = np.zeros(n, dtype=np.float64)
        present = np.zeros(n, dtype=bool)
        spread = []
        for t in tokens:
            values = np.zeros(n, dtype=np.int64)
            values[places[t]] = lists[t][1]
            spread.append(values)
        for column in phrase.columns or range(4):
            least = np.minimum.reduce([_column_counts(c, column) for c in spread])
            present |= least > 0
            if weights[column]:
                frequency += float(weights[column]) * least
        dense[index] = frequency
        positional.append(index)
        matched[group_of[index]] |= present  # for now: which chunks could hold it (verified below)
    single = [i for i, tokens in enumerate(tokens_of) if len(tokens) == 1]
    holding = {i: places[tokens_of[i][0]][_present(lists[tokens_of[i][0]][1], phrases[i].columns)] for i in single}
    for index in single:
        matched[group_of[index], holding[index]] = True
    if positional:
        possible = np.logical_and.reduce(matched)
        candidates = ids[possible & np.logical_or.reduce([dense[i] > 0 for i in positional])].tolist()
        answers = verify([phrase_query(phrases[i]) for i in positional], candidates) if candidates else {}
        holds = np.zeros((len(positional), n), dtype=bool)
        if answers:
            at = slot[np.fromiter(answers, dtype=np.int64, count=len(answers))]
            holds[:, at] = np.array(list(answers.values()), dtype=bool).T
        matched[:] = False  # again, with the phrases of several tokens where they hold
        for index in single:
            matched[group_of[index], holding[index]] = True
        for row, index in enumerate(positional):
            dense[index] = np.where(holds[row], dense[index], 0.0)
            matched[group_of[index]] |= holds[row]
    keep = np.logical_and.reduce(matched)
    if not keep.any():
        return []
    score = np.zeros(n, dtype=np.float64)
    split: dict[str, list[np.ndarray]] = {}

    def columns_of(token: str) -> list[np.ndarray]:
        """A token's counts in each column, over the chunks holding it (once a search)."""
        if token not in split:
            split[token] = [_column_counts(lists[token][1], column) for column in range(4)]
        return split[token]

    for index, tokens in enumerate(tokens_of):
        if index in dense:
            frequency = dense[index]
            score += float(idfs[index]) * frequency * (K1 + 1) / (frequency + norm)
        elif tokens:
            per_column = columns_of(tokens[0])
            frequency = np.zeros(len(per_column[0]), dtype=np.float64)
            for column in phrases[index].columns or range(4):
                if weights[column]:
                    frequency += float(weights[column]) * per_column[column]
            at = places[tokens[0]]
            score[at] += float(idfs[index]) * frequency * (K1 + 1) / (frequency + norm[at])
    kept = np.flatnonzero(keep)
    kept_scores = score[kept]
    if len(kept) > limit:
        top = np.argpartition(-kept_scores, limit - 1)[:limit]
        top = np.flatnonzero(kept_scores >= kept_scores[top].min())  # ties at the cut, for the order by id below
    else:
        top = np.arange(len(kept))
    order = sorted(top.tolist(), key=lambda j: (-kept_scores[j], ids[kept[j]]))[:limit]
    return [(int(ids[kept[j]]), float(kept_scores[j])) for j in order]
