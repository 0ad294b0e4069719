"""Statements a search's keyword and vector sides did not find: a change worded without the question's word for the
kind of thing asked about ("Which CI does reporting use?" ... "reporting builds and tests run on Buildkite now").
Such a statement still holds the subject and a name of that kind. The candidates' names say which words of the
question are a kind of thing (search.kinds: Buildkite, Jenkins and CircleCI stand for "CI") and which names are of
it; the chunks holding one of the question's other words, its SUBJECT_WORDS heaviest, and one of those names are
read (FOLLOWED at most, best BM25 matches first), and search.currency weighs them with the candidates. A word that
KIND_WORD_SHARE of those names' statements hold is the kind's too, though no name stands for it alone ("content
delivery" of "content delivery network", which the notes also call a "CDN" and an "edge network"), and where names
stand for every word of the question, the kind is the word most of them stand for. A word names stand for is the
subject all the same when they are in few of the notes that hold it (Spinnaker and Octopus Deploy, inventory's own
deploy tools, stand for "inventory", which is said of all its things). The names that the kind's
names replaced or were replaced by are read too (search.currency: no candidate may name CloudFront, yet the notes
moved a CDN from it to Fastly)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memoryd.search.kinds import KIND_SUPPORT, Name
from memoryd.store.rows import ChunkRow

FOLLOWED = 20  # chunks read that hold a word of the subject and a name of the kind asked about
SUBJECT_WORDS = 3
KIND_WORD_SHARE = 0.2  # share of the kind's names' statements holding a word of the question: not the subject
KIND_WORD_CHUNKS = 0.5  # ... or as many as half the chunks that hold it: it is said of things of the kind
SAID_OF_ALL = 0.2  # a word names stand for, in chunks naming them this share as often as the kind's: the subject

Followed = Callable[[list[str], list[Name], int], dict[int, ChunkRow]]  # (words, names, at most) -> chunks
Holding = Callable[[list[Name], str], tuple[int, int]]  # (names, word) -> their statements holding it, of how many
Naming = Callable[[list[Name], str], float]  # (names, word) -> about how many chunks naming them hold it


def follow_up(
    query: Mapping[str, float],
    kinds: Mapping[Name, frozenset[str]],
    asked: frozenset[str],
    subject: frozenset[str],
    read: Followed,
) -> dict[int, ChunkRow]:
    """The chunks holding a word of the question's subject and a name of the kind it asks about (`asked` and
    `subject`: split_question's); none when no name stands for a word of the question, or the question has no other
    word."""
    heaviest = sorted(subject, key=lambda word: (-query[word], word))[:SUBJECT_WORDS]
    if not asked or not heaviest:
        return {}
    return read(heaviest, [name for name, kind in kinds.items() if kind & asked], FOLLOWED)


def split_question(
    query: Mapping[str, float],
    kinds: Mapping[Name, frozenset[str]],
    holding: Holding | None = None,
    counts: Mapping[str, int] | None = None,
    naming: Naming | None = None,
) -> tuple[frozenset[str], frozenset[str]]:
    """The question's words for the kind of thing it asks about (what names stand for), and the others, its subject;
    `holding`: how many of the statements that name some names hold a word; `counts`: how many chunks hold each;
    `naming`: about how many of the chunks that name some names hold a word."""
    asked = frozenset().union(*kinds.values()) & query.keys()
    if naming is not None and counts is not None:
        asked -= _subjects_named(query, asked, kinds, naming, counts)
    if asked and not query.keys() - asked:
        asked = _one_kind(kinds, asked)
    named = [name for name, kind in kinds.items() if kind & asked]
    others = frozenset(query.keys() - asked)
    if holding is not None and named:  # "content delivery" of "content delivery network": the kind's, not the subject
        others = frozenset(word for word in others if not _of_kind(word, named, holding, counts or {})) or others
    return asked, others


def _subjects_named(
    query: Mapping[str, float],
    asked: frozenset[str],
    kinds: Mapping[Name, frozenset[str]],
    naming: Naming,
    counts: Mapping[str, int],
) -> frozenset[str]:
    """The words names stand for that are the question's subject all the same: "inventory" of "Which logging does
    inventory use?", where the notes name Octopus Deploy and Spinnaker only as inventory's deploy tools. Of the
    chunks that hold a kind's word, most name a thing of that kind; a subject is said of all its things, so the
    chunks naming the names that stand for it are fewer than SAID_OF_ALL as large a share of the chunks holding it
    as the most named word's are. Only a word heavier than every word left to the subject is taken: "use" is said
    of everything too."""
    rest = max((query[word] for word in query.keys() - asked), default=0.0)
    heavier = [word for word in asked if query[word] > rest]
    if len(asked) < 2 or not heavier:
        return frozenset()
    named = {word: _named_share(word, kinds, naming, counts) for word in asked}
    most = max(named.values())
    return frozenset(word for word in heavier if named[word] < SAID_OF_ALL * most)


def _named_share(word: str, kinds: Mapping[Name, frozenset[str]], naming: Naming, counts: Mapping[str, int]) -> float:
    """The share of the chunks holding a word that name a name standing for it (about: profiles are samples)."""
    return naming([name for name, kind in kinds.items() if word in kind], word) / max(counts.get(word, 0), 1)


def _of_kind(word: str, named: list[Name], holding: Holding, counts: Mapping[str, int]) -> bool:
    held, read = holding(named, word)
    if held < KIND_SUPPORT:  # two statements say nothing: a small workspace's subject is in as few
        return False
    return held >= KIND_WORD_SHARE * read or held >= KIND_WORD_CHUNKS * counts.get(word, held + 1)


def _one_kind(kinds: Mapping[Name, frozenset[str]], asked: frozenset[str]) -> frozenset[str]:
    """When names stand for every word of the question ("reporting" of "What CI is reporting on?": Rollbar and
    Bugsnag are crash reporting), the kind asked about is the word most names stand for, and the words most of whose
    names stand for it too ("feature flag service"); the others are its subject."""
    names = {word: {name for name, kind in kinds.items() if word in kind} for word in asked}
    top = max(sorted(asked), key=lambda word: len(names[word]))
    return frozenset(word for word in asked if 2 * len(names[word] & names[top]) > len(names[word]))
