"""Which statement is current (memoryd.search.currency): asked what holds now, a fact's newest statement ranks
above the ones it replaced; asked what came before, the statement before the current one ranks first; a change of
another thing demotes nothing. Dated daily notes in a real SQLite index, keyword search (no model)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.memory import AgentMemory
from memoryd.search.asked_kinds import names_of
from memoryd.search.currency import rerank
from memoryd.search.function_words import content_tokens
from memoryd.search.keyword import bm25_idf
from memoryd.search.kinds import NameKinds
from memoryd.search.statements import CHANGE, _statements, entries_naming, event_words, holds, says_change
from memoryd.store.rows import ChunkRow
from tests.conftest import write

FILLER = "- Lunch with Dan and Carla.\n- Wrote the weekly update for leadership.\n"
# a year of other notes, so that a service's or a tool's name is as rare as it is in a real workspace
SERVICES = ("auth", "search", "reporting", "payments", "shipping", "inventory")
TOOLS = ("database", "message queue", "CI", "logging", "CDN", "email provider")
BACKGROUND = {
    f"2024-{month:02d}-{day:02d}": f"- {SERVICES[(month + day) % 6]} uses tool {month * 31 + day} for its "
    f"{TOOLS[(month * day) % 6]}.\n- Standup: {SERVICES[month % 6]} is on track for the sprint.\n"
    for month in range(1, 13)
    for day in (3, 17)
}


Year = Callable[[dict[str, str]], AgentMemory]


@pytest.fixture
def notes(workspace: Path, memory_factory: Callable[..., AgentMemory]) -> Year:
    """Dated daily notes (day -> entries) beside the background year, indexed, keyword only."""

    def index(days: dict[str, str]) -> AgentMemory:
        for day, entries in {**BACKGROUND, **days}.items():
            write(workspace / "memory" / f"{day}.md", f"# {day}\n\n{entries}")
        memory = memory_factory(provider="none")
        memory.sync()
        return memory

    return index


def ranked(memory: AgentMemory, question: str) -> list[str]:
    hits = memory.search(question, mode="keyword").results
    return [hit.path.removeprefix("memory/").removesuffix(".md") for hit in hits]


def assert_above(memory: AgentMemory, first: str, then: str, *questions: str) -> None:
    """Asked each question, the note of day `first` ranks above the note of day `then`."""
    for question in questions:
        order = ranked(memory, question)
        assert order.index(first) < order.index(then), (question, order)


@pytest.mark.parametrize(
    "change",
    [
        "- From today billing uses Memcached as its cache.",  # a change said with a time, no verb of change
        "- Switched the billing cache from Redis to Memcached after the incident review.",
        "- billing: migrate the cache from Redis to Memcached, done.",
    ],
)
def test_the_newest_statement_of_a_fact_ranks_above_the_first(notes: Year, change: str) -> None:
    memory = notes(
        {
            "2025-01-10": f"- billing: we use Redis as the cache for invoices and sessions.\n{FILLER}",
            "2025-06-02": f"{FILLER}{change}\n",
        },
    )
    assert_above(
        memory, "2025-06-02", "2025-01-10", "Which cache does billing use?", "What is the cache of billing now?"
    )


def test_a_change_of_another_thing_demotes_nothing(notes: Year) -> None:
    """ "checkout's flag service moved" says nothing of ledger's, although it holds most of the question's words."""
    memory = notes(
        {
            "2025-03-04": f"- ledger uses Unleash for its feature flag service.\n{FILLER}",
            "2025-09-15": "- Switched the checkout feature flag service from Flagsmith to GrowthBook.\n",
            "2025-10-01": "- Rolled out ConfigCat as the new feature flag service for billing.\n",
        },
    )
    hits = memory.search("Which feature flag service does ledger use?", mode="keyword", explain=True).results
    assert hits[0].path == "memory/2025-03-04.md", [h.path for h in hits]
    assert not hits[0].explain or "restated later" not in (hits[0].explain.get("notes") or [])


def test_a_camel_case_name_is_the_words_the_index_holds(notes: Year) -> None:
    memory = notes(
        {
            "2025-03-04": f"- LedgerCore uses Unleash for its feature flag service.\n{FILLER}",
            "2025-09-15": "- Switched the checkout feature flag service from Flagsmith to GrowthBook.\n",
        },
    )
    assert ranked(memory, "Which feature flag service does LedgerCore use?")[0] == "2025-03-04"


def test_a_question_word_is_matched_as_a_word_not_inside_one(notes: Year) -> None:
    """ "pricing" stems to "price", which is not inside the text "pricing": the statement was read as not about it."""
    memory = notes(
        {
            "2025-02-08": f"- Set up Elasticsearch as the logging for pricing today.\n{FILLER}",
            "2025-11-07": "- pricing no longer uses Elasticsearch for the logging; it is Loki now.\n",
        },
    )
    assert_above(memory, "2025-11-07", "2025-02-08", "What does pricing use as its logging?")


def test_asked_what_came_before_the_previous_statement_ranks_first(notes: Year) -> None:
    memory = notes(
        {
            "2025-01-10": f"- billing: we use Redis as the cache.\n{FILLER}",
            "2025-04-02": "- Switched the billing cache from Redis to Memcached.\n",
            "2025-06-20": "- Checked the billing cache dashboards, the cache hit rate looks fine.\n",
            "2025-07-01": "- Switched the billing cache alerts over to Grafana.\n",  # a change, but of no value
            "2025-09-15": "- billing no longer uses Memcached for the cache; it is Valkey now.\n",
        },
    )
    for question in ("What did billing use as its cache before?", "What cache did billing use before Valkey?"):
        assert ranked(memory, question)[:2] == ["2025-04-02", "2025-09-15"], question
    assert ranked(memory, "Which cache does billing use?")[0] == "2025-09-15"


def test_before_a_value_is_before_this_things_move_to_it(notes: Year) -> None:
    """Another service moved to Valkey first: "before Valkey" is before billing's move, not before checkout's."""
    memory = notes(
        {
            "2025-01-10": "- billing: we use Redis as the cache.\n",
            "2025-03-01": "- Switched the checkout cache from Memcached to Valkey.\n",
            "2025-05-12": "- Switched the billing cache from Redis to Memcached.\n",
            "2025-09-15": "- Switched the billing cache from Memcached to Valkey.\n",
        },
    )
    assert ranked(memory, "What cache did billing use before Valkey?")[:2] == ["2025-05-12", "2025-09-15"]
    # the anchor's words say when, but a word the question also says elsewhere is still what it asks about
    assert ranked(memory, "What cache did billing use before billing moved to Valkey?")[0] == "2025-05-12"


def test_the_statement_before_is_the_one_whose_name_the_current_repeats_whole(notes: Year) -> None:
    """ "GitLab CI" names nothing of "GitHub Actions", though the analyzer makes git of both: the statement before
    is the latest change, CircleCI."""
    memory = notes(
        {
            "2025-10-09": f"- Picked Jenkins as the CI of billing because the team already knows it.\n{FILLER}",
            "2025-11-04": "- Rolled out GitHub Actions as the new CI for billing.\n",
            "2025-11-27": f"{FILLER}- billing now uses CircleCI for the CI.\n",
            "2025-12-26": "- The CI of billing moved to GitLab CI.\n",
        },
    )
    assert ranked(memory, "What did billing use as its CI before?")[:2] == ["2025-11-27", "2025-12-26"]


def test_the_statement_before_names_a_value_not_only_the_thing(notes: Year) -> None:
    """A later note about billing's CDN that names no CDN ("was slow") is no statement of what it used: asked what
    came before, the one that names a CDN ranks first (the notes call Cloudflare and Fastly CDNs: names of a kind
    of thing, not one person's, search.kinds)."""
    others = {
        f"2025-02-{day:02d}": f"- {service} uses {cdn} as the CDN.\n"
        for day, (service, cdn) in enumerate(
            [(s, c) for s in ("payments", "shipping", "search") for c in ("Cloudflare", "Fastly", "Akamai")], 2
        )
    }
    quiet = {f"2025-04-{day:02d}": FILLER for day in range(1, 21)}  # a CDN is what some notes say, not most
    memory = notes(
        {
            **others,
            **quiet,
            "2024-12-02": "- billing serves its static files through Fastly.\n",
            "2025-01-17": f"- billing uses Cloudflare as the CDN.\n{FILLER}",
            "2025-03-17": "- The billing CDN was slow during the deploy, Dan is looking into it.\n",
            "2025-11-10": "- billing now uses Akamai as the CDN.\n",
        },
    )
    assert ranked(memory, "Which CDN did billing use before?")[:2] == ["2025-01-17", "2025-11-10"]


@pytest.mark.parametrize(
    "question",
    [
        "What cache did billing use before the switch to Valkey?",
        "billing dùng cache gì trước Valkey?",  # Vietnamese: before a name
        "Trước khi chuyển sang Valkey, billing dùng cache gì?",
        "换成Valkey之前，billing用的是什么缓存？",  # Chinese: a move to a name before 之前
        "แคชของ billing ก่อนใช้ Valkey คืออะไร",  # Thai: before using a name
    ],
)
def test_before_a_move_is_dated_by_the_name_not_by_the_words_of_moving(notes: Year, question: str) -> None:
    """An event's words that say a change or a use ("switch to", "chuyển sang", "换成", "ใช้") name nothing: the
    move is billing's move to Valkey, not the latest note that says "switched"."""
    memory = notes(
        {
            "2025-01-10": "- billing: we use Redis as the cache.\n",
            "2025-05-12": "- Switched the billing cache from Redis to Memcached.\n",
            "2025-09-15": "- Switched the billing cache from Memcached to Valkey.\n",
            "2025-11-20": "- Switched the reporting CDN from Fastly to Akamai.\n",
        },
    )
    assert ranked(memory, question)[0] == "2025-05-12", question


def _rows(said: list[tuple[str, str]]) -> dict[int, ChunkRow]:
    """One dated note a (day, text), as chunk rows numbered from 1."""
    return {
        cid: ChunkRow(
            cid, f"memory/{day}.md", "memory", 1, 1, "", text, _digest(text), 0, _stamp(day), "note", None, None
        )
        for cid, (day, text) in enumerate(said, 1)
    }


def _digest(text: str) -> str:
    """A chunk's hash is its text's: statements are kept by it, across tests too."""
    return hashlib.sha256(text.encode()).hexdigest()


def _stamp(day: str) -> float:
    return dt.datetime.fromisoformat(day).timestamp()


def test_of_two_changes_said_the_same_day_the_better_match_takes_the_place() -> None:
    """Two changes on one day restate the first statement: the one the search ranked higher is the newest."""
    rows = _rows(
        [
            ("2025-01-10", "- billing uses Redis as the cache."),
            ("2025-05-12", "- Switched the billing cache from Redis to Memcached."),
            ("2025-05-12", "- The billing cache switched from Redis to Valkey."),
        ]
    )
    for better in (2, 3):
        scores = {1: 1.0, better: 0.95, 5 - better: 0.9}
        notes = rerank(scores, rows, "which cache for billing?", lambda words: dict.fromkeys(words, 1), 100, past=False)
        assert max(scores, key=scores.__getitem__) == better, (better, scores, notes)


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ("the switch", set()),  # names nothing: the statement before is the thing's own history
        ("the switch to Valkey", {"Valkey"}),
        ("chuyển sang Valkey", {"Valkey"}),
        ("换成Valkey", {"Valkey"}),
        ("ใช้ Valkey", {"Valkey"}),
        ("we moved billing to Valkey", {"billing", "Valkey"}),
        ("no longer Valkey", {"Valkey"}),
        ("在用Valkey", {"Valkey"}),
        ("用户Valkey", {"用户", "Valkey"}),  # 用户 (user) is a word made with 用, not a use
    ],
)
def test_an_event_is_told_by_what_it_names(event: str, words: set[str]) -> None:
    assert event_words(event) == {token for word in words for token in content_tokens(word)}


