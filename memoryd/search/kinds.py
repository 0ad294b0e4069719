"""What kind of thing a name in the notes is, told by the notes themselves: the statements that name "Meilisearch"
mostly say "search engine", so "As of today, analytics indexes its documents in Meilisearch" is about analytics'
search engine though it does not say so. search.currency reads a statement as holding the question's words its
names stand for, and so links a change worded as a clause, or by a synonym, to the statement it replaced.

A name is its words as written ("Google Cloud Storage" is not "Google Cloud"). Its profile is up to PROFILED
statements that name it, of its best keyword matches, read once and kept until the number of chunks holding its
rarest word changes (a write that names it; an edit that keeps that count keeps the profile until one does not). A
word of the question is what a name stands for when KIND_SHARE of those statements hold it (a thing goes by several
names: "database", "DB", "primary datastore"), at least KIND_SUPPORT of them, at least KIND_TOP as many as hold the
name's most held word of the question (a value a subject uses often is still not the subject), and KIND_LIFT times
as often as the notes at large do. A name also stands for what the names it replaced or was replaced by do (its
PARTNERS: Dragonfly, said to be a "bộ nhớ đệm", replaced Memcached, a cache), when PARTNERS_AGREE of them do or its
own statements hold the word at least once (Papertrail replaced Elasticsearch, a search engine too). Where no name
read stands for any word of the question, the names read may stand for one together (_pooled: each error tracker's
notes say "错误追踪" one time in eight, the three synonyms sharing the rest). Each was chosen on the
knowledge-update bench and LoCoMo together (docs/design.md, "A name says what it is")."""

from __future__ import annotations

import itertools
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from memoryd.search.statements import Statement, entries_naming, holds, may_hold, names_written, says_change, tokens_of
from memoryd.sources.analyzer import fold_text
from memoryd.store.rows import ChunkRow

PROFILED = 24  # statements of a name's profile (each is analysed when a question's word may be in it)
PROFILES = 4096  # names whose profiles are kept
KIND_SHARE = 0.3
KIND_SUPPORT = 3
KIND_TOP = 0.5
KIND_LIFT = 2.0
PARTNERS = 3  # names written with it in its changes whose kinds it takes, the most often written first
PARTNERS_AGREE = 2
POOLED_NAMES = 2  # names holding a word, for what they hold together to count
POOLED_LIFT = 6.0

Name = tuple[str, ...]  # a name's words as written ("ClickHouse": the index holds "click hous"); kept casefolded
NameReader = Callable[[str, int], list[ChunkRow]]  # (name, at most) -> chunks holding it
Frequencies = Callable[[list[str]], Mapping[str, int]]  # words -> how many chunks hold each


@dataclass
class Profile:
    """A name's statements, and how many of them hold each word of a question asked so far."""

    hits: int  # chunks holding the name's rarest word when it was read
    said: tuple[str, ...]  # the statements naming it
    partners: tuple[Name, ...] = ()  # the names written with it in its changes, as often as written
    held: dict[str, int] = field(default_factory=dict)  # a question's word -> how many of them hold it
    maybe: dict[str, int] = field(default_factory=dict)  # ... how many may (may_hold), not analysed
    folded: tuple[str, ...] = ()

    def holding(self, word: str, enough: int = 1) -> int:
        """How many of its statements hold a word; fewer than `enough` may (`may_hold`), it says how many may, and
        none is analysed."""
        found = self.held.get(word)
        if found is not None:
            return found
        if not self.folded:
            self.folded = tuple(fold_text(text) for text in self.said)
        maybe = self.maybe.get(word)
        if maybe is None:
            maybe = self.maybe[word] = sum(1 for folded in self.folded if may_hold(folded, word))
        if maybe < enough:
            return maybe
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
        self._profiles: OrderedDict[Name, Profile] = OrderedDict()
        self._lock = threading.Lock()

    def kinds(
        self, names: Iterable[Name], query: Mapping[str, float], frequencies: Frequencies, total: int
    ) -> dict[Name, frozenset[str]]:
        """The query's words each name (as written) stands for, or the names it replaced or was replaced by do;
        `frequencies`: how many chunks hold each word, of `total` (asked once for the names, once for their
        partners)."""
        names = list(dict.fromkeys(names))
        counts = dict(frequencies(sorted(set(query).union(*map(_tokens, names)))))
        asked = {word: counts.get(word, 0) for word in query}
        profiles = {name: self._profile(name, _hits(name, counts)) for name in names}
        partners = {name: _chosen(profile.partners, query) for name, profile in profiles.items()}
        unknown = set().union(*(_tokens(p) for found in partners.values() for p in found)) - counts.keys()
        if unknown:
            counts.update(frequencies(sorted(unknown)))
        kinds = {}
        known: dict[Name, frozenset[str]] = {}  # a partner of several names is read once
        for name, profile in profiles.items():
            kind = _kind(profile, query, asked, total)
            for partner in partners[name]:
                if partner not in known:
                    known[partner] = _kind(self._profile(partner, _hits(partner, counts)), query, asked, total)
            said = Counter(word for partner in partners[name] for word in known[partner])
            kind |= {word for word, n in said.items() if n >= PARTNERS_AGREE or profile.holding(word)}
            if kind:
                kinds[name] = kind
        if not kinds:  # no name stands for a word of the question alone: what do they stand for together?
            kinds = _pooled(profiles, query, asked, total)
        return kinds

    def holding(self, names: Iterable[Name], word: str) -> tuple[int, int]:
        """How many of the statements that name these names (as last read for their kinds) hold a word, of how many."""
        profiles = self._kept(names)
        return sum(profile.holding(word) for profile in profiles), sum(len(profile.said) for profile in profiles)

    def naming(self, names: Iterable[Name], word: str) -> float:
        """About how many of the chunks that name these names hold a word: the share of each one's statements read
        that hold it, of the chunks that hold its rarest word (a profile reads PROFILED statements at most)."""
        return sum(
            profile.hits * profile.holding(word) / len(profile.said) for profile in self._kept(names) if profile.said
        )

    def partners_of(self, names: Iterable[Name], query: Mapping[str, float]) -> list[Name]:
        """The names these names (as last read for their kinds) replaced or were replaced by, the most written first."""
        profiles = self._kept(names)
        return list(dict.fromkeys(partner for profile in profiles for partner in _chosen(profile.partners, query)))

    def _kept(self, names: Iterable[Name]) -> list[Profile]:
        """The profiles kept of these names; a name not read (or no longer kept) has none."""
        with self._lock:
            return [found for name in names if (found := self._profiles.get(_key(name))) is not None]

    def _profile(self, name: Name, hits: int) -> Profile:
        if hits < KIND_SUPPORT:
            return Profile(hits, ())  # too rare to say what it is: nothing to read or keep
        key = _key(name)
        with self._lock:
            found = self._profiles.get(key)
            if found is not None and found.hits == hits:
                self._profiles.move_to_end(key)
                return found
        said = tuple(itertools.islice(_statements_naming(self._read(" ".join(name), PROFILED), key), PROFILED))
        profile = Profile(hits, said, _partners(said, key))
        with self._lock:
            self._profiles[key] = profile
            self._profiles.move_to_end(key)
            while len(self._profiles) > PROFILES:
                self._profiles.popitem(last=False)
        return profile


