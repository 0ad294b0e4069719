"""Which statement is current. Facts change ("billing's cache moved from Redis to Memcached"), and the first
statement of a fact often reads more like the question than the change does. Among a search's best candidates, a
statement that a later one restates ranks just below it, and a statement a note marks superseded scores SUPERSEDED
of what it would, for a question about now; a question about before ("what did we use before?") gets the statement
before the current one first.

A candidate's statement is its focus entry, the one that holds most of the question's weight (search.focus). A
later candidate *restates* an earlier one when it is dated at least a day later, its focus holds all but
MAX_UNCOVERED of the query weight the earlier one's holds and lacks no word weighing more than MAX_LACKING_WORD of
the heaviest ("checkout's flag service moved" lacks "ledger": it restates nothing "ledger's flag service" said), both
hold at least MIN_COVERAGE of what the best candidate holds and MIN_SHARE of the whole query, it says it changes
something (CHANGE: a conversation that comes back to a topic restates nothing), and it scores at least
RESTATED_SCORE of the earlier one's; the newest restatement of one thing takes the earlier one's score, which ranks
just below it. Asked about before, a thing's history is the statements that restate each other both ways (one
scoring under WITHIN of the best too: it is only left alone when asked about now), and the one replaced is the one
the current statement names the value of ("no longer uses Memcached"; a name as written: "GitLab" names nothing of
"GitHub"), else one that was a change itself, else the latest; of those that name a thing of the kind asked about,
where one does (a later "billing's CDN was slow" names no CDN). Each constant was chosen on the knowledge-update
bench (bench/knowledge.py) and LoCoMo together (docs/design.md, "The newest statement first"). A statement that holds
some of the question also holds the words its names stand for (search.kinds: "indexes its documents in Meilisearch"
is about a search engine), so a change worded as a clause or with a synonym restates too. Once a change among the
candidates is about the question, the changes the search did not find are looked for by the question's subject and
the names of the kind it asks about (search.followup); one found scores as the best candidate that holds no
more of the question, and may take the place of the statement it replaced like any other, and so does a candidate
that holds words of the question only through its names (its keyword score cannot know what they are). A change
that names the value an earlier statement of its subject named, or a thing of the kind asked about as that one
does, restates it whatever words of the question it lacks ("from Datadog to Prometheus" of "catalog uses Datadog for
its monitoring tool"); the subject is the question's words that are not the kind's (search.followup.split_question),
and only a statement of it takes another's place, restates one of it (it holds the heaviest word of the subject the
earlier one holds: "auth" weighs little where most notes name auth, yet inventory's move says nothing of auth's), or
is lifted for what its names stand for."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Mapping

from memoryd.search.asked_kinds import (
    joined,
    kinds_of_things,
    names_of,
    partners_kinds,
    said_of_the_kind,
    value_kinds,
)
from memoryd.search.focus import Focus, find_foci, is_dated, query_weights, stands_for
from memoryd.search.followup import Followed, follow_up, split_question
from memoryd.search.function_words import content_tokens
from memoryd.search.kinds import NameKinds
from memoryd.search.statements import says_change, statements_of, tokens_of
from memoryd.sources.entries import MARK
from memoryd.store.rows import ChunkRow

CONSIDERED = 80  # best candidates looked at: both sides of the pool of a search for 10 results (candidate_multiplier 4)
WITHIN = 0.4  # a statement restated only when it scores at least this share of the best one's
MIN_GAP_SECONDS = 86_400.0  # a day: notes written the same day restate nothing
MIN_COVERAGE = 0.5  # share of the best candidate's query weight a statement's focus must hold to be about it
MIN_SHARE = 0.4  # ... and of the whole query's: a statement that holds less is not about the question
MAX_UNCOVERED = 0.35  # share of the earlier focus's query weight the later one may lack
MAX_LACKING_WORD = 0.5  # ... and no word it lacks weighs more than this share of the heaviest the earlier one holds
RESTATED_SCORE = 0.25  # the later statement scores at least this share of the earlier one's
BELOW = 0.98  # a restated statement's score: just under the statement that restates it
SUPERSEDED = 0.6  # a statement a note marks superseded, for a question about now


def _any_change_about(foci: Mapping[int, Focus]) -> bool:
    """Some candidate's focus says a change and holds MIN_SHARE of the question."""
    return any(f.change and f.weight >= MIN_SHARE for f in foci.values())