@pytest.mark.parametrize(
    ("question", "content"),
    [
        ("Which cache does billing use now?", ["cach", "bill", "us"]),
        ("Cache của billing là gì?", ["cach", "bill"]),  # "cách" folds to what "cache" stems to; only it goes
        ("billing现在用的是什么缓存？", ["bill", "缓", "存"]),
        ("ตอนนี้ billing ใช้แคชอะไร", ["bill", "ใช้", "แคช"]),  # ตอนนี้ ("now") is two of the analyzer's words
        ("Which cache does LedgerCore use?", ["cach", "ledger", "core", "us"]),
        ("What is the AI provider?", ["ai", "provid"]),  # Vietnamese "ai" ("who") is written with no mark
        # "trước khi" (before) goes whole, though "khi" alone, written with no mark, is not taken out
        (
            "Trước khi chuyển sang Memcached, payments dùng cache nào?",
            ["chuyen", "sang", "memcach", "payment", "dung", "cach"],
        ),
    ],
)
def test_a_questions_own_words_carry_no_weight(question: str, content: list[str]) -> None:
    assert [t for t in content_tokens(question) if t != "的是"] == content


@pytest.mark.parametrize(
    "text",
    [
        *("SWITCHED to Valkey", "Moving to Valkey", "MIGRATED it", "Replaced Redis", "Changed the cache"),
        *("Swapped it", "Cutover done", "cut over done", "Rolled out Valkey", "rollout of Valkey", "Upgraded it"),
        *("Downgraded it", "No longer Redis", "Valkey instead", "billing now uses Valkey", "As of today, Valkey"),
        *("From today Valkey", "From now on Valkey", "From this week on Valkey", "Starting today, Valkey"),
        *("Going forward Valkey", "Redis is retired", "Redis is deprecated", "billing uses Valkey now."),
        *("Chuyển sang Valkey", "ĐỔI sang Valkey", "Thay Redis", "Từ nay dùng Valkey", "TỪ HÔM NAY dùng Valkey"),
        *("Kể từ tuần này", "Không còn Redis", "Không dùng Redis làm cache nữa", "Bây giờ là Valkey"),
        *("Giờ đây là Valkey", "Giờ dùng Valkey", "Hiện tại dùng Valkey", "Hiện nay là Valkey"),
        *("换成Valkey", "換成Valkey", "改用Valkey", "改成Valkey", "改为Valkey", "改為Valkey", "迁移到Valkey"),
        *("遷移到Valkey", "迁到Valkey", "遷到Valkey", "切换到Valkey", "切換到Valkey", "切到Valkey", "替换Redis"),
        *("替換Redis", "不再用Redis", "从今天起用Valkey", "從今天起用Valkey", "今天起用Valkey", "Valkey上线了"),
        *("Valkey上線了", "现在用Valkey", "現在使用Valkey", "目前采用Valkey", "目前採用Valkey", "现在是Valkey了"),
        *("本周起用Valkey", "本週開始用Valkey", "这周开始用Valkey", "這週起用Valkey", "本月起用Valkey"),
        *("今日起用Valkey", "เปลี่ยนเป็น Valkey", "ย้ายไป Valkey", "สลับไป Valkey", "ใช้ Valkey แทน", "เลิกใช้ Redis"),
        *("ตั้งแต่วันนี้ใช้ Valkey", "ตอนนี้ใช้ Valkey", "ปัจจุบันใช้ Valkey", "ตอนนี้เป็น Valkey แล้ว"),
        *("เริ่มวันนี้ใช้ Valkey", "เริ่มสัปดาห์นี้ใช้ Valkey", "เริ่มเดือนนี้ใช้ Valkey"),
    ],
)
def test_each_way_of_saying_a_change_has_a_hint(text: str) -> None:
    """says_change looks for CHANGE only where one of its hints is: every way CHANGE has, in any case."""
    assert CHANGE.search(text), text
    assert says_change(text), text


