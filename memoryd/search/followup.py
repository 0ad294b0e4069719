"""Statements a search's keyword and vector sides did not find: a change worded without the question's word for the
kind of thing asked about ("Which CI does reporting use?" ... "reporting builds and tests run on Buildkite now").
Such a statement still holds the subject and a name of that kind. The candidates' names say which words of the
question are a kind of thing (search.kinds: Buildkite, Jenkins and CircleCI stand for "CI") and which names are of
it; the chunks holding one of the question's other words, its SUBJECT_WORDS heaviest, and one of those names are
read (FOLLOWED at most, best BM25 matches first), and search.currency weighs them with the candidates."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memoryd.search.kinds import Name
from memoryd.store.rows import ChunkRow

FOLLOWED = 20  # chunks read that hold a word of the subject and a name of the kind asked about
SUBJECT_WORDS = 3

Followed = Callable[[list[str], list[Name], int], dict[int, ChunkRow]]  # (words, names, at most) -> chunks


def follow_up(query: Mapping[str, float], kinds: Mapping[Name, frozenset[str]], read: Followed) -> dict[int, ChunkRow]:
    """The chunks holding a word of the question's subject and a name of the kind it asks about; none when no name
    stands for a word of the question, or the question has no other word."""
    asked = frozenset().union(*kinds.values()) & query.keys()
    subject = sorted(query.keys() - asked, key=lambda word: (-query[word], word))[:SUBJECT_WORDS]
    if not asked or not subject:
        return {}
    return read(subject, [name for name, kind in kinds.items() if kind & asked], FOLLOWED)
