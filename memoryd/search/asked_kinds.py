"""What the question asks about, told by the names of a search's candidates (search.kinds): which of its words are
a kind of thing (Meilisearch and OpenSearch are search engines), which names are of that kind, and which names are
names at all. search.currency reads a statement as holding the words its names stand for."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from memoryd.search.followup import split_question
from memoryd.search.function_words import function_words
from memoryd.search.kinds import NameKinds
from memoryd.search.statements import Statement, holds, tokens_of

KIND_NAMES = 2  # names that stand for a word of the question, for it to be what a kind of thing is called
NAMED_SHARE = 0.2  # share of the question a statement holds for its names to be read (not an article's line)
NAMES_READ = 12  # names whose kinds are read (search.kinds) at each step of a search, of the best candidates first
SPEAKERS = frozenset(("user", "assist", "assistant", "system"))  # a transcript line's "User:", "Assistant:"


def value_kinds(
    statements: Iterable[Statement],
    query: Mapping[str, float],
    frequencies: Callable[[list[str]], Mapping[str, int]],
    total: int,
    profiles: NameKinds,
    whole: bool = False,
) -> dict[tuple[str, ...], frozenset[str]]:
    """The question's words the names of these statements stand for (search.kinds), of those that hold some of the
    question and lack some (only those can hold more of it through their names; `whole`, or all of it: their names
    show what kind of thing the question asks about), for at most NAMES_READ names."""
    most = len(query) + 1 if whole else len(query)
    least = NAMED_SHARE * math.fsum(query.values())
    about = []
    for statement in statements:
        held = [word for word in query if holds(statement, word)]
        if 0 < len(held) < most and math.fsum(query[word] for word in held) >= least:
            about.append(statement)
    groups = list(dict.fromkeys(group for statement in about for group in statement.proper))
    if not groups:
        return {}
    names = names_of([word for group in groups for word in group], query, frequencies, commonest=True)
    read = [group for group in groups if any(word.casefold() in names for word in group)][:NAMES_READ]
    return profiles.kinds(read, query, frequencies, total)


def partners_kinds(
    kinds: Mapping[tuple[str, ...], frozenset[str]],
    query: Mapping[str, float],
    frequencies: Callable[[list[str]], Mapping[str, int]],
    total: int,
    profiles: NameKinds,
) -> dict[tuple[str, ...], frozenset[str]]:
    """The names that the names of a kind asked about replaced or were replaced by, and what they stand for, of those
    that stand for a word of the kind (no candidate named CloudFront, but the notes moved a CDN from it to Fastly)."""
    asked = frozenset().union(*kinds.values()) & query.keys()
    partners = profiles.partners_of([name for name, kind in kinds.items() if kind & asked], query)
    unknown = [name for name in partners if name not in kinds][:NAMES_READ]
    found = profiles.kinds(unknown, query, frequencies, total) if unknown else {}
    return {name: kind for name, kind in found.items() if kind & asked}


def said_of_the_kind(
    kinds: Mapping[tuple[str, ...], frozenset[str]],
    query: Mapping[str, float],
    counts: Mapping[str, int],
    profiles: NameKinds,
) -> dict[tuple[str, ...], frozenset[str]]:
    """A name of the kind asked about also stands for the question's words that are said of things of that kind but
    that no name stands for alone (search.followup.split_question: "层" of "缓存层", a cache layer, which the notes
    also call a cache and a cache service); `counts`: how many chunks hold each of the question's words."""
    asked, subject = split_question(query, kinds, profiles.holding, counts, profiles.naming)
    said = frozenset(query.keys() - asked - subject)
    return {name: kind | said if kind & asked else kind for name, kind in kinds.items()} if said else dict(kinds)


def joined(*found: Mapping[tuple[str, ...], frozenset[str]]) -> dict[tuple[str, ...], frozenset[str]]:
    """What each name stands for in any of these readings (a name read at two steps, with other names, may stand
    for more at one: a word the names hold together depends on which names are read)."""
    kinds: dict[tuple[str, ...], frozenset[str]] = {}
    for reading in found:
        for name, kind in reading.items():
            kinds[name] = kinds.get(name, frozenset()) | kind
    return kinds


def kinds_of_things(kinds: Mapping[tuple[str, ...], frozenset[str]]) -> dict[tuple[str, ...], frozenset[str]]:
    """Of what names stand for, the words at least KIND_NAMES of them do: a kind of thing (Meilisearch and OpenSearch
    are search engines), not the one service a person or a tool is mostly written with ("Alice" of "billing")."""
    names = Counter(word for kind in kinds.values() for word in kind)
    kept = {name: frozenset(w for w in kind if names[w] >= KIND_NAMES) for name, kind in kinds.items()}
    return {name: kind for name, kind in kept.items() if kind}


def names_of(
    written: Iterable[str],
    query: Mapping[str, float],
    frequencies: Callable[[list[str]], Mapping[str, int]],
    commonest: bool = False,
) -> dict[str, int]:
    """Of these words as written, the names (casefolded), with how many chunks hold each: no word the question, a
    question or a change is made of, nor a speaker's label, and held by no more notes than the question's most
    specific word ("Meilisearch", not "team"), or `commonest`, its commonest (words already written as names: the
    subject of a small workspace may be written less often than its values)."""
    ignored = function_words() | set(query) | SPEAKERS
    tokens = {w: tokens_of(w) for w in set(written)}
    words = {t for found in tokens.values() for t in found if t not in ignored}
    counts = frequencies(sorted(words)) if words else {}
    asked = [n for n in frequencies(sorted(query)).values() if n]
    ceiling = (max if commonest else min)(asked, default=0)
    specific = {w for w in words if 0 < counts.get(w, 0) <= ceiling}
    kept = {w: found - ignored for w, found in tokens.items()}  # "MySQL" is "sql": "my" says nothing of it
    return {w.casefold(): min(counts[t] for t in held) for w, held in kept.items() if held and held <= specific}