@pytest.mark.parametrize(
    ("text", "change"),
    [
        ("- From this week on, billing uses Valkey.", True),
        ("- billing giờ dùng Valkey làm cache.", True),
        ("- billing không dùng Redis làm cache nữa.", True),
        ("- billing现在用Valkey做缓存。", True),
        ("- ตอนนี้ billing ใช้ Valkey เป็นแคช", True),
        ("- The numbers from this dashboard look fine.", False),  # "from this ... on" says a change, not this
        ("- Họp lúc 3 giờ chiều với team billing.", False),  # "giờ" alone is the hour
        ("- 会议下午三点开始。", False),  # "开始" alone is a start
        ("- เริ่มประชุมตอนบ่ายสาม", False),
        ("- Let's meet a week from now.", False),
        ("- billing keeps its sessions in Valkey now.", True),  # a change said by "now" alone, in each language
        ("- Bây giờ billing lưu session trong Valkey.", True),
        ("- 现在billing的会话数据放在Valkey里了。", True),
        ("- ตอนนี้ billing เก็บ session ไว้ใน Valkey แล้ว", True),
        ("- notifications is deployed with Octopus Deploy now per the architecture review.", True),
        ("- payments stores its records in PostgreSQL now to cut costs.", True),  # "now" before a purpose
        ("- I need the report now for the meeting.", False),  # "now for" is not taken: a time, not a change
        ("- That is all for now.", False),
        ("- shipping: migrateแคชจากMemcachedไปDragonflyเสร็จแล้ว", True),  # a Latin word touching Thai letters
        ("- billing切换到Valkey了", True),
    ],
)
def test_a_change_is_said_by_its_words_not_by_a_time(text: str, change: bool) -> None:
    assert bool(CHANGE.search(text)) is change
    assert says_change(text) is change  # its hints miss none of these


