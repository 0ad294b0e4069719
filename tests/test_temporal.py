"""What a query says about time (memoryd.search.temporal): ranges in each language, earlier and present states,
events, the words that only look like time, and calendar edges. `now` is always given, never the clock."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta, timezone

import pytest

from memoryd.search import temporal_words as words
from memoryd.search.temporal import NO_TIME, TimeQuery, parse_time

NOW = datetime(2025, 3, 19, 15, 0, tzinfo=timezone.utc)  # a Wednesday; this week began on Monday March 17


def days(query: str, now: datetime = NOW) -> tuple[str | None, str | None]:
    """The range as ISO days: the first, and the day after the last."""
    found = parse_time(query, now)
    return _iso_day(found.start), _iso_day(found.end)


def _iso_day(moment: float | None) -> str | None:
    return None if moment is None else datetime.fromtimestamp(moment, timezone.utc).date().isoformat()


RANGES = [
    # English
    ("what did we decide today?", "2025-03-19", "2025-03-20"),
    ("notes from yesterday", "2025-03-18", "2025-03-19"),
    ("the day before yesterday", "2025-03-17", "2025-03-18"),
    ("what changed this week", "2025-03-17", "2025-03-24"),
    ("what did we decide last week?", "2025-03-10", "2025-03-17"),
    ("this month's incidents", "2025-03-01", "2025-04-01"),
    ("last month", "2025-02-01", "2025-03-01"),
    ("this year", "2025-01-01", "2026-01-01"),
    ("last year", "2024-01-01", "2025-01-01"),
    ("3 days ago", "2025-03-16", "2025-03-17"),
    ("two weeks ago", "2025-03-03", "2025-03-10"),
    ("3 months ago", "2024-12-01", "2025-01-01"),
    ("a year ago", "2024-01-01", "2025-01-01"),
    ("a few days ago", "2025-03-14", "2025-03-18"),
    ("a couple of weeks ago", "2025-02-24", "2025-03-17"),
    ("what happened in March", "2025-03-01", "2025-04-01"),
    ("in March 2024", "2024-03-01", "2024-04-01"),
    ("in April", "2024-04-01", "2024-05-01"),
    ("what shipped in May", "2024-05-01", "2024-06-01"),
    ("the 2025-03-05 outage", "2025-03-05", "2025-03-06"),
    ("notes/2025/03/05", "2025-03-05", "2025-03-06"),
    ("the 2025-02 release", "2025-02-01", "2025-03-01"),
    ("5 March 2025", "2025-03-05", "2025-03-06"),
    ("March 5, 2025", "2025-03-05", "2025-03-06"),
    ("on March 5th", "2025-03-05", "2025-03-06"),
    ("the 5th of March", "2025-03-05", "2025-03-06"),
    ("Dec 24 2024", "2024-12-24", "2024-12-25"),
    ("since last week", "2025-03-10", None),
    ("since March", "2025-03-01", None),
    ("what changed since 2024-03-05?", "2024-03-05", None),
    ("before March", None, "2025-03-01"),
    ("before last week", None, "2025-03-10"),
    ("after March 5", "2025-03-06", None),
    ("until March 5", None, "2025-03-06"),
    ("between March and June", "2025-03-01", "2025-07-01"),
    ("from 2025-01-01 to 2025-02-01", "2025-01-01", "2025-02-02"),
    ("from March until June", "2025-03-01", "2025-07-01"),
    ("the last week of March", "2025-03-01", "2025-04-01"),
    ("notes from last week", "2025-03-10", "2025-03-17"),
    ("recently", "2025-03-05", "2025-03-20"),
    ("what have we been doing lately", "2025-03-05", "2025-03-20"),
    ("the past 3 days", "2025-03-16", "2025-03-20"),
    ("in the past two weeks", "2025-03-05", "2025-03-20"),
    ("over the past week", "2025-03-12", "2025-03-20"),
    ("the past month", "2025-02-19", "2025-03-20"),
    ("earlier this week", "2025-03-17", "2025-03-24"),
    ("March last year", "2024-03-01", "2024-04-01"),
    ("in March of last year", "2024-03-01", "2024-04-01"),
    ("what did we ship in 2024?", "2024-01-01", "2025-01-01"),
    ("before March this year", None, "2025-03-01"),  # before the March of this year
    # Vietnamese, with and without its marks
    ("hôm nay làm gì", "2025-03-19", "2025-03-20"),
    ("hôm qua", "2025-03-18", "2025-03-19"),
    ("hôm kia", "2025-03-17", "2025-03-18"),
    ("tuần này", "2025-03-17", "2025-03-24"),
    ("tuần trước chúng ta quyết định gì", "2025-03-10", "2025-03-17"),
    ("tuan truoc", "2025-03-10", "2025-03-17"),
    ("tháng này", "2025-03-01", "2025-04-01"),
    ("tháng trước", "2025-02-01", "2025-03-01"),
    ("năm nay", "2025-01-01", "2026-01-01"),
    ("năm ngoái", "2024-01-01", "2025-01-01"),
    ("3 ngày trước", "2025-03-16", "2025-03-17"),
    ("hai tuần trước", "2025-03-03", "2025-03-10"),
    ("cách đây 3 tháng", "2024-12-01", "2025-01-01"),
    ("năm năm trước", "2020-01-01", "2021-01-01"),
    ("vài ngày trước", "2025-03-14", "2025-03-18"),
    ("trong tháng 3", "2025-03-01", "2025-04-01"),
    ("tháng 3 năm 2024", "2024-03-01", "2024-04-01"),
    ("tháng 3/2024", "2024-03-01", "2024-04-01"),
    ("ngày 5 tháng 3 năm 2025", "2025-03-05", "2025-03-06"),
    ("tháng ba", "2025-03-01", "2025-04-01"),
    ("tháng 3 năm ngoái", "2024-03-01", "2024-04-01"),
    ("năm 2024", "2024-01-01", "2025-01-01"),
    ("từ tháng 1", "2025-01-01", None),
    ("trước tháng 3", None, "2025-03-01"),
    ("gần đây có lỗi gì", "2025-03-05", "2025-03-20"),
    ("dạo này", "2025-03-05", "2025-03-20"),
    ("3 ngày qua", "2025-03-16", "2025-03-20"),
    ("dùng cache gì từ tháng 3 đến tháng 5", "2025-03-01", "2025-06-01"),
    # Chinese, simplified and traditional
    ("今天", "2025-03-19", "2025-03-20"),
    ("昨天的会议", "2025-03-18", "2025-03-19"),
    ("前天", "2025-03-17", "2025-03-18"),
    ("本周", "2025-03-17", "2025-03-24"),
    ("這週", "2025-03-17", "2025-03-24"),
    ("上周的决定", "2025-03-10", "2025-03-17"),
    ("上週", "2025-03-10", "2025-03-17"),
    ("上个星期", "2025-03-10", "2025-03-17"),
    ("上個星期", "2025-03-10", "2025-03-17"),
    ("上個禮拜的會議", "2025-03-10", "2025-03-17"),
    ("这个月", "2025-03-01", "2025-04-01"),
    ("上个月", "2025-02-01", "2025-03-01"),
    ("上個月", "2025-02-01", "2025-03-01"),
    ("上一个月的笔记", "2025-02-01", "2025-03-01"),  # not "the previous one" (上一个)
    ("上一周", "2025-03-10", "2025-03-17"),
    ("今年", "2025-01-01", "2026-01-01"),
    ("去年", "2024-01-01", "2025-01-01"),
    ("3天前", "2025-03-16", "2025-03-17"),
    ("三天前", "2025-03-16", "2025-03-17"),
    ("两周前", "2025-03-03", "2025-03-10"),
    ("兩週前", "2025-03-03", "2025-03-10"),
    ("三个月前", "2024-12-01", "2025-01-01"),
    ("三個月前", "2024-12-01", "2025-01-01"),
    ("几天前", "2025-03-14", "2025-03-18"),
    ("3月", "2025-03-01", "2025-04-01"),
    ("三月份的计划", "2025-03-01", "2025-04-01"),
    ("十二月", "2024-12-01", "2025-01-01"),
    ("2024年3月", "2024-03-01", "2024-04-01"),
    ("3月5日", "2025-03-05", "2025-03-06"),
    ("3月5号", "2025-03-05", "2025-03-06"),
    ("2024年", "2024-01-01", "2025-01-01"),
    ("去年3月", "2024-03-01", "2024-04-01"),
    ("最近有什么变化", "2025-03-05", "2025-03-20"),
    ("过去三天", "2025-03-16", "2025-03-20"),
    ("3月之前", None, "2025-03-01"),
    ("上周以来", "2025-03-10", None),
    ("从1月到3月", "2025-01-01", "2025-04-01"),
    ("从上周开始", "2025-03-10", None),
    # Thai, Buddhist Era years included
    ("วันนี้", "2025-03-19", "2025-03-20"),
    ("เมื่อวาน", "2025-03-18", "2025-03-19"),
    ("เมื่อวานซืน", "2025-03-17", "2025-03-18"),
    ("สัปดาห์นี้", "2025-03-17", "2025-03-24"),
    ("สัปดาห์ที่แล้ว", "2025-03-10", "2025-03-17"),
    ("อาทิตย์ที่แล้ว", "2025-03-10", "2025-03-17"),
    ("เดือนนี้", "2025-03-01", "2025-04-01"),
    ("เดือนที่แล้ว", "2025-02-01", "2025-03-01"),
    ("ปีนี้", "2025-01-01", "2026-01-01"),
    ("ปีที่แล้ว", "2024-01-01", "2025-01-01"),
    ("3 วันที่แล้ว", "2025-03-16", "2025-03-17"),
    ("สามวันก่อน", "2025-03-16", "2025-03-17"),
    ("2 สัปดาห์ที่แล้ว", "2025-03-03", "2025-03-10"),
    ("เดือนมีนาคม", "2025-03-01", "2025-04-01"),
    ("มีนาคม 2568", "2025-03-01", "2025-04-01"),
    ("5 มีนาคม 2568", "2025-03-05", "2025-03-06"),
    ("มี.ค. 2567", "2024-03-01", "2024-04-01"),
    ("ปี 2567", "2024-01-01", "2025-01-01"),
    ("เมื่อเร็วๆ นี้", "2025-03-05", "2025-03-20"),
    ("ตั้งแต่เดือนมีนาคม", "2025-03-01", None),
    ("ก่อนเดือนมีนาคม", None, "2025-03-01"),
    # German, French, Spanish
    ("heute", "2025-03-19", "2025-03-20"),
    ("gestern", "2025-03-18", "2025-03-19"),
    ("letzte Woche", "2025-03-10", "2025-03-17"),
    ("vor 3 Tagen", "2025-03-16", "2025-03-17"),
    ("im März", "2025-03-01", "2025-04-01"),
    ("seit März", "2025-03-01", None),
    ("aujourd'hui", "2025-03-19", "2025-03-20"),
    ("la semaine dernière", "2025-03-10", "2025-03-17"),
    ("il y a 3 jours", "2025-03-16", "2025-03-17"),
    ("en mars", "2025-03-01", "2025-04-01"),
    ("hoy", "2025-03-19", "2025-03-20"),
    ("la semana pasada", "2025-03-10", "2025-03-17"),
    ("hace 3 días", "2025-03-16", "2025-03-17"),
    ("en marzo", "2025-03-01", "2025-04-01"),
    ("el 5 de marzo de 2025", "2025-03-05", "2025-03-06"),
]


@pytest.mark.parametrize(("query", "start", "end"), RANGES)
def test_ranges(query: str, start: str | None, end: str | None) -> None:
    assert days(query) == (start, end)


NOT_TIME = [
    "May said the build was red",  # a name
    "we may need a second cache",  # the verb, "second"
    "march the users through onboarding",  # the verb
    "I know nowhere else to look",  # "now" inside words
    "the snow is white",
    "the Chicago office",  # "ago" inside a word
    "the agony of flaky tests",
    "5 may fail under load",
    "what is the second option?",
    "port 2024 is taken",  # a number, not a year
    "the 2024 roadmap",
    "in Mar",  # an abbreviation alone
    "05/03 meeting notes",  # day/month or month/day: not read
    "when did we move to Postgres?",  # asks for a date
    "how long ago did we migrate?",
    "what is planned for next week?",  # the future
    "in 3 days we deploy",
    "3 weeks of work",
    "có năm lựa chọn",  # "năm": five, not year
    "tháng sau",  # next month, not "tháng sáu" (June) typed without its marks
    "năm người trong nhóm",
    "前端的上线计划",  # 前端: frontend; 上线: launch
    "早上周会讨论了什么",  # 早上 (morning) 周会 (weekly meeting), not 上周
    "基本周期是多少",  # 基本 (basic) 周期 (period), not 本周
    "马上月底发布",  # 马上 (at once) 月底 (month end), not 上月
    "版本月报",  # 版本 (version), not 本月
    "ทุกวันนี้ใช้อะไร",  # nowadays, not today
    "วันอาทิตย์นี้ประชุม",  # this Sunday, not this week
    "สามารถใช้ได้ไหม",  # สามารถ (can) holds สาม (three)
]


@pytest.mark.parametrize("query", NOT_TIME)
def test_words_that_only_look_like_time_set_no_range(query: str) -> None:
    found = parse_time(query, NOW)
    assert not found.has_range, found
    assert (found.past, found.anchor) == (False, None)


CUES = [  # query, past, current
    ("what did billing use before?", True, False),
    ("which cache did we use previously", True, False),
    ("what was the old database", True, False),
    ("we used to run MySQL", True, False),
    ("what was the original plan?", True, False),
    ("what is the cache now?", False, True),
    ("what do we currently use for billing", False, True),
    ("do we still use Redis?", False, True),
    ("what's the latest schema", False, True),
    ("what is used to store sessions?", False, False),  # passive "used to"
    ("as I said before, the port is 5432", False, False),  # about the conversation
    ("as previously discussed, what is the TTL", False, False),
    ("before deploying, run the tests", False, False),  # an instruction
    ("run the tests before deploying", False, False),
    ("what does now() return in Postgres", False, False),  # the SQL function
    ("from now on use Postgres", False, False),
    ("trước đây billing dùng cache gì?", True, False),
    ("truoc day billing dung cache gi", True, False),
    ("database cũ tên là gì", True, False),
    ("billing cũng dùng Redis", False, False),  # cũng: also
    ("hiện tại billing dùng cache gì", False, True),
    ("bây giờ dùng gì", False, True),
    ("billing đang dùng cache gì", False, True),
    ("billing 以前用什么缓存?", True, False),
    ("billing以前用什麼快取?", True, False),
    ("原来的数据库是什么", True, False),
    ("ledger上一个搜索引擎是什么？", True, False),  # the previous one
    ("怎么加上一个节点?", False, False),  # add one node
    ("马上一个小时后开会吗?", False, False),  # right away, in an hour
    ("我们需要提前一个月通知吗?", False, False),  # a month ahead
    ("What was the previous database of ledger?", True, False),
    ("原来如此", False, False),  # "I see"
    ("文件发过去了吗", False, False),  # 发过去: "sent over"
    ("现在用什么缓存", False, True),
    ("現在用什麼快取", False, True),
    ("目前用哪个", False, True),
    ("ก่อนหน้านี้ billing ใช้แคชอะไร", True, False),
    ("เมื่อก่อนใช้อะไร", True, False),
    ("ตอนนี้ใช้แคชอะไร", False, True),
    ("ปัจจุบันใช้อะไร", False, True),
    ("ทุกวันนี้ใช้อะไร", False, True),
    ("ขั้นตอนนี้ทำอะไร", False, False),  # this step
    ("คุ้นเคยกับระบบนี้", False, False),  # familiar
    ("früher", True, False),
    ("actuellement", False, True),
    ("¿qué usábamos antes?", True, False),
    ("how does the billing service invalidate its cache", False, False),  # no cue: the caller reads it as now
]


@pytest.mark.parametrize(("query", "past", "current"), CUES)
def test_earlier_and_present_states(query: str, past: bool, current: bool) -> None:
    found = parse_time(query, NOW)
    assert (found.past, found.current) == (past, current)
    assert not found.has_range


EVENTS = [  # query, anchor, side, past
    ("what did billing use before the migration?", "the migration", "before", True),
    ("What did we use before switching to Postgres?", "switching to Postgres", "before", True),
    ("what did we use before we migrated?", "we migrated", "before", True),
    ("billing cache before the migration", "the migration", "before", True),
    ("what should we check before the migration?", "the migration", "before", False),  # advice, not the past
    ("what changed after the upgrade?", "the upgrade", "after", False),
    ("since the migration, what broke?", "the migration", "after", False),
    ("what broke since we moved to Postgres", "we moved to Postgres", "after", False),
    ("before deploying, run the tests", None, None, False),  # instructions
    ("run the tests before deploying", None, None, False),
    ("Before the deploy, run the tests", None, None, False),
    ("run the tests before the deploy", None, None, False),
    ("what do we do before we migrate?", None, None, False),  # a plan
    ("since billing uses Redis, what is the TTL?", None, None, False),  # a cause
    ("what happens after the cache is warm", None, None, False),  # a condition
    ("since when do we use Postgres?", None, None, False),
    ("look after the servers", None, None, False),
    ("after all, what is the TTL", None, None, False),
    ("trước khi chuyển sang Postgres, billing dùng cache gì?", "chuyển sang Postgres", "before", True),
    ("sau khi nâng cấp thì có lỗi gì?", "nâng cấp", "after", False),
    ("trước khi deploy, chạy test", None, None, False),
    ("cần kiểm tra gì trước khi migrate?", "migrate", "before", False),
    ("在迁移之前billing用什么缓存?", "迁移", "before", True),
    ("在升级之后出了什么问题?", "升级", "after", False),
    ("自从迁移到Postgres以来出了什么问题?", "迁移到Postgres", "after", False),
    ("在部署之前运行测试", None, None, False),
    ("ก่อนย้ายไป Postgres billing ใช้แคชอะไร", "ย้ายไป Postgres", "before", True),
    ("แคชของ analytics ก่อนใช้ Redis คืออะไร", "ใช้ Redis", "before", True),  # not "ใช้" alone
    ("ก่อนจะเปลี่ยนเป็น GitLab CI billing ใช้ CI อะไร", "จะเปลี่ยนเป็น GitLab CI", "before", True),  # a name goes on
    ("ก่อนจะเปลี่ยนเป็น Google Cloud Storage notifications ใช้อะไร", "จะเปลี่ยนเป็น Google Cloud Storage", "before", True),
    ("ledger dùng lưu trữ object gì trước Backblaze B2?", "Backblaze B2", "before", True),  # before a name
    ("uống thuốc trước bữa ăn", None, None, False),  # before a meal: no name, no question
    ("ai đến trước?", None, None, False),
    ("Ai đứng trước Nam trong hàng?", None, None, False),  # in front of Nam: a question, a name, but no use
    ("Cái gì đặt trước Server A?", None, None, False),
    ("billing dùng cache gì trước Redis.", "Redis", "before", True),  # the sentence's full stop is no part of it
    ("billing đọc dữ liệu từ bảng nào trước khi chuyển sang Postgres?", "chuyển sang Postgres", "before", True),
    ("Trước đây billing đọc dữ liệu từ bảng nào?", None, None, True),  # "từ" (from) a table is no event
    ("Was haben wir vor Ort benutzt?", None, None, False),  # "vor Ort": on site
    ("Wann sind wir nach Berlin gezogen?", None, None, False),
    ("billing 自己在迁移之前用什么?", "迁移", "before", True),  # 自 (self) is no "since"
    ("我们用的是Redis之前呢?", None, None, True),  # 用 is not right before the name
    ("费用API之前是多少?", None, None, True),  # 费用 (cost) is a word made with 用
    ("换成Backblaze B2之前，ledger用的是什么对象存储？", "换成Backblaze B2", "before", True),
    ("billing用Redis之前用的缓存是什么？", "用Redis", "before", True),
    ("billing之前用的是什么CI？", None, None, True),  # billing's earlier CI: billing is no event
    ("หลังจากอัปเกรด มีปัญหาอะไร", "อัปเกรด", "after", False),
    ("ก่อนอื่น ใช้อะไร", None, None, False),  # "first of all"
    ("please tell me what we used before the migration", "the migration", "before", True),
    ("is the cache still warm after a restart?", None, None, False),  # any restart: no event
]


@pytest.mark.parametrize(("query", "anchor", "side", "past"), EVENTS)
def test_events(query: str, anchor: str | None, side: str | None, past: bool) -> None:
    found = parse_time(query, NOW)
    assert (found.anchor, found.anchor_side, found.past) == (anchor, side, past)
    assert not found.has_range


EDGES = [  # now, query, start, end
    (datetime(2025, 1, 15), "last month", "2024-12-01", "2025-01-01"),
    (datetime(2025, 1, 15), "in December", "2024-12-01", "2025-01-01"),
    (datetime(2025, 1, 15), "3 months ago", "2024-10-01", "2024-11-01"),
    (datetime(2025, 1, 1), "last week", "2024-12-23", "2024-12-30"),  # a Wednesday: this week began in 2024
    (datetime(2025, 1, 1), "this week", "2024-12-30", "2025-01-06"),
    (datetime(2025, 1, 1), "yesterday", "2024-12-31", "2025-01-01"),
    (datetime(2025, 1, 1), "last year", "2024-01-01", "2025-01-01"),
    (datetime(2025, 3, 2), "last week", "2025-02-17", "2025-02-24"),  # a Sunday belongs to the week before it
    (datetime(2025, 3, 3), "last week", "2025-02-24", "2025-03-03"),  # a Monday starts a new one
    (datetime(2025, 3, 19), "February 29", "2024-02-29", "2024-03-01"),  # the latest that existed
    (datetime(2025, 3, 19), "2024-02-29", "2024-02-29", "2024-03-01"),
    (datetime(2024, 2, 29), "a year ago", "2023-01-01", "2024-01-01"),
    (datetime(2024, 2, 29), "the past year", "2023-02-28", "2024-03-01"),
    (datetime(2024, 3, 31), "the past month", "2024-02-29", "2024-04-01"),
    (datetime(2024, 3, 1), "yesterday", "2024-02-29", "2024-03-01"),
    (datetime(2025, 3, 10), "last March", "2024-03-01", "2024-04-01"),  # not this month's
    (datetime(2025, 3, 10), "in March", "2025-03-01", "2025-04-01"),
    (datetime(2025, 3, 10), "March 15", "2024-03-15", "2024-03-16"),  # this year's is still ahead
    (datetime(2025, 8, 1), "between March and June", "2025-03-01", "2025-07-01"),
    (datetime(2025, 3, 19, 23, 30, tzinfo=timezone(timedelta(hours=-7))), "today", "2025-03-19", "2025-03-20"),
    (datetime(2025, 3, 20, 5, 0, tzinfo=timezone(timedelta(hours=7))), "yesterday", "2025-03-19", "2025-03-20"),
]


@pytest.mark.parametrize(("now", "query", "start", "end"), EDGES)
def test_calendar_edges(now: datetime, query: str, start: str, end: str) -> None:
    assert days(query, now) == (start, end)


INVALID = ["2025-02-29", "2025-13-01", "February 30, 2025", "29 February 2023", "3月32日", "tháng 13"]


@pytest.mark.parametrize("query", INVALID)
def test_dates_that_do_not_exist_set_nothing(query: str) -> None:
    assert not parse_time(query, NOW).has_range


def test_days_are_utc_midnights_around_a_note_stored_at_noon() -> None:
    found = parse_time("yesterday", NOW)
    noon = datetime(2025, 3, 18, 12, tzinfo=timezone.utc).timestamp()
    assert found.start == datetime(2025, 3, 18, tzinfo=timezone.utc).timestamp()
    assert found.start is not None and found.end is not None
    assert found.start < noon < found.end == found.start + 86400


def test_the_phrase_is_the_words_as_typed() -> None:
    assert parse_time("What did we decide Last Week?", NOW).phrase == "Last Week"
    assert parse_time("notes In March 2024 please", NOW).phrase == "March 2024"
    assert parse_time("changes since last week", NOW).phrase == "since last week"
    assert parse_time("from March to June", NOW).phrase == "from March to June"
    assert parse_time("tuần trước chúng ta làm gì", NOW).phrase == "tuần trước"
    assert parse_time("上周的决定", NOW).phrase == "上周"
    assert parse_time("what is it now?", NOW).phrase is None


def test_a_query_without_time_is_no_time() -> None:
    assert parse_time("how does billing invalidate its cache", NOW) == NO_TIME == TimeQuery()
    assert parse_time("", NOW) == NO_TIME


def test_a_range_and_a_state_together() -> None:
    found = parse_time("what did we use before last week, and what do we use now?", NOW)
    assert days("what did we use before last week, and what do we use now?") == (None, "2025-03-10")
    assert (found.current, found.past) == (True, False)


def test_every_dated_phrase_is_found_as_written() -> None:
    assert not [p for p in words.CALENDAR if days(p) == (None, None)]
    assert not [p for p in words.ROLLING if days(p)[1] != "2025-03-20"]
    assert not [p for p in words.FUZZY if days(p)[1] is None]


def test_every_cue_phrase_is_found_as_written() -> None:
    assert not [p for p in words.PAST if not parse_time(f"{p} x", NOW).past]
    assert not [p for p in words.CURRENT if not parse_time(f"{p} x", NOW).current]


def test_phrases_keep_their_meaning_when_folded() -> None:
    """Lookups fold marks and spaces away: no two phrases may fold to the same key with different meanings."""
    tables: list[Mapping[str, object]] = [words.CALENDAR, words.ROLLING, words.FUZZY, words.CONNECTORS]
    tables += [dict.fromkeys(words.PAST, "past"), dict.fromkeys(words.CURRENT, "current")]
    seen: dict[str, object] = {}
    for table in tables:
        for phrase, meaning in table.items():
            assert seen.setdefault(words.key(phrase), meaning) == meaning, phrase


def test_a_thai_buddhist_year_and_a_common_era_year_are_the_same_year() -> None:
    assert days("ปี 2567") == days("ปี 2024") == days("in 2024")


def test_today_is_the_calendar_day_of_now_as_given() -> None:
    late = datetime(2025, 3, 19, 23, 59)
    assert days("today", late) == ("2025-03-19", "2025-03-20")
    assert days("today", late.replace(tzinfo=timezone.utc)) == days("today", late)
    assert date.fromisoformat(days("today", NOW)[0] or "") == NOW.date()


def test_a_long_prompt_is_read_whole() -> None:
    """A prompt of 20,000 characters (recall reads the start and the last question of one) with names and 用 all
    through it: the move to a name before 之前 is looked for just before it, not across the whole text."""
    filler = "用户调用GetUserInfo接口返回ErrorCode。" * 600
    found = parse_time(filler[:19_950] + "换成Valkey之前，billing用什么缓存？", NOW)
    assert (found.anchor, found.past) == ("换成Valkey", True)
