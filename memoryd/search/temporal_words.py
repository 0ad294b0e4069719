"""The words memoryd.search.temporal reads time in, the one scan that finds them, and what they count in days:
English, Vietnamese, Chinese (simplified and traditional) and Thai, with German, French and Spanish basics.

Tables hold lowercase phrases separated by "|". A phrase with Latin marks also matches typed without them ("tuan
truoc"), never with other marks ("tuấn" is not "tuần"), except in EXACT ("cu" is not "cũ"). Thai and Chinese have
no spaces: GUARDS keep a phrase from matching inside another word (ขั้นตอนนี้ "this step" holds ตอนนี้ "now", 早上
"morning" ends in 上). A month name or a year alone is a date only after a DATE_CONTEXT word ("in March",
"since 2024", not "March the users"); "May" only capitalised, "Mar" only with a day or a year. Numeric dates only in
ISO order (05/03 is May 3 or March 5). A Thai year past 2400 is Buddhist Era (2568 is 2025).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any, TypeVar

from memoryd.sources.analyzer import fold
from memoryd.sources.text import DENSE_CHAR

DAY, WEEK, MONTH, YEAR = "day", "week", "month", "year"
FEW = (2, 5)  # "a few days ago": two to five days back; "the past few days": the last five
COUPLE = (1, 3)
RECENT_DAYS = 14  # "recently", "lately", "gần đây", "最近", "เมื่อเร็วๆ นี้": today and the 14 days before it
V = TypeVar("V")


def _list(phrases: str) -> list[str]:
    return phrases.split("|")


def _set(phrases: str) -> frozenset[str]:
    return frozenset(phrases.split("|"))


def _table(rows: dict[V, str]) -> dict[str, V]:
    return {phrase: value for value, phrases in rows.items() for phrase in phrases.split("|")}


def _numbered(first: int, phrases: str) -> dict[str, int]:
    return {phrase: first + i for i, phrase in enumerate(phrases.split("|"))}


# phrase -> (unit, offset): the calendar day, week (from Monday), month or year that many units from today's
CALENDAR = _table(
    {
        (DAY, 0): "today|tonight|this morning|this afternoon|this evening|earlier today|just now|hôm nay|sáng nay"
        "|trưa nay|chiều nay|tối nay|今天|今日|今早|今晚|วันนี้|เช้านี้|คืนนี้|heute|aujourd'hui|hoy",
        (DAY, -1): "yesterday|last night|hôm qua|tối qua|đêm qua|昨天|昨日|昨晚|เมื่อวาน|เมื่อวานนี้|เมื่อคืน|gestern|ayer",
        (DAY, -2): "the day before yesterday|hôm kia|前天|เมื่อวานซืน|vorgestern|avant-hier|anteayer|antier",
        (WEEK, 0): "this week|earlier this week|this weekend|tuần này|本周|本週|这周|這週|這周|这个星期|這個星期|这星期"
        "|這星期|本星期|这礼拜|這禮拜|这个礼拜|這個禮拜|สัปดาห์นี้|อาทิตย์นี้|diese woche|cette semaine|esta semana",
        (WEEK, -1): "last week|last weekend|tuần trước|tuần rồi|tuần vừa rồi|上周|上週|上一周|上一週|上个星期"
        "|上個星期|上一个星期|上一個星期|上星期|上礼拜|上禮拜|上个礼拜|上個禮拜|สัปดาห์ที่แล้ว|สัปดาห์ก่อน"
        "|อาทิตย์ที่แล้ว|อาทิตย์ก่อน|letzte woche|vergangene woche"
        "|la semaine dernière|la semaine passée|la semana pasada",
        (WEEK, -2): "the week before last|上上周|上上週",
        (MONTH, 0): "this month|earlier this month|tháng này|本月|这个月|這個月|เดือนนี้|diesen monat|ce mois-ci|este mes",
        (MONTH, -1): "last month|tháng trước|tháng rồi|tháng vừa rồi|上个月|上個月|上一个月|上一個月|上月"
        "|เดือนที่แล้ว|เดือนก่อน|letzten monat|vergangenen monat|le mois dernier|le mois passé|el mes pasado",
        (MONTH, -2): "the month before last|上上个月|上上個月",
        (YEAR, 0): "this year|earlier this year|năm nay|今年|ปีนี้|dieses jahr|cette année|este año",
        (YEAR, -1): "last year|năm ngoái|năm trước|năm rồi|去年|ปีที่แล้ว|ปีก่อน|ปีกลาย|letztes jahr|vergangenes jahr"
        "|l'année dernière|l'an dernier|l'année passée|el año pasado",
        (YEAR, -2): "the year before last|前年",
    }
)
# phrase -> (unit, n): a rolling window, today and the n units before it
ROLLING = _table(
    {
        (DAY, RECENT_DAYS): "recently|lately|in recent days|in recent weeks|gần đây|dạo gần đây|dạo này"
        "|thời gian gần đây|mới đây|最近|近期|近来|近來|เมื่อเร็วๆ นี้|เมื่อเร็ว ๆ นี้|ไม่นานมานี้|ช่วงที่ผ่านมา"
        "|kürzlich|neulich|in letzter zeit|vor kurzem|récemment|dernièrement|recientemente|últimamente",
        (DAY, FEW[1]): "the past few days|the last few days|mấy ngày nay|mấy hôm nay|mấy ngày qua|这几天|這幾天|这两天"
        "|這兩天|ces derniers jours|estos últimos días",
        (DAY, 7): "the past week|the last week|this past week|tuần qua|tuần vừa qua",
        (MONTH, 1): "the past month|the last month|tháng qua|tháng vừa qua",
        (YEAR, 1): "the past year|the last year|năm qua|năm vừa qua|ปีที่ผ่านมา",
    }
)
# phrase -> (unit, nearest, farthest): some time that many units back
FUZZY = _table(
    {
        (DAY, 2, 7): "the other day|hôm trước|วันก่อน|เมื่อวันก่อน",
        (DAY, *FEW): "前几天|前幾天",
        (DAY, *COUPLE): "前两天|前兩天",
    }
)
# asks about an earlier state ("what did we use before?")
PAST = _list(
    "previously|formerly|originally|initially|at first|in the past|back then|back in the day|used to|before that"
    "|before this|before then|prior to that|until recently|earlier|the old|our old|the previous|our previous"
    "|the former|the original|our original|trước đây|trước kia|lúc trước|hồi trước|khi trước|ngày trước"
    "|thời gian trước|ban đầu|lúc đầu|ngày xưa|hồi xưa|xưa kia|cũ|từng|đã từng|原来|原來|原先|原本|先前|过去|過去"
    "|曾经|曾經|当初|當初|从前|從前|早先|旧的|舊的|旧版|舊版|上一个|上一個|前一个|前一個"
    "|เมื่อก่อน|ก่อนหน้านี้|ก่อนหน้า|แต่ก่อน|เดิมที|แต่เดิม"
    "|ตอนแรก|สมัยก่อน|ครั้งก่อน|เคย|เก่า|vorher|früher|ursprünglich|zuvor|damals|ehemals|auparavant|précédemment"
    "|autrefois|à l'origine|initialement|avant ça|avant cela|anteriormente|antes|originalmente|al principio"
)
# asks about the present state explicitly ("what is it now?")
CURRENT = _list(
    "now|right now|currently|current|these days|nowadays|at the moment|at present|presently|as of now|as of today"
    "|still|anymore|no longer|latest|hiện tại|hiện nay|hiện giờ|hiện thời|bây giờ|giờ đây|lúc này|mới nhất|đang"
    "|vẫn|现在|現在|目前|当前|當前|如今|眼下|现今|現今|当下|當下|仍然|依然|依旧|依舊|还在|還在|仍在|最新|ตอนนี้|ขณะนี้"
    "|ปัจจุบัน|เดี๋ยวนี้|ทุกวันนี้|ช่วงนี้|ยังคง|ล่าสุด|jetzt|derzeit|aktuell|momentan|zurzeit|heutzutage|gegenwärtig"
    "|maintenant|actuellement|en ce moment|à présent|de nos jours|ahora|actualmente|en este momento|hoy en día"
    "|hoy día|todavía"
)
EXACT = _set("cũ|từng|đã từng|đang|vẫn|sáu|tháng sáu")  # "sau": after; "tháng sau": next month
# connector -> (what it does to the date after it, the language whose event phrases it may anchor, or "");
# "from" starts a range only when "to <date>" follows: alone it is the date itself ("notes from March")
CONNECTORS = _table(
    {
        ("before", "en"): "before|prior to",
        ("after", "en"): "after",
        ("since", "en"): "since",
        ("until", ""): "until|till|up until|đến|cho đến|bis|jusqu'à|jusqu'au|hasta|到|直到|จนถึง",
        ("since", ""): "as of|từ|kể từ|seit|ab|depuis|desde|a partir de|à partir de|自",
        ("from", ""): "between|from|从|從|von",
        ("before", "vi"): "trước khi",
        ("after", "vi"): "sau khi",
        ("since", "vi"): "từ khi|kể từ khi|từ lúc|kể từ lúc",
        ("before", ""): "trước|vor|avant|antes de|antes del",
        ("after", ""): "sau|nach|après|después de|después del",
        ("since", "zh"): "自从|自從",
        ("frame", "zh"): "在",
        ("post_before", "zh"): "之前|以前",
        ("post_before", ""): "前",
        ("post_after", "zh"): "之后|之後|以后|以後|后|後",
        ("post_since", "zh"): "以来|以來|起|开始|開始",
        ("before", "th"): "ก่อนที่จะ|ก่อนที่|ก่อนการ|ก่อน",
        ("after", "th"): "หลังจากที่|หลังจาก|หลัง",
        ("since", "th"): "ตั้งแต่",
    }
)
TH_AFTER_SPACE = _set("ก่อน|หลัง")  # inside a phrase these are "first" and "back", not "before"/"after"
_ZH_UP = "[早晚马馬以加线線网網身桌路楼樓向往之]"  # 早上, 马上, 线上: a word ending in 上, not "last"
_ZH_THIS = "[基根日资資版样樣文成剧劇脚腳原账賬课課书書]"  # 基本, 日本, 版本: a word ending in 本, not "this"
# phrase -> (not right after any of these, not right before this pattern)
GUARDS: dict[str, tuple[tuple[str, ...], str]] = _table(
    {
        ((), r"\s+of\b"): "last week|last month|last year|this week|this month|this year|the last week|the last month"
        "|the last year|the past week|the past month|the past year",
        (tuple(_list("is |are |was |were |be |been |being |get |gets |got ")), ""): "used to",
        ((), r"\s+than\b"): "earlier",
        ((), r"\s+(?:\S+\s+)?(?:days?|weeks?|months?|years?|hours?)\b"): "in the past",  # "in the past 3 days"
        ((), r"\s+(?:week|month|year|morning|afternoon|evening)"): "before this|before that",
        (tuple(_list("just |until |till |up to |from |by ")), r"\s*\("): "now",
        (tuple(_list("ở |o |chỗ |nơi |noi ")), ""): "gần đây",  # "ở gần đây": "near here"
        ((), r"\s+kh"): "năm trước|ngày trước",  # "năm trước khi": "the year before"
        ((), r"\s+(?:que|de|del)\b"): "antes",
        ((), "的"): "最近",
        ((), "如此|是这样|是這樣"): "原来|原來",
        (("[走跑发發传傳送拿带帶飞飛游遊冲衝扔转轉看]",), ""): "过去|過去",  # 走过去: "walk over"
        ((), "[端面台排景线線缀綴提往进進]"): "前",  # 前端: "frontend"
        ((_ZH_UP,), ""): "上一个|上一個",  # 加上一个节点, 马上一个小时: "add one", "in an hour"
        (("[提往向之以面眼跟事]",), ""): "前一个|前一個",  # 提前一个月: "a month ahead"
        (("ทุก",), ""): "วันนี้|วันก่อน",  # ทุกวันนี้: "nowadays"
        (("ขั้น",), ""): "ตอนนี้",  # ขั้นตอนนี้: "this step"
        (("วัน",), ""): "อาทิตย์นี้|อาทิตย์ที่แล้ว|อาทิตย์ก่อน",  # วันอาทิตย์: "Sunday"
        (("คุ้น",), "ชิน"): "เคย",  # คุ้นเคย: "familiar", เคยชิน: "accustomed"
        ((), "อื่น"): "ก่อน",  # ก่อนอื่น: "first of all"
    }
)
GUARDS |= {p: ((_ZH_UP,), "") for p in CALENDAR if p[0] == "上"}
GUARDS |= {p: ((_ZH_THIS,), "期") for p in CALENDAR if p[0] == "本"}
# count words -> a number, or (nearest, farthest) for "a few", "a couple"
NUMBERS: dict[str, int | tuple[int, int]] = {
    **_numbered(1, "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"),
    **_numbered(1, "một|hai|ba|bốn|năm|sáu|bảy|tám|chín|mười"),
    **_numbered(1, "หนึ่ง|สอง|สาม|สี่|ห้า|หก|เจ็ด|แปด|เก้า|สิบ"),
    **_numbered(2, "zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn"),
    **_numbered(2, "deux|trois|quatre|cinq|six|sept|huit|neuf|dix"),
    **_numbered(2, "dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez"),
    **_table({1: "a|an|ein|einem|einer|un|une|uno|una", COUPLE: "a couple|a couple of|couple of|สองสาม"}),
    **_table({FEW: "a few|few|several|vài|mấy|dăm|几|幾|数|數|หลาย|ไม่กี่|ein paar|einigen|mehreren|quelques|plusieurs"}),
    **_table({FEW: "unos|unas|unos pocos|unas pocas|algunos|algunas|varios|varias"}),
}
CJK_DIGITS = _numbered(1, "一|二|三|四|五|六|七|八|九") | {"两": 2, "兩": 2}
UNITS = _table(
    {
        DAY: "day|days|ngày|hôm|天|日|วัน|tag|tage|tagen|jour|jours|día|días",
        WEEK: "week|weeks|tuần|周|週|星期|个星期|個星期|礼拜|禮拜|สัปดาห์|อาทิตย์|woche|wochen|semaine|semaines|semana"
        "|semanas",
        MONTH: "month|months|tháng|个月|個月|เดือน|monat|monate|monaten|mois|mes|meses",
        YEAR: "year|years|năm|年|ปี|jahr|jahre|jahren|an|ans|année|années|año|años",
    }
)
AGO_BEFORE = _list("cách đây|vor|il y a|hace|เมื่อ")  # "il y a 3 jours"
AGO_AFTER = _list("ago|về trước|trước|以前|之前|前|ที่แล้ว|ก่อน")  # "3 days ago"
WINDOW_BEFORE = _list(
    "in the past|in the last|over the past|over the last|during the past|for the past|the past|the last|the previous"
    "|past|last|previous|过去|過去|最近|近|in den letzten|den letzten|letzten|los últimos|las últimas|últimos|últimas"
    "|ย้อนหลัง"
)  # "the past 3 days"
WINDOW_AFTER = _list("qua|nay|vừa qua|gần đây|ที่ผ่านมา|derniers|dernières|passés|passées")  # "3 ngày qua"
_MONTH_NAMES = (
    "january|february|march|april|may|june|july|august|september|october|november|december",
    "januar|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember",
    "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre",
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre",
    "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec",
    "มกราคม|กุมภาพันธ์|มีนาคม|เมษายน|พฤษภาคม|มิถุนายน|กรกฎาคม|สิงหาคม|กันยายน|ตุลาคม|พฤศจิกายน|ธันวาคม",
    "ม.ค.|ก.พ.|มี.ค.|เม.ย.|พ.ค.|มิ.ย.|ก.ค.|ส.ค.|ก.ย.|ต.ค.|พ.ย.|ธ.ค.",
)
MONTHS = {name: month for names in _MONTH_NAMES for name, month in _numbered(1, names).items()}
MONTHS |= {"sept": 9, "jänner": 1}
THAI_MONTHS = [name for names in _MONTH_NAMES[-2:] for name in _list(names)]
VI_MONTHS = {f"tháng {w}": n for w, n in _numbered(1, "một|hai|ba|tư|năm|sáu|bảy|tám|chín|mười").items()}
VI_MONTHS |= {"tháng mười một": 11, "tháng mười hai": 12, "tháng giêng": 1, "tháng chạp": 12}
MONTH_ABBREVIATIONS = frozenset(_list(_MONTH_NAMES[4])) - {"may"} | {"sept"}
# the word before a month name or a year that makes it a date ("in March", not "March the users")
DATE_CONTEXT = _set(
    "in|during|since|before|after|until|till|through|by|from|of|on|year|last|this|early|late|mid|between|năm|ปี"
    "|พ.ศ.|ค.ศ.|im|seit|vor|nach|bis|ab|von|anfang|ende|mitte|jahr|en|depuis|avant|après|début|fin|de|del|desde"
    "|hasta|año|l'année"
)
DENSE_CONTEXT = tuple(w for w in DATE_CONTEXT if DENSE_CHAR.search(w))
# English events: how one ends, what makes the sentence an instruction, or "since" a cause and "after" a condition
EN_CLAUSE_END = _set(
    "and|but|or|so|then|what|which|who|where|when|why|how|did|didn't|was|wasn't|were|weren't|had|hadn't|do|does|is"
    "|are|has|have|can|could|should|would|will|we|they"
)
EN_CONDITION = _set(
    "is|are|am|isn't|aren't|has|have|does|do|doesn't|don't|can|will|won't|should|must|need|uses|needs|runs|works"
    "|depends|seems|means|requires|wants|gets|takes|makes|keeps|goes|looks"
)
EN_NO_EVENT = _set("when|what|which|how|that|this|then|it|all|now|long|ever|yet|i|you|a|an|any|every|each")
EN_SUBJECTS = _set("we|they|he|she")
EN_PAST_MARKERS = _set("did|didn't|was|wasn't|were|weren't|had|hadn't|used")
EN_IRREGULAR_PAST = _set(
    "went|made|began|built|wrote|chose|took|got|set|ran|put|left|brought|bought|broke|came|gave|found"
)
EN_IMPERATIVES = _set(
    "run|check|make|ensure|remember|don't|always|never|verify|back|test|restart|update|stop|wait|be|note|use"
    "|add|remove|delete|create|build|deploy|install|set|take|call|let's|write|read"
)
EN_DISCOURSE = _set(
    "said|say|mentioned|mention|told|asked|explained|discussed|noted|stated|wrote|described|shown|question|message|answer"
)
EN_NOT_BEFORE_AFTER = _set("look|looks|looked|looking|named|ask|asked|asking|take")  # "look after the servers"
# every language: what makes a sentence a question or marks the past; what makes it advice or a plan
QUESTION_WORDS = _list(
    "?|？|gì|nào|sao|không|chưa|什么|什麼|哪|吗|嗎|谁|誰|怎么|怎麼|多少|呢|อะไร|ไหน|ไหม|มั้ย|หรือเปล่า|ยังไง"
)
PAST_MARKERS = _list("đã|từng|用过|用過|曾|过的|過的|เคย")
MODALS = _list("should|must|need|needs|will|shall|gonna|have to|has to|cần|phải|nên|hãy|sẽ|需要|应该|應該|必须|必須")
MODALS += _list("得先|要先|ต้อง|ควร")
CLAUSE_STOPS = frozenset(fold(w) for w in _list("thì|và|nhưng|rồi|gì|nào|không"))
TO_WORDS = _list("to|and|until|till|up until|through|-|–|đến|cho đến|tới|到|直到|至|ถึง|จนถึง|bis|und|à|au|et|hasta|a|y")


def count(text: str) -> int | tuple[int, int]:
    """A written count: "3", "three", "ba", "三", "十二", "สาม", or (nearest, farthest) for "a few"."""
    found = key(text)
    if found in COUNTS:
        return COUNTS[found]
    if found.isdigit():
        return int(found)
    tens, ten, ones = found.partition("十")  # 十二, 二十, 三十一
    if not ten:
        return CJK_DIGITS[found]
    return (CJK_DIGITS[tens] if tens else 1) * 10 + (CJK_DIGITS[ones] if ones else 0)


def number(text: str) -> int:
    found = count(text)
    if isinstance(found, tuple):
        raise ValueError(text)
    return found


def year(text: str) -> int:
    """A written year; past 2400 a Thai Buddhist Era one (2568 is 2025)."""
    written = int(text)
    found = written - 543 if written > 2400 else written
    if not 1900 <= found < 2200:
        raise ValueError(text)
    return found


def key(text: str) -> str:
    """How a matched phrase is looked up: lowercase, without marks or spaces."""
    return fold("".join(text.split()))


def _latin_word(char: str) -> bool:
    return char.isalnum() and not DENSE_CHAR.match(char)


def _atoms(phrase: str, guarded: bool) -> list[str]:
    """A phrase as regex pieces, one per character: its marks optional, word bounds and guards around it."""
    atoms = [r"\b"] if _latin_word(phrase[0]) else []
    for i, char in enumerate(phrase):
        plain = fold(char)
        if char == " ":
            atoms.append(r"\s*" if DENSE_CHAR.match(phrase[i - 1]) or DENSE_CHAR.match(phrase[i + 1]) else r"\s+")
        elif plain != char and len(plain) == 1 and phrase not in EXACT:
            atoms.append(f"[{char}{plain}]")
        else:
            atoms.append(re.escape(char))
    atoms += [r"\b"] if _latin_word(phrase[-1]) else []
    behind, ahead = GUARDS.get(phrase, ((), "")) if guarded else ((), "")
    itself = "".join(" " if a.startswith(r"\s") else a for a in atoms if a != r"\b")
    atoms += [f"(?<!{before}{itself})" for before in behind]  # looked at from its end: a fixed width
    return atoms + ([f"(?!{ahead})"] if ahead else [])


def trie(phrases: Iterable[str], guarded: bool = False) -> str:
    """One regex for many phrases, factored by their common beginnings (a flat alternation is 30 times slower);
    where one phrase begins another, the longer is tried first (characters before word bounds and guards)."""
    root: dict[str, dict] = {}
    for phrase in phrases:
        node = root
        for atom in _atoms(phrase, guarded):
            node = node.setdefault(atom, {})
        node[""] = {}

    def emit(node: dict[str, dict], inner: bool = True) -> str:
        ahead = sorted((a for a in node if a), key=lambda a: inner and (a == r"\b" or a.startswith("(?")))
        branches = [atom + emit(node[atom]) for atom in ahead] + ([""] if "" in node else [])
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return emit(root, inner=False)


LITERALS: dict[str, tuple[str, Any]] = {
    **{key(p): ("calendar", v) for p, v in CALENDAR.items()},
    **{key(p): ("rolling", v) for p, v in ROLLING.items()},
    **{key(p): ("fuzzy", v) for p, v in FUZZY.items()},
    **{key(p): ("past", None) for p in PAST},
    **{key(p): ("current", None) for p in CURRENT},
    **{key(p): ("connector", v) for p, v in CONNECTORS.items()},
}
AGO = frozenset(key(w) for w in (*AGO_BEFORE, *AGO_AFTER))
COUNTS = {key(w): n for w, n in NUMBERS.items()}
UNIT_OF = {key(w): u for w, u in UNITS.items()}
MONTH_OF = {key(w): m for w, m in (*MONTHS.items(), *VI_MONTHS.items())}
_NUM = rf"(?:\d{{1,3}}(?!\d)|[一二两兩三四五六七八九十几幾数數]{{1,3}}|{trie(NUMBERS)})"
_UNIT = trie(UNITS)
_CJK_DAY = "[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"
_DENSE = DENSE_CHAR.pattern
# where a phrase may begin: not inside a Latin word
_START = rf"(?:(?<!\w)|(?<={_DENSE})|(?={_DENSE}))"
SCANNER = re.compile(
    _START
    + rf"(?:(?P<iso>(?<![\d.])(?P<iy>\d{{4}})(?P<isep>[-/])(?P<im>\d{{1,2}})(?:(?P=isep)(?P<id>\d{{1,2}}))?(?!\d))"
    rf"|(?P<count>(?P<pre>{trie((*AGO_BEFORE, *WINDOW_BEFORE))})?\s*(?P<n>{_NUM})\s*(?P<mid>derni[eè]re?s\s+)?"
    rf"(?P<unit>{_UNIT})(?:\s*(?P<post>{trie((*AGO_AFTER, *WINDOW_AFTER))}))?)"
    rf"|(?P<month>(?=[\d一二三四五六七八九十])(?:(?P<zy>\d{{4}})\s*年\s*)?(?<![\d个個每几幾数數半第上下这這本])(?P<zm>\d{{1,2}}|十[一二]?|[一二三四五六七八九])"
    rf"\s*月份?(?:\s*(?P<zd>\d{{1,2}}|{_CJK_DAY})\s*[日号號])?"
    rf"|(?=[\dมกเพสตธ])(?:(?P<td>\d{{1,2}})\s*)?(?:เดือน\s*)?(?P<tm>{trie(THAI_MONTHS)})(?:\s*(?:พ\.ศ\.|ค\.ศ\.)?\s*(?P<ty>\d{{4}})(?!\d))?"
    rf"|(?=[nt])(?:{trie(['ngày'])}\s+(?P<vd>\d{{1,2}})\s+)?(?:{trie(['tháng'])}\s+(?P<vn>\d{{1,2}})(?!\d)|(?P<vm>{trie(VI_MONTHS)}))"
    rf"(?:\s*(?:/|{trie(['năm'])}\s+)(?P<vy>\d{{4}})(?!\d))?"
    rf"|(?=[\dtjfmasonde])(?:(?:the\s+)?(?P<md>\d{{1,2}})(?:st|nd|rd|th|er|\.)?\s+(?:of\s+|de\s+)?)?"
    rf"(?P<mn>{trie(set(MONTHS) - set(THAI_MONTHS))})"
    rf"\.?(?:\s+(?P<md2>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:.]))?(?:,?\s+(?:del?\s+)?(?P<my>\d{{4}})(?!\d))?)"
    rf"|(?P<year>(?P<zy2>\d{{4}})\s*年(?![代级級])|(?<![\d.,:/-])\d{{4}}(?!\d|[.,:/-]\d))"
    rf"|(?P<word>{trie((*CALENDAR, *ROLLING, *FUZZY, *PAST, *CURRENT, *CONNECTORS), True)}))"
)
TO = re.compile(rf"\s*{trie(TO_WORDS)}\s*")


def span(now: datetime, unit: str, offset: int) -> tuple[int, int]:
    """The day, week, month or year `offset` units from today's, as date ordinals [first day, day after the last)."""
    today = now.date()
    if unit in (DAY, WEEK):
        first = today.toordinal() + offset if unit == DAY else today.toordinal() - today.weekday() + 7 * offset
        return first, first + (1 if unit == DAY else 7)
    months = 12 if unit == YEAR else 1
    first = today.year * 12 + (today.month - 1 if unit == MONTH else 0) + offset * months
    return _month_start(first), _month_start(first + months)


def month_span(year: int, month: int) -> tuple[int, int]:
    return _month_start(year * 12 + month - 1), _month_start(year * 12 + month)


def _month_start(index: int) -> int:
    """The first day of a month counted from year 0 (24300 is January 2025)."""
    return date(index // 12, index % 12 + 1, 1).toordinal()


def rolling(now: datetime, unit: str, count: int) -> tuple[int, int]:
    """Today and the `count` units before it ("the past month" from March 31: from February 28)."""
    today = now.date().toordinal()
    if unit in (DAY, WEEK):
        return today - count * (7 if unit == WEEK else 1), today + 1
    year, month = divmod(now.year * 12 + now.month - 1 - count * (12 if unit == YEAR else 1), 12)
    return date(year, month + 1, min(now.day, calendar.monthrange(year, month + 1)[1])).toordinal(), today + 1


def back(now: datetime, unit: str, count: int | tuple[int, int]) -> tuple[int, int]:
    """`count` units ago: that unit, or all of them from a few's farthest to its nearest."""
    if isinstance(count, tuple):
        return span(now, unit, -count[1])[0], span(now, unit, -count[0])[1]
    return span(now, unit, -count)