# other services' statements of their search engines and caches: what the notes say Meilisearch and Redis are
KINDS = {
    "2025-02-03": "- Picked Meilisearch as the search engine of auth.\n",
    "2025-02-17": "- catalog: we use Meilisearch as the search engine.\n",
    "2025-03-05": "- shipping uses Meilisearch for its search engine.\n",
    "2025-03-19": "- auth: we use Redis as the cache.\n",
    "2025-04-02": "- catalog uses Redis for its cache.\n",
    "2025-04-16": "- Picked Redis as the cache of shipping.\n",
    "2025-04-23": "- reporting uses Elasticsearch for its search engine.\n",
    "2025-04-30": "- Picked Elasticsearch as the search engine of payments.\n",
    "2025-05-07": "- inventory: we use Elasticsearch as the search engine.\n",
}


def test_a_change_that_does_not_name_the_thing_is_known_by_its_value(notes: Year) -> None:
    """ "indexes its documents in Meilisearch" says no "search engine", but the notes that name Meilisearch do: the
    change replaces billing's first statement of its search engine."""
    memory = notes(
        {
            **KINDS,
            "2025-01-10": f"- billing: we use Elasticsearch as the search engine.\n{FILLER}",
            "2025-06-02": f"{FILLER}- As of today, billing indexes its documents in Meilisearch.\n",
        },
    )
    now = ("Which search engine does billing use?", "What is the search engine of billing now?")
    assert_above(memory, "2025-06-02", "2025-01-10", *now)
    assert_above(memory, "2025-01-10", "2025-06-02", "What did billing use as its search engine before?")


def test_a_value_of_another_kind_replaces_nothing(notes: Year) -> None:
    """Redis is what the notes call a cache: billing's move of its sessions to it says nothing of its search
    engine."""
    memory = notes(
        {
            **KINDS,
            "2025-01-10": f"- billing: we use Elasticsearch as the search engine.\n{FILLER}",
            "2025-06-02": f"{FILLER}- As of today, billing keeps its sessions in Redis.\n",
        },
    )
    order = ranked(memory, "Which search engine does billing use?")
    assert order[0] == "2025-01-10", order


def _indexed(texts: dict[str, str]) -> tuple[dict[int, ChunkRow], Callable[[list[str]], dict[str, int]], NameKinds]:
    """Dated notes as chunk rows, how many hold each word, and name kinds read from them."""
    rows = _rows(list(texts.items()))
    every = {cid: _statements(row.text, False)[0].tokens for cid, row in rows.items()}

    def frequencies(words: list[str]) -> dict[str, int]:
        return {word: sum(word in held for held in every.values()) for word in words}

    def naming(name: str, limit: int) -> list[ChunkRow]:
        return [row for row in rows.values() if name.casefold() in row.text.casefold()][:limit]

    return rows, frequencies, NameKinds(naming)


def _reranked(texts: dict[str, str], question: str, scores: dict[int, float]) -> dict[int, float]:
    """`scores` of the first notes after currency, with name kinds read from all of `texts`."""
    rows, frequencies, kinds = _indexed(texts)
    rerank(scores, rows, question, frequencies, len(rows), past=False, profiles=kinds)
    return scores


TYPESENSE_IS = {  # what the notes say Typesense is
    "2025-02-04": "- Typesense is the search engine of shipping.",
    "2025-02-05": "- catalog: we use Typesense as the search engine.",
    "2025-02-06": "- auth uses Typesense as its search engine.",
}
OTHER_NOTES = {f"2025-03-{day:02d}": f"- Lunch order number {day} was pizza." for day in range(1, 29)}


def test_a_name_seen_with_one_service_does_not_make_a_statement_about_it() -> None:
    """Alice works on billing, and every other note that names her says "billing": checkout's change that names her
    is still checkout's, and replaces nothing billing said (only a word two names stand for is a kind of thing)."""
    texts = {
        "2025-01-10": "- billing: we use Elasticsearch as the search engine.",
        "2025-06-02": "- As of today, checkout uses Typesense as the search engine, set up with Alice.",
        "2025-02-01": "- Alice owns billing.",
        "2025-02-02": "- Alice reviewed the billing invoices.",
        "2025-02-03": "- billing on-call this week is Alice.",
        **TYPESENSE_IS,
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "What is the search engine of billing?", {1: 1.0, 2: 0.6})
    assert scores[1] > scores[2], scores


def test_a_clause_names_a_value_of_the_kind_asked_about() -> None:
    """The same notes, but the change is billing's, worded as a clause: Typesense and Elasticsearch are both what
    the notes call a search engine, and billing's change takes the first statement's place."""
    texts = {
        "2025-01-10": "- billing: we use Elasticsearch as the search engine.",
        "2025-06-02": "- As of today, billing indexes its documents in Typesense.",
        **TYPESENSE_IS,
        "2025-02-07": "- reporting uses Elasticsearch for its search engine.",
        "2025-02-08": "- Picked Elasticsearch as the search engine of payments.",
        "2025-02-09": "- inventory: we use Elasticsearch as the search engine.",
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "What is the search engine of billing?", {1: 1.0, 2: 0.6})
    assert scores[2] > scores[1], scores


