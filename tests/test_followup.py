"""What the follow-up reads (memoryd.search.followup): the chunks holding a word of the question's subject and a name
of the kind it asks about. Which words are the subject is what these tests hold."""

from __future__ import annotations

from memoryd.search.asked_kinds import partners_kinds, said_of_the_kind
from memoryd.search.followup import Holding, follow_up, split_question
from memoryd.search.kinds import Name, NameKinds
from memoryd.search.statements import names_written
from memoryd.store.rows import ChunkRow
from tests.test_currency import OTHER_NOTES, _indexed


def _asked(
    query: dict[str, float],
    kinds: dict[Name, frozenset[str]],
    holding: Holding | None = None,
    counts: dict[str, int] | None = None,
) -> tuple[list[str], list[Name]]:
    """The subject words and names the follow-up reads by."""
    asked: list[tuple[list[str], list[Name]]] = []

    def read(words: list[str], names: list[Name], limit: int) -> dict[int, ChunkRow]:
        asked.append((words, names))
        return {}

    follow_up(query, kinds, *split_question(query, kinds, holding, counts), read)
    assert len(asked) == 1, asked
    return asked[0]


CI: dict[Name, frozenset[str]] = {
    ("CircleCI",): frozenset({"ci"}),
    ("Jenkins",): frozenset({"ci"}),
    ("Buildkite",): frozenset({"ci"}),
}
CRASHES: dict[Name, frozenset[str]] = {("Rollbar",): frozenset({"report"}), ("Bugsnag",): frozenset({"report"})}


def test_the_subject_is_the_words_no_name_stands_for() -> None:
    words, names = _asked({"ci": 2.0, "report": 1.0}, CI)
    assert words == ["report"] and set(names) == set(CI)


def test_where_names_stand_for_every_word_the_kind_is_the_one_most_stand_for() -> None:
    """ "What CI is reporting on?": Rollbar and Bugsnag are crash reporting, yet "reporting" is the subject here."""
    words, names = _asked({"ci": 2.0, "report": 1.0}, {**CI, **CRASHES})
    assert words == ["report"] and set(names) == set(CI)
    flags: dict[Name, frozenset[str]] = {
        (n,): frozenset({"flag", "servic"}) for n in ("Unleash", "GrowthBook", "Flagsmith")
    }
    words, names = _asked({"flag": 2.0, "servic": 1.5, "ship": 1.0}, {**flags, ("Loki",): frozenset({"ship"})})
    assert words == ["ship"] and set(names) == set(flags)  # "feature flag service" is one kind


def test_a_word_the_kinds_statements_often_hold_is_not_the_subject() -> None:
    """ "Which content delivery network does recommendations use?": the notes call Akamai and Fastly a CDN and an edge
    network as often, so no name stands for "content" alone; but a third of their statements hold it. Read by
    "content" too, the follow-up's twenty chunks were other services' content delivery networks."""
    kinds: dict[Name, frozenset[str]] = {("Akamai",): frozenset({"network"}), ("Fastly",): frozenset({"network"})}
    query = {"content": 4.2, "deliveri": 4.2, "network": 3.4, "recommend": 1.7}
    held = {"content": (16, 48), "deliveri": (16, 48), "recommend": (2, 48)}
    counts = {"content": 40, "deliveri": 40, "recommend": 60}
    words, _ = _asked(query, kinds, lambda names, word: held[word], counts)
    assert words == ["recommend"]
    words, _ = _asked(query, kinds)
    assert words == ["content", "deliveri", "recommend"]  # without the statements, the heaviest three
    words, _ = _asked(query, kinds, lambda names, word: (24, 48), counts)
    assert words == ["content", "deliveri", "recommend"]  # every word the kind's: the subject is still read


