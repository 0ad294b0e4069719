"""What kind of thing a name in the notes is, told by the notes themselves: the statements that name "Meilisearch"
mostly say "search engine", so "As of today, analytics indexes its documents in Meilisearch" is about analytics'
search engine though it does not say so. search.currency reads a statement as holding the question's words its
names stand for, and so links a change worded as a clause, or by a synonym, to the statement it replaced.

A name's profile is up to PROFILED statements that name it, of its best keyword matches, read once
and kept until the number of chunks holding the name changes (a write that names it). A word of the question is
what a name stands for when KIND_SHARE of those statements hold it (a thing goes by several names: "database",
"DB", "primary datastore"), at least KIND_SUPPORT of them, at least KIND_TOP as many as hold the name's most held
word of the question (a value a subject uses often is still not the subject), and KIND_LIFT times as often as the
notes at large do. Each was chosen on the knowledge-update bench and LoCoMo together (docs/design.md, "A name says
what it is")."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from memoryd.search.statements import Statement, entries_naming, holds, may_hold, tokens_of
from memoryd.sources.analyzer import fold_text
from memoryd.store.rows import ChunkRow

PROFILED = 24  # statements of a name's profile (each is analysed when a question's word may be in it)
PROFILES = 4096  # names whose profiles are kept
KIND_SHARE = 0.3
KIND_SUPPORT = 3
KIND_TOP = 0.5
KIND_LIFT = 2.0

NameReader = Callable[[str, int], list[ChunkRow]]  # (name, at most) -> chunks holding it


@dataclass
class Profile:
    """A name's statements, and how many of them hold each word of a question asked so far."""

    hits: int  # chunks holding the name when it was read
    said: tuple[str, ...]  # the statements naming it
    held: dict[str, int] = field(default_factory=dict)  # a question's word -> how many of them hold it
    folded: tuple[str, ...] = ()

    def holding(self, word: str) -> int:
        found = self.held.get(word)
        if found is None:
            if not self.folded:
                self.folded = tuple(fold_text(text) for text in self.said)
            found = self.held[word] = sum(
                1
                for text, folded in zip(self.said, self.folded, strict=True)
                if may_hold(folded, word) and holds(Statement(text, tokens_of(text), False), word)
            )
        return found


class NameKinds:
    """Profiles of the names searches meet, per index; read through `read` and kept (at most PROFILES)."""

    def __init__(self, read: NameReader) -> None:
        self._read = read
        self._profiles: OrderedDict[str, Profile] = OrderedDict()
        self._lock = threading.Lock()

    def kinds(
        self,
        names: Mapping[str, int],
        query: Mapping[str, float],
        frequencies: Mapping[str, int],
        total: int,
    ) -> dict[str, frozenset[str]]:
        """The query's words each name (casefolded, with how many chunks hold it) stands for; `frequencies`: how
        many chunks hold each query word, of `total`."""
        kinds = {}
        for name, hits in names.items():
            if hits < KIND_SUPPORT:
                continue
            profile = self._profile(name, hits)
            if len(profile.said) < KIND_SUPPORT:
                continue
            shares = {word: profile.holding(word) / len(profile.said) for word in query}
            top = max(shares.values(), default=0.0)
            kind = frozenset(
                word
                for word, share in shares.items()
                if share * len(profile.said) >= KIND_SUPPORT
                and share >= KIND_SHARE
                and share >= KIND_TOP * top
                and share >= KIND_LIFT * frequencies.get(word, 0) / max(total, 1)
            )
            if kind:
                kinds[name] = kind
        return kinds

    def _profile(self, name: str, hits: int) -> Profile:
        with self._lock:
            found = self._profiles.get(name)
            if found is not None and found.hits == hits:
                self._profiles.move_to_end(name)
                return found
        rows = self._read(name, PROFILED)
        said = tuple(itertools.islice(_statements_naming(rows, name), PROFILED))
        profile = Profile(hits, said)
        with self._lock:
            self._profiles[name] = profile
            self._profiles.move_to_end(name)
            while len(self._profiles) > PROFILES:
                self._profiles.popitem(last=False)
        return profile


def _statements_naming(rows: Iterable[ChunkRow], name: str) -> Iterable[str]:
    """The texts of these chunks' statements that name a name, each once (overlapping chunks share lines)."""
    seen: set[str] = set()
    for row in rows:
        for text in entries_naming(row, name):
            if text not in seen:
                seen.add(text)
                yield text