def test_a_name_is_the_kind_of_thing_it_replaced() -> None:
    """No note calls Dragonfly a cache, but it replaced Memcached and Redis, which the notes call caches: billing's
    move of its sessions to Dragonfly takes the place of its first statement of its cache."""
    texts = {
        "2025-01-10": "- billing: we use Redis as the cache.",
        "2025-06-02": "- As of today, billing keeps its sessions in Dragonfly.",
        **PARTNERED,
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "What is the cache of billing?", {1: 1.0, 2: 0.6})
    assert scores[2] > scores[1], scores


def test_a_name_is_not_the_kind_of_one_thing_it_replaced() -> None:
    """Papertrail replaced Elasticsearch, which the notes mostly call a search engine, but only for logs: one name
    it replaced does not make it a search engine, and analytics' move of its logs to it replaces nothing analytics
    said of its search engine."""
    texts = {
        "2025-01-10": "- analytics: we use Solr as the search engine.",
        "2025-06-02": "- As of today, analytics ships its logs to Papertrail.",
        "2025-02-11": "- Switched the shipping logs from Elasticsearch to Papertrail.",
        "2025-02-12": "- Papertrail holds the logs of auth.",
        "2025-02-13": "- catalog: Papertrail keeps the logs.",
        "2025-02-14": "- Picked Elasticsearch as the search engine of payments.",
        "2025-02-15": "- inventory: we use Elasticsearch as the search engine.",
        "2025-02-16": "- reporting uses Elasticsearch for its search engine.",
        "2025-02-17": "- catalog uses Solr for its search engine.",
        "2025-02-18": "- Picked Solr as the search engine of auth.",
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "What is the search engine of analytics?", {1: 1.0, 2: 0.6})
    assert scores[1] > scores[2], scores


def test_a_name_the_question_holds_is_no_kind_a_partner_gives() -> None:
    """Asked what replaced Redis, Dragonfly (which did) is a cache, as Memcached and Redis are, but not "Redis":
    a name the question holds stands for itself."""
    rows, frequencies, kinds = _indexed(
        {"2025-01-10": "- billing: we use Redis as the cache.", **PARTNERED, **OTHER_NOTES}
    )
    dragonfly = ("Dragonfly",)
    assert kinds.kinds([dragonfly], {"cach": 1.0}, frequencies, len(rows)) == {dragonfly: {"cach"}}
    assert "redi" not in kinds.kinds([dragonfly], {"redi": 1.0, "cach": 1.0}, frequencies, len(rows)).get(dragonfly, ())


def test_a_name_written_in_two_cases_is_read_as_the_index_holds_it() -> None:
    """ "ClickHouse" is "click hous" to the index ("clickhous" is in no note): its notes are found, and billing's
    move of its records to it replaces billing's first statement of its database."""
    texts = {
        "2025-01-10": "- billing: we use Oracle as the database.",
        "2025-06-02": "- As of today, billing keeps its records in ClickHouse.",
        "2025-02-03": "- Picked ClickHouse as the database of auth.",
        "2025-02-04": "- catalog: we use ClickHouse as the database.",
        "2025-02-05": "- shipping uses ClickHouse for its database.",
        "2025-02-06": "- reporting uses Oracle for its database.",
        "2025-02-07": "- Picked Oracle as the database of payments.",
        "2025-02-08": "- inventory: we use Oracle as the database.",
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "What is the database of billing?", {1: 1.0, 2: 0.6})
    assert scores[2] > scores[1], scores


def test_a_name_is_a_name_though_the_analyzer_makes_a_function_word_of_part_of_it() -> None:
    """ "MySQL" is "my sql" to the analyzer; "my" says nothing of it, and it is a name (it was none)."""
    _, frequencies, _ = _indexed({"2025-02-01": "- auth: we use MySQL as the database.", **OTHER_NOTES})
    assert names_of(["MySQL", "my"], {"databas": 1.0}, frequencies) == {"mysql": 1}


# what the notes say Redis and Memcached are, and the moves from them to Dragonfly, never called a cache
PARTNERED = {
    "2025-02-01": "- payments uses Redis for its cache.",
    "2025-02-02": "- Picked Redis as the cache of auth.",
    "2025-02-03": "- ledger uses Memcached as its cache.",
    "2025-02-04": "- Picked Memcached as the cache of search.",
    "2025-02-05": "- reporting: we use Memcached for the cache.",
    "2025-02-06": "- Switched the shipping sessions from Memcached to Dragonfly.",
    "2025-02-07": "- catalog moved its sessions from Redis to Dragonfly.",
    "2025-02-08": "- inventory: migrated the sessions off Memcached onto Dragonfly.",
}


def test_a_name_written_in_words_is_named_by_all_of_them() -> None:
    """Google Cloud (a cloud) is not named by Google Cloud Storage (a file store), nor S3 by a note of no S3."""
    said = "- Moved checkout from Google Cloud Storage to Amazon S3.\n- auth runs on Google Cloud."
    (row,) = _rows([("2025-03-01", said)]).values()
    assert entries_naming(row, ("google", "cloud")) == ["- auth runs on Google Cloud."]
    assert entries_naming(row, ("google", "cloud", "storage")) == [
        "- Moved checkout from Google Cloud Storage to Amazon S3."
    ]
    assert entries_naming(row, ("amazon", "s3")) == entries_naming(row, ("s3",)) != []
    assert entries_naming(row, ("s",)) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("- Switched the ledger index from OpenSearch to Elasticsearch.", [("OpenSearch",), ("Elasticsearch",)]),
        (
            "ปลดGoogle Cloud Storageออกcatalogเปลี่ยนไปใช้Cloudflare R2",
            [("Google", "Cloud", "Storage"), ("Cloudflare", "R2")],
        ),
        ("User: FYI: Done. Bỏ Redis, billing chuyển cache sang Valkey.", [("Redis",), ("Valkey",)]),
        ("- 10:05 Moved the files to B2 and s3.", [("B2",), ("s3",)]),
    ],
)
def test_a_name_is_written_as_one_and_not_only_at_a_sentences_start(text: str, names: list[tuple[str, ...]]) -> None:
    assert list(_statements(text, False)[0].proper) == names