def _any_marked(ranked: list[int], rows: Mapping[int, ChunkRow]) -> bool:
    return any("superseded" in rows[cid].text and MARK.search(rows[cid].text) for cid in ranked)


def _restates(later: frozenset[str], earlier: frozenset[str], query: Mapping[str, float]) -> bool:
    """Whether a change holding the question's words `later` says what one holding `earlier` said of the thing asked
    about: it lacks no heavy word of it and (nearly) none of its weight."""
    if _lacks_heavy(later, earlier, query):
        return False  # "shipping's flag service moved" restates nothing "ledger's flag service" said
    held = math.fsum(query[t] for t in earlier) or 1.0
    return math.fsum(query[t] for t in earlier - later) <= MAX_UNCOVERED * held


def _lacks_heavy(one: frozenset[str], other: frozenset[str], query: Mapping[str, float]) -> bool:
    """`one` lacks a word of the question `other` holds that weighs more than MAX_LACKING_WORD of the heaviest."""
    lacking = [query[t] for t in other - one]
    return bool(lacking) and max(lacking) > MAX_LACKING_WORD * max(query[t] for t in other)


def rerank(
    scores: dict[int, float],
    rows: dict[int, ChunkRow],
    question: str,
    frequencies: Callable[[list[str]], Mapping[str, int]],
    total: int,
    *,
    past: bool,
    anchor: str = "",
    profiles: NameKinds | None = None,
    more: Followed | None = None,
) -> dict[int, str]:
    """Change `scores` in place so that the current statement of each thing asked about ranks first (or, `past`,
    the one before it); returns a note per candidate moved, for `explain`. `anchor`, the event a question about
    before names ("before Valkey"), says when and not what: only the current statement can hold it. Scores may
    change without a note (the current statement right after the one before it). `more` reads what the search did
    not find (search.followup): the rows it adds to `rows` and `scores` are the caller's candidates from then on."""
    if not scores:
        return {}
    ranked = [cid for cid in sorted(scores, key=lambda cid: -scores[cid])[:CONSIDERED] if cid in rows]
    times = [rows[cid].when for cid in ranked if is_dated(rows[cid])]
    spread = max(times) - min(times) if times else 0.0
    marked = _any_marked(ranked, rows)
    if len(ranked) < 2 or (spread < MIN_GAP_SECONDS and not marked):
        return {}  # nothing dated apart and nothing marked: no statement can have replaced another
    saying = [cid for cid in ranked if says_change(rows[cid].text)]
    if not saying and not marked:
        return {}  # no candidate says a change (most do not): none restates another
    query = query_weights(question, frequencies, total)
    if anchor:  # "before billing moved to Valkey" still asks about billing: only words said in the anchor alone go
        elsewhere = set(content_tokens(question.replace(anchor, " ")))
        for word in set(content_tokens(anchor)) - elsewhere:
            query.pop(word, None)
    if not query:
        return {}
    # what names stand for is read in two steps: the changes' first, the rest's only once a change is about the
    # question (most searches stop there: reading a name's notes is most of what currency costs)
    kinds: dict[tuple[str, ...], frozenset[str]] = {}
    if profiles is not None:
        stated = [s for cid in saying for s in statements_of(rows[cid]) if s.change]
        kinds = value_kinds(stated, query, frequencies, total, profiles)
    changing = find_foci(rows, saying, query, kinds)
    if not marked and not _any_change_about(changing):
        return {}  # no change is about the question: only one that is restates (the pair loop's floor)
    followed: set[int] = set()
    bottom = min(scores[cid] for cid in ranked) * BELOW
    asked: frozenset[str] = frozenset()
    subject: frozenset[str] = frozenset()
    if profiles is not None:
        others = (s for cid in ranked for s in statements_of(rows[cid]) if not s.change)
        kinds = kinds_of_things(joined(value_kinds(others, query, frequencies, total, profiles, whole=True), kinds))
        if kinds:  # no name stands for a word of the question: it has no kind and no subject to follow up
            counts = frequencies(sorted(query))
            if not past:  # asked about before, it took other things' histories (varied th 0.773 -> 0.74)
                kinds = said_of_the_kind(kinds, query, counts, profiles)
            if more is not None:
                kinds = {**partners_kinds(kinds, query, frequencies, total, profiles), **kinds}
            # the words of the question no name stands for are its subject ("billing" of its cache)
            asked, subject = split_question(query, kinds, profiles.holding, counts, profiles.naming)
        if more is not None and asked:  # the changes the search did not find, of the thing asked about
            for cid, row in follow_up(query, kinds, asked, subject, more).items():
                if cid not in scores and is_dated(row):
                    rows[cid], scores[cid] = row, bottom
                    ranked.append(cid)
                    followed.add(cid)
                    if says_change(row.text):
                        saying.append(cid)
        changing = find_foci(rows, saying, query, kinds)
        if not marked and not _any_change_about(changing):
            for cid in followed:  # weighed with nothing: not the caller's candidates either
                del rows[cid], scores[cid]
            return {}
    rest = find_foci(rows, [cid for cid in ranked if cid not in changing], query, kinds)
    foci = {cid: changing[cid] if cid in changing else rest[cid] for cid in ranked}  # in rank order
    best = max((f.weight for f in foci.values()), default=0.0)
    for cid in followed:  # as the best candidate found that holds no more of the question
        held = foci[cid].weight
        peers = (scores[c] for c in ranked if c not in followed and foci[c].weight <= held)
        scores[cid] = max(peers, default=bottom)
    notes = dict.fromkeys(followed, "found by the subject and a name of the kind asked about")
    words: dict[int, frozenset[str]] = {}

    def headed(cid: int) -> frozenset[str]:
        """A statement's words of the question and its heading's ("## catalog" over "- cache store: Valkey")."""
        if cid not in words:
            words[cid] = foci[cid].terms | tokens_of(rows[cid].heading)
        return words[cid]

    # a statement of the subject in its words or its heading's ("## auth" over "- runs on Hetzner now")
    of_subject = {cid for cid in ranked if not subject or subject & headed(cid)}
    _lift_named(scores, foci, [cid for cid in ranked if cid not in followed], notes, of_subject)
    newer: dict[int, list[int]] = {cid: [] for cid in foci}
    # of those, the ones that say the same of it as it of them: its history, not a better match of a weaker one
    same: dict[int, list[int]] = {cid: [] for cid in foci}
    top = scores[ranked[0]]
    floor = max(MIN_COVERAGE * best, MIN_SHARE)  # what both statements of a restatement hold of the question
    # only a change restates; in date order (the ones a day after a statement are a tail of them), then by rank (of
    # two said the same day, the better match is the newest)
    changes = sorted(
        (f.when, rank, cid) for rank, (cid, f) in enumerate(foci.items()) if f.change and f.dated and f.weight >= floor
    )
    # what the question's words tell of two statements depends on their words alone: worked out once a pair of them
    related: dict[tuple[frozenset[str], frozenset[str]], tuple[bool, bool]] = {}
    named: Callable[[int, int], bool] | None = None  # read once it is asked: it counts the candidates' names

    for earlier in foci if changes else ():
        said = foci[earlier]
        if said.weight < floor or not said.dated or (scores[earlier] < WITHIN * top and not past):
            continue
        for _, _, later in changes[bisect.bisect_left(changes, (said.when + MIN_GAP_SECONDS, -1, -1)) :]:
            # a score the follow-up gave (a peer's) says nothing of how well the statement matched
            if scores[later] < RESTATED_SCORE * scores[earlier] and not followed & {later, earlier}:
                continue
            pair = (foci[later].terms, said.terms)
            if pair not in related:
                related[pair] = (_restates(*pair, query), not _lacks_heavy(said.terms, foci[later].terms, query))
            restates, both_ways = related[pair]
            # a change that names the value an earlier statement of its subject named, or a thing of the kind both
            # name, is about what that one said, whatever words it lacks: "moved catalog's monitoring from Datadog to
            # Prometheus" of "catalog uses Datadog for its monitoring tool" (asked about before, the history is what
            # restates both ways)
            shared = (subject or said.terms) & said.terms & foci[later].terms
            if not restates and not past and shared:
                named = named or _named_values(foci, query, frequencies)
                restates = named(later, earlier) or _same_kind(foci[later], said, subject, kinds, query)
            # another subject's change says nothing of this one's, however light its name ("auth", one service of many)
            restates = restates and _keeps_subject(headed(later), headed(earlier), subject, query)
            if restates:
                newer[earlier].append(later)
                # asked about before, a history is the subject's: analytics' cache store says nothing of catalog's
                if both_ways and (not past or not subject or subject & headed(earlier) & headed(later)):
                    same[earlier].append(later)
    if past:
        _before_first(scores, foci, same, notes, named or _named_values(foci, query, frequencies), kinds)
        return notes
    for cid, found in foci.items():
        if found.marked:
            scores[cid] *= SUPERSEDED
            notes[cid] = "marked superseded"
    # newest restatements first, so that a chain (Redis -> Memcached -> Valkey) settles in date order: the newest
    # statement takes the score of what it replaced, which ranks just below it
    for cid in sorted(newer, key=lambda c: -foci[c].when):
        if newer[cid]:
            latest = max(newer[cid], key=lambda c: foci[c].when)
            # the question matched the old statement: the new one, of the same thing, takes its place (of the
            # question's subject: another service's change climbs no higher than it scored)
            if (
                (latest in same[cid] or latest in followed)
                and scores[latest] < scores[cid]
                and (not subject or subject & foci[cid].terms & foci[latest].terms)
            ):
                scores[latest] = scores[cid]
                notes[latest] = _also(notes.get(latest), "in the place of the statement it replaced")
            lowest = min(scores[later] for later in newer[cid])
            if scores[cid] >= lowest * BELOW:
                scores[cid] = lowest * BELOW
                notes[cid] = "restated later"
    return notes