def test_a_word_said_of_the_kind_in_most_places_it_is_said_is_not_the_subject() -> None:
    """ "analytics 的缓存层是什么？": "层" (layer) is in few of the cache names' statements, but most notes that hold it
    are about a cache; "analytics" is in as many of them, and in many more notes about other things. A word two
    statements hold says nothing either way (a small workspace's subject is in as few)."""
    kinds: dict[Name, frozenset[str]] = {("Redis",): frozenset({"缓", "存"}), ("Valkey",): frozenset({"缓", "存"})}
    query = {"缓": 2.5, "存": 1.4, "层": 5.0, "analyt": 1.9}
    held = {"层": (4, 48), "analyt": (4, 48)}
    counts = {"层": 5, "analyt": 47}
    assert split_question(query, kinds, lambda names, word: held[word], counts) == ({"缓", "存"}, {"analyt"})
    held = {"层": (2, 48), "analyt": (2, 48)}
    counts = {"层": 2, "analyt": 2}
    assert split_question(query, kinds, lambda names, word: held[word], counts) == ({"缓", "存"}, {"analyt", "层"})


def test_the_holding_is_of_the_statements_read_for_the_names_kinds() -> None:
    rows, frequencies, kinds = _indexed(
        {
            "2025-02-01": "- Akamai is the content delivery network of payments.",
            "2025-02-02": "- Picked Akamai as the content delivery network of search.",
            "2025-02-03": "- ledger uses Akamai for its edge network.",
            "2025-02-04": "- Akamai is the edge network of reporting.",
            **OTHER_NOTES,
        }
    )
    akamai: Name = ("Akamai",)
    assert kinds.holding([akamai], "content") == (0, 0)  # no profile read yet: nothing to tell
    assert kinds.kinds([akamai], {"network": 1.0, "content": 1.0}, frequencies, len(rows)) == {akamai: {"network"}}
    assert kinds.holding([akamai], "content") == (2, 4)
    assert kinds.holding([akamai], "ledger") == (1, 4)
    assert kinds.naming([akamai], "content") == 2.0  # the chunks naming it, four, as its statements read hold it


CDNS = {  # the notes call Akamai and Fastly a CDN; CloudFront is named only in moves from and to them
    "2025-02-01": "- payments: Akamai is the CDN.",
    "2025-02-02": "- Picked Akamai as the CDN of search.",
    "2025-02-03": "- ledger uses Fastly for its CDN.",
    "2025-02-04": "- Fastly is the CDN of reporting.",
    "2025-02-05": "- Switched the catalog CDN from CloudFront to Fastly.",
    "2025-02-06": "- auth: migrated the CDN off CloudFront onto Akamai.",
    "2025-02-07": "- Moved the inventory CDN from Akamai to CloudFront.",
    "2025-02-08": "- Got it, I will remember: shipping moved its CDN from Fastly to Akamai.",
}


def test_the_names_a_kinds_names_replaced_are_of_the_kind_too() -> None:
    """No candidate names CloudFront, so its notes were never read: billing's move to it, worded as a clause, was
    not followed up. The names of the kind asked about replaced it and were replaced by it: it is read, and is a CDN.
    "I" is written with a capital, and is no name ("Got it, I will remember: ... from Fastly to Akamai")."""
    rows, frequencies, kinds = _indexed({**CDNS, **OTHER_NOTES})
    query = {"cdn": 2.0, "bill": 1.0}
    known = kinds.kinds([("Akamai",), ("Fastly",)], query, frequencies, len(rows))
    assert known == {("Akamai",): {"cdn"}, ("Fastly",): {"cdn"}}
    assert partners_kinds(known, query, frequencies, len(rows), kinds) == {("CloudFront",): {"cdn"}}
    assert names_written(CDNS["2025-02-08"]) == (("CDN",), ("Fastly",), ("Akamai",))


class _Holding(NameKinds):
    """Statements of the names as told: a word -> (how many hold it, of how many)."""

    def __init__(self, held: dict[str, tuple[int, int]]) -> None:
        super().__init__(lambda name, limit: [])
        self._held = held

    def holding(self, names, word):  # type: ignore[no-untyped-def]
        return self._held[word]