def test_a_thai_word_is_held_as_a_word_not_as_letters_anywhere() -> None:
    meeting = _statements("- ประชุมออกแบบแอปมือถือกับทีม", transcript=False)[0]
    assert not holds(meeting, "ระบบ") and holds(meeting, "ประชุม")
    chinese = _statements("- 云服务商。", transcript=False)[0]
    assert holds(chinese, "商用") is False and holds(chinese, "服务商")


def test_counts_read_apart_never_make_a_weight_fail() -> None:
    assert bm25_idf(5, 3) < 0  # more chunks hold a word than the count of chunks says: no ValueError


def test_the_current_statement_takes_the_place_of_the_one_it_replaced(notes: Year) -> None:
    """The question matches the old, short statement best; the change sits in a long note of other things. Asked
    what holds now, the change is first, not only above the old statement but above what scored between them."""
    busy = "".join(f"- Reviewed the {s} roadmap with the team and agreed on the next steps.\n" for s in SERVICES)
    memory = notes(
        {
            "2025-01-10": "- billing: we use Redis as the cache.\n",
            "2025-03-02": "- Checked the billing cache dashboards; the billing cache looks healthy.\n",
            "2025-06-02": f"{busy}- Switched the billing cache from Redis to Memcached.\n",
        },
    )
    hits = memory.search("Which cache does billing use?", mode="keyword", explain=True).results
    assert hits[0].path == "memory/2025-06-02.md", [h.path for h in hits]
    assert {h.path for h in hits[1:3]} == {"memory/2025-01-10.md", "memory/2025-03-02.md"}


# billing's search engine among other services' and billing's other tools (more than a search's candidates), and
# a change to Meilisearch in a clause that says neither "search" nor "engine"
ENGINES = ("Meilisearch", "Elasticsearch", "Typesense", "OpenSearch")
UNSEEN_CHANGE = {
    **{
        f"2025-{month:02d}-{day:02d}": f"- {SERVICES[day % 6]}-{month} uses {ENGINES[day % 4]} for its search engine.\n"
        for month in (2, 3)
        for day in range(1, 7)
    },
    **{
        f"2025-{month:02d}-{day:02d}": f"- billing uses tool {month}.{day} for its {TOOLS[day % 6]}.\n"
        for month in (5,)
        for day in range(1, 31)
    },
    "2025-01-10": "- billing: we use Elasticsearch as the search engine.\n",
    "2025-04-20": "- shipping no longer uses Typesense for its search engine; it uses Meilisearch now.\n",
    "2025-06-02": f"{FILLER}- As of today, billing indexes its documents in Meilisearch.\n",
}


def test_a_change_the_search_did_not_find_is_followed_up(notes: Year) -> None:
    """The search's candidates are the notes that say "search engine" (shipping's change of it among them: things of
    this kind change) or billing's other tools; billing's change holds neither word. It is found by billing and a name
    the candidates call a search engine, and it comes first."""
    memory = notes(UNSEEN_CHANGE)
    question = "Which search engine does billing use?"
    hits = memory.search(question, mode="keyword", explain=True).results
    assert hits[0].path == "memory/2025-06-02.md", [h.path for h in hits]
    assert "found by the subject and a name of the kind asked about" in str((hits[0].explain or {}).get("notes"))
    outside = memory.search(question, mode="keyword", before="2025-06-01").results
    assert "memory/2025-06-02.md" not in [h.path for h in outside]  # the follow-up keeps to the search's filters


def test_a_vector_search_follows_nothing_up(notes: Year, memory_factory: Callable[..., AgentMemory]) -> None:
    """The follow-up is a keyword query: a search by vectors alone gets none of its chunks."""
    notes(UNSEEN_CHANGE).close()
    memory = memory_factory(provider="hash")
    memory.sync()
    hits = memory.search("Which search engine does billing use?", mode="vector", explain=True).results
    assert hits and not any("found by the subject" in str((h.explain or {}).get("notes")) for h in hits)


class _Told(NameKinds):
    """What names stand for, as told: the changes' names first, then the other statements'."""

    def __init__(self, *answers: dict[tuple[str, ...], frozenset[str]]) -> None:
        super().__init__(lambda name, limit: [])
        self._answers = list(answers)

    def kinds(self, names, query, frequencies, total):  # type: ignore[no-untyped-def]
        return self._answers.pop(0) if self._answers else {}