def _lift_named(
    scores: dict[int, float], foci: Mapping[int, Focus], ranked: list[int], notes: dict[int, str], lifted: set[int]
) -> None:
    """A statement that holds words of the question only through what its names stand for ("auth runs on Hetzner now"
    of "which hosting is auth on?") scores, just below, as the best candidate that holds no more of the question: its
    keyword score does not know what Hetzner is."""
    by_weight = sorted(ranked, key=lambda cid: foci[cid].weight)
    weights = [foci[cid].weight for cid in by_weight]
    best_so_far = list(itertools.accumulate((scores[cid] for cid in by_weight), max))
    for cid in ranked:
        found = foci[cid]
        if not found.named or cid not in lifted:
            continue
        peers = bisect.bisect_right(weights, found.weight)  # itself among them: it is lifted only when one scores more
        if peers and best_so_far[peers - 1] * BELOW > scores[cid]:
            scores[cid] = best_so_far[peers - 1] * BELOW
            notes[cid] = "holds the question through what its names stand for"


def _also(note: str | None, then: str) -> str:
    return f"{note}; {then}" if note else then


def _named_values(
    foci: Mapping[int, Focus], query: Mapping[str, float], frequencies: Callable[[list[str]], Mapping[str, int]]
) -> Callable[[int, int], bool]:
    """Whether a statement names what an earlier one said ("no longer uses Memcached" of "switched to Memcached"):
    they share a word that is not the question's, nor one a question or a change is made of ("switched", "no
    longer"), nor a speaker's label: a name (asked_kinds.names_of)."""
    names = names_of([w for f in foci.values() for w in f.words], query, frequencies)

    def named(later: int, earlier: int) -> bool:
        return bool(
            {w.casefold() for w in foci[later].words} & {w.casefold() for w in foci[earlier].words} & names.keys()
        )

    return named