def test_a_name_of_the_kind_stands_for_what_is_said_of_the_kind() -> None:
    """Redis and Valkey stand for "缓存" (cache); "层" (layer) is said of caches in most notes that say it: a statement
    that names Redis holds "缓存层" as one that says it does, and "analytics" stays the subject's."""
    kinds: dict[Name, frozenset[str]] = {
        ("Redis",): frozenset({"缓", "存"}),
        ("Valkey",): frozenset({"缓", "存"}),
    }
    query = {"缓": 2.5, "存": 1.4, "层": 5.0, "analyt": 1.9}
    counts = {"层": 5, "analyt": 47, "缓": 30, "存": 70}
    profiles = _Holding({"层": (4, 48), "analyt": (4, 48)})
    said = said_of_the_kind(kinds, query, counts, profiles)
    assert said == {("Redis",): {"缓", "存", "层"}, ("Valkey",): {"缓", "存", "层"}}
    profiles = _Holding({"层": (2, 48), "analyt": (4, 48)})  # two statements say nothing
    assert said_of_the_kind(kinds, query, counts, profiles) == kinds


def test_a_subject_its_own_tools_stand_for_is_still_the_subject() -> None:
    """ "Which logging does inventory use?": the notes name Spinnaker and Octopus Deploy only as inventory's deploy
    tools, so they stand for "inventory" as Loki and Splunk stand for "log". But most chunks that say "log" name
    those names, and few of the many that say "inventory" name its deploy tools: inventory is the subject. "use",
    said of everything too, is taken only where no heavier word is left to the subject. Chunks, not the statements
    read: a profile reads 24 at most, and a kind said in 2,000 chunks is still said mostly of its names."""
    kinds: dict[Name, frozenset[str]] = {
        ("Loki",): frozenset({"log"}),
        ("Splunk",): frozenset({"log"}),
        ("Spinnaker",): frozenset({"inventori"}),
        ("Octopus", "Deploy"): frozenset({"inventori"}),
    }
    own = {"log": (30, 40), "inventori": (7, 7), "us": (4, 47), "mail": (30, 40)}  # statements of its own names
    chunks = {"log": 36.0, "inventori": 7.0, "us": 9.0, "mail": 36.0}  # chunks naming its own names that hold it

    def holding(names: list[Name], word: str) -> tuple[int, int]:
        mine = all(word in found.get(name, ()) for name in names)
        return own[word] if mine else (2, 51)

    def naming(names: list[Name], word: str) -> float:
        return chunks[word] if all(word in found.get(name, ()) for name in names) else 2.0

    query = {"log": 1.9, "inventori": 1.8, "us": 0.9}
    counts = {"log": 45, "inventori": 80, "us": 200}
    found = kinds
    assert split_question(query, kinds, holding, counts, naming) == ({"log"}, {"inventori", "us"})
    assert split_question(query, kinds, holding, counts) == ({"log", "inventori"}, {"us"})  # nothing to tell by
    counts["inventori"] = 20  # named with its tools in a third of the chunks that say it: a kind as much as "log"
    assert split_question(query, kinds, holding, counts, naming) == ({"log", "inventori"}, {"us"})
    counts["inventori"], counts["log"], chunks["log"] = 80, 2000, 1600.0  # the kind said in many more chunks
    assert split_question(query, kinds, holding, counts, naming) == ({"log"}, {"inventori", "us"})
    found = {("Mailgun",): frozenset({"mail", "us"}), ("Postmark",): frozenset({"mail"}), ("Helm",): frozenset({"us"})}
    mail = {"mail": 2.0, "us": 0.9, "catalog": 1.5}
    assert split_question(mail, found, holding, {"mail": 40, "us": 200}, naming) == ({"mail", "us"}, {"catalog"})