def test_what_the_follow_up_found_leaves_with_a_change_that_is_not_about_the_question() -> None:
    """Typesense alone stands for "search": billing's change to it is about the question until only what two names
    stand for is a kind (Solr and Vespa: "engine"). The follow-up has found a statement by then; with no change about
    the question nothing is weighed, and the caller's candidates are as they were."""
    rows = _rows(
        [
            ("2025-01-10", "- billing: we use Solr as the search engine."),
            ("2025-06-02", "- As of today, billing indexes its documents in Typesense."),
            *((f"2025-03-{day:02d}", f"- Lunch order number {day} was pizza.") for day in range(1, 20)),
        ]
    )
    every = {cid: _statements(row.text, False)[0].tokens for cid, row in rows.items()}

    def frequencies(words: list[str]) -> dict[str, int]:
        return {word: max(1, sum(word in held for held in every.values())) for word in words}

    found = ChunkRow(99, "memory/2025-07-01.md", "memory", 1, 1, "", "- billing looked at Vespa.", "v", 0,
                     _stamp("2025-07-01"), "note", None, None)  # fmt: skip
    asked: list[list[str]] = []

    def more(words: list[str], names: list[tuple[str, ...]], limit: int) -> dict[int, ChunkRow]:
        asked.append(words)
        return {99: found}

    told = _Told(
        {("Typesense",): frozenset({"search"})}, {("Solr",): frozenset({"engin"}), ("Vespa",): frozenset({"engin"})}
    )
    scores = {1: 1.0, 2: 0.5}
    given = dict(rows)
    notes = rerank(scores, rows, "Which search engine does billing use?", frequencies, len(rows), past=False,
                   profiles=told, more=more)  # fmt: skip
    assert asked, "the follow-up was asked"
    assert notes == {} and scores == {1: 1.0, 2: 0.5} and rows == given


HOSTS = {  # what the notes say Hetzner and DigitalOcean are; nothing says what Azure is
    "2025-02-01": "- payments: Hetzner is the hosting.",
    "2025-02-02": "- Picked Hetzner as the hosting of search.",
    "2025-02-03": "- ledger uses Hetzner for its hosting.",
    "2025-02-04": "- reporting uses DigitalOcean for its hosting.",
    "2025-02-05": "- Picked DigitalOcean as the hosting of shipping.",
    "2025-02-06": "- inventory: DigitalOcean is the hosting.",
}


def test_a_statement_that_holds_the_question_through_its_names_scores_as_one_that_holds_it_in_words() -> None:
    """Asked which hosting auth is on, catalog's move of its hosting scores best (it says "hosting"), and auth's first
    statement above auth's change ("auth runs on Hetzner now" says neither word but "auth"). Hetzner is what the notes
    call a hosting: the change holds the whole question, and scores as the best candidate that holds no more of it."""
    texts = {
        "2025-01-10": "- catalog: migrated the hosting off Azure onto DigitalOcean.",
        "2025-01-12": "- Picked Azure for auth.",
        "2025-06-02": "- auth runs on Hetzner now.",
        **HOSTS,
        **{f"2025-04-{day:02d}": f"- Standup: auth is on track, sprint {day}." for day in range(1, 13)},
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "Which hosting is auth on?", {1: 1.0, 2: 0.7, 3: 0.5})
    assert scores[3] > scores[2], scores


MONITORS = {  # the notes call New Relic and Prometheus a "monitoring", never a "monitoring tool"
    "2025-02-01": "- payments: New Relic is the monitoring.",
    "2025-02-02": "- Picked New Relic as the monitoring of search.",
    "2025-02-03": "- ledger uses Prometheus for its monitoring.",
    "2025-02-04": "- reporting uses Prometheus for its monitoring.",
    "2025-02-05": "- Helm is the deployment tool of shipping.",
    "2025-02-06": "- inventory: the deployment tool is Helm.",
    **{f"2025-04-{day:02d}": f"- Standup: catalog is on track, sprint {day}." for day in range(1, 7)},
}


def test_a_change_that_names_the_value_replaced_restates_it_whatever_words_it_lacks() -> None:
    """catalog's change of its monitoring lacks "tool", a word of the question as heavy as "monitoring"; it names
    Datadog, the value catalog's first statement named: it is about what that one said, and ranks above it."""
    texts = {
        "2025-01-10": "- catalog uses Datadog for its monitoring tool.",
        "2025-06-02": "- Switched the catalog monitoring from Datadog to Prometheus.",
        **MONITORS,
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "What is the monitoring tool of catalog?", {1: 1.0, 2: 0.6})
    assert scores[2] > scores[1], scores
    other = {**texts, "2025-06-02": "- Switched the reporting monitoring from Datadog to Prometheus."}
    scores = _reranked(other, "What is the monitoring tool of catalog?", {1: 1.0, 2: 0.6})
    assert scores[1] > scores[2], scores  # another service's move from the same value replaces nothing of catalog's


def test_a_change_of_the_subject_to_a_thing_of_the_kind_restates_what_it_said_of_that_kind() -> None:
    """ "auth runs on DigitalOcean now" lacks "provider", as heavy a word of the question as "hosting", and names no
    value auth's first statement named; but both name a hosting (what the notes call Hetzner and DigitalOcean) and
    the change holds auth: it is the newer statement. Another service's move to DigitalOcean is not."""
    texts = {
        "2025-01-10": "- Picked Hetzner as the hosting provider of auth.",
        "2025-06-02": "- auth runs on DigitalOcean now.",
        **HOSTS,
        "2025-02-07": "- Mailgun is the email provider of search.",
        "2025-02-08": "- ledger: the email provider is Mailgun.",
        **OTHER_NOTES,
    }
    question = "Which hosting provider is auth on?"
    scores = _reranked(texts, question, {1: 1.0, 2: 0.6})
    assert scores[2] > scores[1], scores
    other = {**texts, "2025-06-02": "- billing runs on DigitalOcean now."}
    scores = _reranked(other, question, {1: 1.0, 2: 0.6})
    assert scores[1] > scores[2], scores