def _before_first(
    scores: dict[int, float],
    foci: Mapping[int, Focus],
    newer: Mapping[int, list[int]],
    notes: dict[int, str],
    named: Callable[[int, int], bool],
    kinds: Mapping[tuple[str, ...], frozenset[str]],
) -> None:
    """For a question about before: the statement just before the current one ranks first, the current one right
    after it (asked "what did we use before?", both are the answer's context). The thing asked about is the one whose
    current statement holds most of the question (then scores best): its two go above every other candidate; any
    other thing's previous statement only trades places with its current one."""
    chains = []
    for current, found in foci.items():
        if newer[current] or found.marked:
            continue
        older = [cid for cid, later in newer.items() if current in later]
        naming = [cid for cid in older if named(current, cid)]
        # a statement of a value names one (a thing of a kind asked about): not "billing's CDN was slow today"
        older = [cid for cid in older if cid in naming or _named_kind(foci[cid], kinds)] or older
        # the statement it replaced: one it names the value of, else one that was itself a change, else the latest
        replaced = naming or [cid for cid in older if foci[cid].change]
        previous = max(replaced or older, key=lambda cid: foci[cid].when, default=None)
        if previous is not None:
            chains.append((found.weight, scores[current], current, previous))
    if not chains:
        return
    top = max(scores.values())
    chains.sort(key=lambda chain: (chain[0], chain[1]), reverse=True)
    for rank, (_, _, current, previous) in enumerate(chains):
        if rank == 0:
            scores[previous], scores[current] = top / BELOW**2, top / BELOW
        elif scores[previous] <= scores[current]:
            scores[previous], scores[current] = scores[current], scores[current] * BELOW
        else:
            continue
        notes[previous] = _also(notes.get(previous), "the statement before the current one")