def _key(name: Name) -> Name:
    return tuple(word.casefold() for word in name)


def _chosen(partners: Iterable[Name], query: Mapping[str, float]) -> list[Name]:
    """The PARTNERS names most often written with a name, as first written, but a name the question holds whole: it
    stands for itself, no kind of thing ("What replaced Redis?" makes nothing Redis; "Bunny CDN" stays a partner of
    a question about a CDN)."""
    written: dict[Name, Name] = {}
    counted: Counter[Name] = Counter()
    for partner in partners:
        key = _key(partner)
        written.setdefault(key, partner)
        counted[key] += 1
    chosen = [written[key] for key, _ in counted.most_common()]
    return [partner for partner in chosen if not _tokens(partner) <= query.keys()][:PARTNERS]


def _tokens(name: Name) -> frozenset[str]:
    """A name's words as the index counts them ("Typesense" is "typesens", "ClickHouse" "click hous")."""
    return frozenset().union(*map(tokens_of, name))


def _hits(name: Name, counts: Mapping[str, int]) -> int:
    """How many chunks hold its rarest word: a write that names it changes it, and its profile is read again."""
    return min((counts.get(token, 0) for token in _tokens(name)), default=0)


def _kind(profile: Profile, query: Mapping[str, float], frequencies: Mapping[str, int], total: int) -> frozenset[str]:
    if len(profile.said) < KIND_SUPPORT:
        return frozenset()
    # a word fewer than KIND_SUPPORT statements may hold stands for nothing, and is not looked for further
    shares = {word: profile.holding(word, KIND_SUPPORT) / len(profile.said) for word in query}
    top = max(shares.values(), default=0.0)
    return frozenset(
        word
        for word, share in shares.items()
        if share * len(profile.said) >= KIND_SUPPORT
        and share >= KIND_SHARE
        and share >= KIND_TOP * top
        and share >= KIND_LIFT * frequencies.get(word, 0) / max(total, 1)
    )


def _pooled(
    profiles: Mapping[Name, Profile],
    query: Mapping[str, float],
    frequencies: Mapping[str, int],
    total: int,
) -> dict[Name, frozenset[str]]:
    """A word no name stands for alone that the names holding it stand for together: a thing goes by so many names
    that each name's statements hold any one too seldom ("错误追踪", "异常监控" and "报错平台" of an error tracker,
    one statement in eight each), but of all the statements of the names that hold it, POOLED_LIFT times as many
    do as of the notes at large; KIND_SUPPORT of them at least, of POOLED_NAMES names or more."""
    shares: dict[str, tuple[float, list[Name]]] = {}
    for word in query:
        holders = {
            name: count
            for name, profile in profiles.items()
            if len(profile.said) >= KIND_SUPPORT and (count := profile.holding(word))
        }
        held = sum(holders.values())
        said = sum(len(profiles[name].said) for name in holders)
        if len(holders) < POOLED_NAMES or held < KIND_SUPPORT:
            continue
        if held / said >= POOLED_LIFT * frequencies.get(word, 0) / max(total, 1):
            shares[word] = (held / said, list(holders))
    # as for one name (KIND_TOP): a rare subject its values' notes hold now and then is not what they are
    top = max((share for share, _ in shares.values()), default=0.0)
    found: dict[Name, set[str]] = {}
    for word, (share, names) in shares.items():
        if share >= KIND_TOP * top:
            for name in names:
                found.setdefault(name, set()).add(word)
    return {name: frozenset(words) for name, words in found.items()}


def _statements_naming(rows: Iterable[ChunkRow], name: Name) -> Iterable[str]:
    """The texts of these chunks' statements that name a name, each once (overlapping chunks share lines)."""
    seen: set[str] = set()
    for row in rows:
        for text in entries_naming(row, name):
            if text not in seen:
                seen.add(text)
                yield text


def _partners(said: Iterable[str], name: Name) -> tuple[Name, ...]:
    """The names written with a name (casefolded) in its statements that say a change ("from Dragonfly to
    Memcached"), as written, in the order written."""
    found: list[Name] = []
    for text in said:
        if says_change(text):
            found += [group for group in dict.fromkeys(names_written(text)) if not set(_key(group)) & set(name)]
    return tuple(found)