def test_asked_what_came_before_another_things_history_is_not_the_answer() -> None:
    """Asked what catalog's cache store was before, analytics' move of its cache store (it scores better, and its two
    statements restate each other) is another thing's history: it is not put first, and catalog's statement stays
    above it."""
    texts = {
        "2025-01-10": "- catalog uses Valkey for its cache store.",
        "2025-06-02": "- catalog keeps its sessions in Redis now.",
        "2025-04-01": "- analytics uses Memcached as its cache store.",
        "2025-07-01": "- Replaced Memcached with Dragonfly as the cache store for analytics.",
        "2025-02-01": "- Valkey is the cache store of shipping.",
        "2025-02-02": "- ledger: the cache store is Valkey.",
        "2025-02-03": "- Dragonfly is the cache store of search.",
        "2025-02-04": "- auth: the cache store is Dragonfly.",
        "2025-02-05": "- Memcached is the cache store of mail.",
        **{f"2025-05-{day:02d}": f"- Standup: catalog is on track for sprint {day}." for day in range(1, 9)},
        **OTHER_NOTES,
    }
    rows, frequencies, kinds = _indexed(texts)
    scores = {1: 1.0, 2: 0.5, 3: 0.9, 4: 0.8}
    rerank(
        scores, rows, "What was the previous cache store of catalog?", frequencies, len(rows), past=True, profiles=kinds
    )
    assert scores[1] > max(scores[3], scores[4]), scores


def test_asked_what_came_before_a_history_under_the_subjects_heading_is_the_subjects() -> None:
    """Notes kept by service, "## catalog" over bullets that do not say catalog: the heading holds the subject, and
    catalog's two statements of its cache store are one history; asked what came before, the older one is first."""
    texts = {
        "2025-01-10": "- cache store: Valkey.",
        "2025-06-02": "- switched the cache store from Valkey to Redis.",
        "2025-02-01": "- Valkey is the cache store of shipping.",
        "2025-02-02": "- ledger: the cache store is Valkey.",
        "2025-02-03": "- Redis is the cache store of search.",
        "2025-02-04": "- auth: the cache store is Redis.",
        "2025-02-05": "- Redis is the cache store of mail.",
        **{f"2025-05-{day:02d}": f"- Standup: catalog is on track for sprint {day}." for day in range(1, 9)},
        **OTHER_NOTES,
    }
    rows, frequencies, kinds = _indexed(texts)
    for cid in (1, 2):
        rows[cid] = dataclasses.replace(rows[cid], heading="catalog")
    scores = {1: 0.5, 2: 1.0}
    question = "What was the previous cache store of catalog?"
    rerank(scores, rows, question, frequencies, len(rows), past=True, profiles=kinds)
    assert scores[1] > scores[2], scores


def test_another_services_change_replaces_nothing_though_its_name_weighs_little() -> None:
    """Most notes name auth, so "auth" weighs little against "message queue": inventory's later move to RabbitMQ
    still says nothing of auth's queue, and auth's own statement keeps its place."""
    texts = {
        "2025-01-10": "- The message queue of auth moved to RabbitMQ.",
        "2025-06-02": "- The message queue of inventory moved to RabbitMQ.",
        "2025-02-01": "- ledger uses Kafka for its message queue.",
        "2025-02-02": "- Picked Kafka as the message queue of search.",
        "2025-02-03": "- reporting: we use RabbitMQ as the message queue.",
        "2025-02-04": "- billing uses NATS for its message queue.",
        "2025-02-05": "- NATS is the message queue of payments.",
        "2025-02-06": "- checkout: we use Kafka as the message queue.",
        **{f"2025-05-{day:02d}": f"- Standup: auth is on track, sprint {day}." for day in range(1, 31)},
        **OTHER_NOTES,
    }
    scores = _reranked(texts, "What is the message queue of auth?", {1: 1.0, 2: 0.6, 3: 0.5})
    assert scores == {1: 1.0, 2: 0.6, 3: 0.5}


TRACKERS = {  # three names the notes call an error tracker, a crash reporting and an exception monitoring
    "2025-02-02": "- Picked Sentry as the error tracking of search.",
    "2025-02-03": "- reporting sends exceptions to Sentry for exception monitoring.",
    "2025-02-04": "- Sentry is the crash reporting of payments.",
    "2025-02-01": "- ledger: Sentry is the exception monitoring.",
    "2025-02-05": "- inventory uses Rollbar for error tracking.",
    "2025-02-06": "- Rollbar is the error tracking of shipping.",
    "2025-02-07": "- Picked Rollbar as the crash reporting of pricing.",
    "2025-02-08": "- catalog: Rollbar is the exception monitoring.",
    "2025-02-09": "- checkout uses Bugsnag for error tracking.",
    "2025-02-10": "- auth: Bugsnag is the crash reporting.",
    "2025-02-11": "- Picked Bugsnag as the crash reporting of mobile-api.",
    "2025-02-12": "- analytics: Bugsnag is the exception monitoring.",
}


def test_names_stand_together_for_a_word_none_holds_often_alone() -> None:
    """Each tracker's notes say "error tracking" twice of five or six: no name stands for "error" alone (three
    statements at least), but the three together do, far more often than the notes at large. billing's change worded
    as a clause names Rollbar, an error tracker: it takes the place of billing's first statement."""
    texts = {
        "2025-01-10": "- billing: we use Sentry for the crash reporting.",
        "2025-06-02": "- As of today, billing sends its exceptions to Rollbar.",
        "2025-05-20": "- Switched the search error tracking from Sentry to Bugsnag.",
        **TRACKERS,
        **{f"2025-04-{day:02d}": f"- Standup: billing is on track, sprint {day}." for day in range(1, 13)},
        **OTHER_NOTES,
        **{f"2024-{month:02d}-{day:02d}": f"- Lunch, table {day}." for month in range(1, 4) for day in range(1, 29)},
    }
    scores = _reranked(texts, "What is the error tracking of billing?", {1: 1.0, 2: 0.6, 3: 0.5})
    assert scores[2] > scores[1], scores