def _same_kind(
    later: Focus,
    earlier: Focus,
    subject: frozenset[str],
    kinds: Mapping[tuple[str, ...], frozenset[str]],
    query: Mapping[str, float],
) -> bool:
    """Both name a thing of the kind asked about (its word fewest names stand for), and the later holds the heaviest
    word of the subject the earlier holds ("dùng", "use", is no subject of anything)."""
    heaviest = _heaviest_held(subject, earlier.terms, query)
    if heaviest is None or heaviest not in later.terms:
        return False
    asked = frozenset().union(*kinds.values()) & query.keys() - subject
    if not asked:
        return False
    # the word of the kind fewest names stand for: "log" of "hệ thống log", not "hệ thống" (a metrics system too)
    specific = min(asked, key=lambda word: (sum(word in kind for kind in kinds.values()), -query[word], word))
    return specific in _named_kind(later, kinds) & _named_kind(earlier, kinds)


def _keeps_subject(
    later: frozenset[str], earlier: frozenset[str], subject: frozenset[str], query: Mapping[str, float]
) -> bool:
    """The later statement holds the heaviest word of the question's subject that the earlier one holds."""
    heaviest = _heaviest_held(subject, earlier, query)
    return heaviest is None or heaviest in later


def _heaviest_held(subject: frozenset[str], terms: frozenset[str], query: Mapping[str, float]) -> str | None:
    """The heaviest word of the question's subject these words hold (ties by the word), or None."""
    held = subject & terms
    return max(held, key=lambda word: (query[word], word)) if held else None


def _named_kind(focus: Focus, kinds: Mapping[tuple[str, ...], frozenset[str]]) -> frozenset[str]:
    return stands_for(focus.said, kinds) if focus.said is not None else frozenset()
