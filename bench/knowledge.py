"""Knowledge updates (issue 45): when a fact changed over the year, does search rank the statement that holds now
above the ones it replaced, and find the one before it when asked what was used before?

The data is synthesized (deterministic for a seed, nothing copied): a year of dated daily notes
`memory/YYYY-MM-DD.md` (2 to 5 entries each: statements, meetings, todos) and conversation transcripts
(`sessions/*.jsonl`, OpenClaw and Claude Code lines with per-turn timestamps), in English, Vietnamese, Chinese and
Thai, one agent per language. About 150 facts (a subject such as `billing`, an attribute such as its cache, a
value) are stated 2 to 4 times each on different days, in varied phrasing: a first statement, changes that name
the old value, changes that do not, the attribute by a synonym or not named at all. Subjects share attributes and
attributes share subjects, so the newest note about `billing` is rarely the answer. The same year is also written
"as asked": every statement and question names the attribute by its first name and every change names it (the
issue's own example: "we use Redis as the cache", then "switched the billing cache to Memcached"), which separates
what ranking can know from the words from what only synonyms would tell.

Each fact is asked "now" twice (mostly without a time word) and "before" once, through `AgentMemory.search`
(max_results 10, every other option at its default), in keyword and hybrid mode (the default local model). A
statement at line L of path P is held by the first result of P whose chunk covers L; one not held ranks below all.
- now, newest above older: the current statement is held above every older statement of the fact;
- now, older first: an older statement is held above the current one;
- before, top 3: the statement just before the current one is held by one of the first three results.

python -m bench.knowledge [--langs en,vi,zh,th] [--modes keyword,hybrid] [--phrasings varied,asked] [--facts 150]
                          [--seed 45] [--quick]
python -m bench knowledge               # the same, kept for `python -m bench report`
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import random
import re
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.beir import CACHE
from bench.harness import median
from bench.knowledge_data import (
    ACKNOWLEDGED,
    ASKED_TO_NOTE,
    ATTRIBUTES,
    BEFORE,
    CHATTER,
    CLAUSE_CHANGE,
    CLAUSE_FIRST,
    FILLERS,
    FIRST,
    FIRST_REASONS,
    LANGUAGES,
    NAMES_OLD,
    NEW_ONLY,
    NOTE_SECTION,
    NOTE_TITLE,
    NOW,
    NOW_TIMED,
    PEOPLE,
    REASONS,
    SAID_BY_ASSISTANT,
    SAID_BY_USER,
    SUBJECTS,
    Attribute,
)
from memoryd.config import EmbeddingConfig, default_data_dir, default_model_path, quickstart_agent
from memoryd.memory import AgentMemory

SEED = 45
FACTS = 150
QUICK_FACTS = 40
YEAR = 2025
MODES = ("keyword", "hybrid")
PHRASINGS = ("varied", "asked")  # synonyms and clauses as people write; the attribute named as the question names it
K = 10
BEFORE_TOP = 3
MIN_GAP_DAYS = 14
MAX_STATEMENTS_PER_DAY = 3
TRANSCRIPT_SHARE = 0.15
FLOORS = {"now_newest_above_older": (">=", 0.95), "now_older_first": ("<=", 0.02), "before_top3": (">=", 0.90)}
EXAMPLES = 5

StatementKey = tuple[int, int]  # (fact, order)
Search = Callable[[str, str], list[dict[str, Any]]]  # (question, mode) -> result dicts, best first
_LATIN = "A-Za-z0-9"
_SPACELESS = "\u0e00-\u0e7f\u3400-\u9fff"  # Thai, CJK


@dataclass(frozen=True)
class PlannedFact:
    subject: str
    attribute: Attribute
    values: tuple[str, ...]
    days: tuple[dt.date, ...]
    in_transcript: tuple[bool, ...]
    by_user: tuple[bool, ...]


@dataclass(frozen=True)
class Conversation:
    day: dt.date
    statements: tuple[StatementKey, ...]
    exchanges: int
    claude_code: bool


@dataclass(frozen=True)
class Plan:
    """What happens when, the same in every language: the facts, and each day's note and conversation."""

    facts: tuple[PlannedFact, ...]
    notes: dict[dt.date, tuple[StatementKey | None, ...]]  # entries: (fact, order), or None for a filler
    conversations: tuple[Conversation, ...]


@dataclass(frozen=True)
class Statement:
    fact: int
    order: int
    value: str
    day: dt.date
    kind: str  # first, names_old, new_only, clause
    text: str
    path: str = ""
    line: int = 0


@dataclass(frozen=True)
class Question:
    fact: int
    kind: str  # now, before
    text: str
    timed: bool = False


@dataclass
class Fact:
    subject: str
    attribute: str
    statements: list[Statement] = field(default_factory=list)


@dataclass
class Corpus:
    lang: str
    files: dict[str, str]  # display path -> text
    facts: list[Fact]
    questions: list[Question]


def _spread(rng: random.Random, days: list[dt.date], count: int, load: Counter[dt.date]) -> tuple[dt.date, ...]:
    """`count` days in order, at least MIN_GAP_DAYS apart, on days that do not hold too many statements yet."""
    for attempt in range(2000):
        picked = sorted(rng.sample(days, count))
        gaps_ok = all((b - a).days >= MIN_GAP_DAYS for a, b in itertools.pairwise(picked))
        if gaps_ok and (attempt > 1000 or all(load[d] < MAX_STATEMENTS_PER_DAY for d in picked)):
            return tuple(picked)
    raise RuntimeError("no room in the year for a fact's statements")


def plan_year(seed: int = SEED, fact_count: int = FACTS) -> Plan:
    rng = random.Random(seed)
    start = dt.date(YEAR, 1, 1)
    year = [start + dt.timedelta(days=i) for i in range(365)]
    workdays = [d for d in year if d.weekday() < 5 or rng.random() < 0.1]
    pairs = [(s, a) for s in SUBJECTS for a in ATTRIBUTES]
    rng.shuffle(pairs)
    if fact_count > len(pairs):
        raise ValueError(f"at most {len(pairs)} facts")
    load: Counter[dt.date] = Counter()
    facts = []
    for subject, attribute in pairs[:fact_count]:
        count = rng.choices((2, 3, 4), weights=(45, 35, 20))[0]
        days = _spread(rng, workdays, count, load)
        load.update(days)
        facts.append(
            PlannedFact(
                subject,
                attribute,
                tuple(rng.sample(attribute.values, count)),
                days,
                tuple(rng.random() < TRANSCRIPT_SHARE for _ in days),
                tuple(rng.random() < 0.6 for _ in days),
            )
        )
    in_notes: dict[dt.date, list[StatementKey]] = {}
    in_talks: dict[dt.date, list[StatementKey]] = {}
    for index, fact in enumerate(facts):
        for order, (day, talked) in enumerate(zip(fact.days, fact.in_transcript, strict=True)):
            (in_talks if talked else in_notes).setdefault(day, []).append((index, order))
    quiet = [d for d in workdays if d not in in_notes]
    for day in rng.sample(quiet, min(len(quiet), len(in_notes) // 5)):
        in_notes[day] = []
    notes: dict[dt.date, tuple[StatementKey | None, ...]] = {}
    for day in sorted(in_notes):
        stated = in_notes[day]
        fillers = rng.randint(max(0, 2 - len(stated)), 5 - len(stated)) if stated else rng.randint(2, 4)
        notes[day] = (*stated, *([None] * fillers))
    quiet_talks = [d for d in workdays if d not in in_talks]
    for day in rng.sample(quiet_talks, min(len(quiet_talks), max(2, len(in_talks) // 5))):
        in_talks[day] = []
    conversations = tuple(
        Conversation(day, tuple(in_talks[day]), rng.randint(2, 4), rng.random() < 0.5) for day in sorted(in_talks)
    )
    return Plan(tuple(facts), notes, conversations)


def _spacing(text: str, spaced: bool) -> str:
    """Latin words in Thai or Chinese text with a space either side, or none, as different writers do."""
    if spaced:
        return re.sub(f"(?<=[{_LATIN}])(?=[{_SPACELESS}])|(?<=[{_SPACELESS}])(?=[{_LATIN}])", " ", text)
    return re.sub(f"(?<=[{_LATIN}]) (?=[{_SPACELESS}])|(?<=[{_SPACELESS}]) (?=[{_LATIN}])", "", text)


class _Writer:
    """Renders a plan in one language; every choice of words comes from the language's own random stream."""

    def __init__(self, plan: Plan, lang: str, seed: int, phrasing: str = "varied") -> None:
        self.plan = plan
        self.lang = lang
        self.rng = random.Random(f"{seed}:{lang}")
        self.as_asked = phrasing == "asked"

    def finish(self, text: str) -> str:
        if self.lang == "th":
            return _spacing(text, self.rng.random() < 0.75)
        if self.lang == "zh":
            return _spacing(text, self.rng.random() < 0.3)
        return text

    def attribute_word(self, attribute: Attribute, canonical_share: float) -> str:
        names = attribute.names[self.lang]
        if self.as_asked:
            return names[0]
        return names[0] if self.rng.random() < canonical_share else self.rng.choice(names[1:])

    def statement(self, fact: PlannedFact, order: int) -> tuple[str, str]:
        """(kind, text) of a fact's statement number `order`."""
        lang, rng = self.lang, self.rng
        slots = {
            "s": fact.subject,
            "v": fact.values[order],
            "o": fact.values[order - 1] if order else "",
            "a": self.attribute_word(fact.attribute, 0.5),
            "why": rng.choice((REASONS if order else FIRST_REASONS)[lang]) if rng.random() < 0.4 else "",
        }
        slots["c"] = fact.attribute.clause[lang].format(**slots)
        draw = rng.random()
        templates: tuple[str, ...]
        clause_share = 0.0 if self.as_asked else 0.2
        if order == 0:
            kind, templates = ("first", FIRST[lang]) if draw < 1 - clause_share else ("clause", CLAUSE_FIRST[lang])
        elif draw < 0.4:
            kind, templates = "names_old", NAMES_OLD[lang]
        elif draw < 1 - clause_share:
            kind, templates = "new_only", NEW_ONLY[lang]
        else:
            kind, templates = "clause", CLAUSE_CHANGE[lang]
        return kind, self.sentence(rng.choice(templates), slots)

    def filler_slots(self) -> dict[str, Any]:
        rng = self.rng
        attribute = rng.choice(ATTRIBUTES)
        people = rng.sample(PEOPLE[self.lang], 2)
        return {
            "s": rng.choice(SUBJECTS),
            "a": attribute.names[self.lang][0],
            "v": rng.choice(attribute.values),
            "p": people[0],
            "p2": people[1],
            "n": rng.randint(3, 17),
            "q": rng.randint(1, 4),
        }

    def filler(self, templates: tuple[str, ...]) -> str:
        return self.sentence(self.rng.choice(templates), self.filler_slots())

    def sentence(self, template: str, slots: dict[str, Any]) -> str:
        text = template.format(**slots)
        if self.lang in ("en", "vi") and text[:1].islower() and not text.startswith(str(slots.get("s"))):
            text = text[0].upper() + text[1:]
        return self.finish(text)

    def note(self, day: dt.date, entries: list[tuple[str, StatementKey | None]]) -> tuple[str, dict[StatementKey, int]]:
        """A daily note of these entries (text, and the statement it is, if one); returns its text and the line
        of each statement."""
        rng, lang = self.rng, self.lang
        style = rng.choices(("bullet", "timed", "paragraph"), weights=(60, 25, 15))[0]
        section_at = len(entries) // 2 if len(entries) >= 3 and rng.random() < 0.3 else -1
        lines = [NOTE_TITLE[lang].format(y=day.year, m=day.month, d=day.day), ""]
        minutes = rng.randint(8 * 60, 10 * 60)
        lines_of: dict[StatementKey, int] = {}
        for i, (text, key) in enumerate(entries):
            if i == section_at:
                lines += ["", NOTE_SECTION[lang], ""]
            elif style == "paragraph" and i:
                lines.append("")
            minutes += rng.randint(20, 110)
            if style == "bullet":
                lines.append(f"- {text}")
            elif style == "timed":
                lines.append(f"- {minutes // 60:02d}:{minutes % 60:02d} {text}")
            else:
                lines.append(text)
            if key is not None:
                lines_of[key] = len(lines)
        return "\n".join(lines) + "\n", lines_of

    def conversation(
        self, talk: Conversation, said: dict[StatementKey, str]
    ) -> tuple[str, str, dict[StatementKey, int]]:
        """A transcript of the day's exchanges with its statements among them: (path, text, line of each)."""
        rng, lang = self.rng, self.lang
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        turns: list[tuple[str, str, StatementKey | None]] = []
        for user, assistant in rng.sample(CHATTER[lang][:-1], talk.exchanges):
            slots = self.filler_slots()
            turns += [("user", self.sentence(user, slots), None), ("assistant", self.sentence(assistant, slots), None)]
        for key in talk.statements:
            fact = self.plan.facts[key[0]]
            at = 2 * rng.randint(0, len(turns) // 2)
            if fact.by_user[key[1]]:
                told = rng.choice(SAID_BY_USER[lang]).format(t=said[key])
                pair = [("user", told, key), ("assistant", ACKNOWLEDGED[lang], None)]
            else:
                told = rng.choice(SAID_BY_ASSISTANT[lang]).format(t=said[key])
                pair = [("user", ASKED_TO_NOTE[lang].format(s=fact.subject), None), ("assistant", told, key)]
            turns[at:at] = pair
        if rng.random() < 0.5:
            closing = CHATTER[lang][-1]
            turns += [("user", closing[0], None), ("assistant", closing[1], None)]
        moment = dt.datetime.combine(talk.day, dt.time(rng.randint(9, 17), rng.randint(0, 59)))
        cwd = "/home/user/project"
        if talk.claude_code:
            records: list[dict[str, Any]] = [
                {"type": "queue-operation", "operation": "dequeue", "timestamp": _stamp(moment), "sessionId": session}
            ]
        else:
            records = [{"type": "session", "version": 3, "id": session, "timestamp": _stamp(moment), "cwd": cwd}]
        lines_of: dict[StatementKey, int] = {}
        parent = None
        for role, text, said_key in turns:
            moment += dt.timedelta(seconds=rng.randint(20, 180))
            turn_id = str(uuid.UUID(int=rng.getrandbits(128)))
            if talk.claude_code:
                content: Any = text if role == "user" else [{"type": "text", "text": text}]
                records.append(
                    {
                        "parentUuid": parent,
                        "isSidechain": False,
                        "type": role,
                        "message": {"role": role, "content": content},
                        "uuid": turn_id,
                        "timestamp": _stamp(moment),
                        "sessionId": session,
                        "cwd": cwd,
                    }
                )
            else:
                records.append(
                    {
                        "type": "message",
                        "id": turn_id[:8],
                        "parentId": parent and parent[:8],
                        "timestamp": _stamp(moment),
                        "message": {"role": role, "content": [{"type": "text", "text": text}]},
                    }
                )
            parent = turn_id
            if said_key is not None:
                lines_of[said_key] = len(records)
            if talk.claude_code and role == "user" and rng.random() < 0.3:
                snapshot = {"messageId": turn_id, "trackedFileBackups": {}, "timestamp": _stamp(moment)}
                records.append({"type": "file-history-snapshot", "messageId": turn_id, "snapshot": snapshot})
        path = f"sessions/{talk.day.isoformat()}-{session[:8]}.jsonl"
        return path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), lines_of

    def questions(self, index: int, fact: PlannedFact) -> list[Question]:
        rng, lang = self.rng, self.lang
        out = []
        plain = rng.sample(NOW[lang], 2)
        timed = rng.random() < 0.4
        for template, with_time in ((plain[0], False), (rng.choice(NOW_TIMED[lang]) if timed else plain[1], timed)):
            slots = {"s": fact.subject, "a": self.attribute_word(fact.attribute, 0.75)}
            out.append(Question(index, "now", self.sentence(template, slots), with_time))
        naming = [t for t in BEFORE[lang] if "{v}" in t]
        plain_before = [t for t in BEFORE[lang] if "{v}" not in t]
        template = rng.choice(naming if rng.random() < 0.3 else plain_before)
        slots = {"s": fact.subject, "a": self.attribute_word(fact.attribute, 0.75), "v": fact.values[-1]}
        out.append(Question(index, "before", self.sentence(template, slots)))
        return out


def _stamp(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="milliseconds") + "Z"


def build_corpus(lang: str, seed: int = SEED, fact_count: int = FACTS, phrasing: str = "varied") -> Corpus:
    """The year's notes, transcripts, facts and questions in one language (the same plan in every language)."""
    plan = plan_year(seed, fact_count)
    writer = _Writer(plan, lang, seed, phrasing)
    said: dict[StatementKey, tuple[str, str]] = {}
    for index, fact in enumerate(plan.facts):
        for order in range(len(fact.values)):
            said[index, order] = writer.statement(fact, order)
    files: dict[str, str] = {}
    placed: dict[StatementKey, tuple[str, int]] = {}
    for day, planned in plan.notes.items():
        entries: list[tuple[str, StatementKey | None]] = [
            (said[key][1], key) if key else (writer.filler(FILLERS[lang]), None) for key in planned
        ]
        writer.rng.shuffle(entries)
        path = f"memory/{day.isoformat()}.md"
        files[path], lines_of = writer.note(day, entries)
        placed.update({key: (path, line) for key, line in lines_of.items()})
    for talk in plan.conversations:
        path, files[path], lines_of = writer.conversation(talk, {k: said[k][1] for k in talk.statements})
        placed.update({key: (path, line) for key, line in lines_of.items()})
    facts, questions = [], []
    for index, fact in enumerate(plan.facts):
        statements = [
            Statement(index, order, value, day, *said[index, order], *placed[index, order])
            for order, (value, day) in enumerate(zip(fact.values, fact.days, strict=True))
        ]
        facts.append(Fact(fact.subject, fact.attribute.key, statements))
        questions += writer.questions(index, fact)
    return Corpus(lang, dict(sorted(files.items())), facts, questions)


def write_workspace(corpus: Corpus, workspace: Path) -> None:
    """The corpus's files under workspace, rewriting only what changed (a rerun finds its index up to date)."""
    for folder in ("memory", "sessions"):
        if (workspace / folder).exists():
            for path in (workspace / folder).rglob("*"):
                if path.is_file() and path.relative_to(workspace).as_posix() not in corpus.files:
                    path.unlink()
    for name, text in corpus.files.items():
        path = workspace / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def held_at(results: list[dict[str, Any]], statement: Statement) -> int | None:
    """The rank (0-based) of the first result whose chunk holds the statement's line, or None."""
    for rank, result in enumerate(results):
        if result["path"] != statement.path:
            continue
        if result["chunk_start_line"] <= statement.line <= result["chunk_end_line"]:
            return rank
    return None


def judge_now(results: list[dict[str, Any]], fact: Fact) -> tuple[bool, bool]:
    """(the current statement is held above every older one, an older one is held above the current one)."""
    below_all = len(results)
    newest = held_at(results, fact.statements[-1])
    newest_rank = below_all if newest is None else newest
    older = [held_at(results, s) for s in fact.statements[:-1]]
    best_older = min((r for r in older if r is not None), default=None)
    newest_above = newest is not None and (best_older is None or newest < best_older)
    older_first = best_older is not None and best_older < newest_rank
    return newest_above, older_first


def judge_before(results: list[dict[str, Any]], fact: Fact, top: int = BEFORE_TOP) -> bool:
    rank = held_at(results, fact.statements[-2])
    return rank is not None and rank < top


def _share(hits: list[bool]) -> float:
    return round(sum(hits) / len(hits), 4) if hits else 0.0


def score(corpus: Corpus, search: Search, mode: str) -> dict[str, Any]:
    """Every question of the corpus through `search(text, mode)` (a list of result dicts); the figures."""
    newest_above, older_first, newest_found, before_hits, took = [], [], [], [], []
    by_kind: dict[str, list[bool]] = {}
    by_timed: dict[str, list[bool]] = {}
    by_place: dict[str, list[bool]] = {}
    examples: list[dict[str, str]] = []  # one per fact
    explained: set[int] = set()
    for question in corpus.questions:
        fact = corpus.facts[question.fact]
        started = time.perf_counter()
        results = search(question.text, mode)
        took.append(time.perf_counter() - started)
        if question.kind == "before":
            before_hits.append(judge_before(results, fact))
            continue
        above, older = judge_now(results, fact)
        newest_above.append(above)
        older_first.append(older)
        newest_found.append(held_at(results, fact.statements[-1]) is not None)
        by_kind.setdefault(fact.statements[-1].kind, []).append(above)
        by_timed.setdefault("with time word" if question.timed else "without", []).append(above)
        by_place.setdefault(fact.statements[-1].path.split("/")[0], []).append(above)
        if older and len(examples) < EXAMPLES and question.fact not in explained:
            explained.add(question.fact)
            held = [(rank, s) for s in fact.statements if (rank := held_at(results, s)) is not None]
            winner = min(held, key=lambda pair: pair[0])[1]
            examples.append(
                {
                    "question": question.text,
                    "current": f"{fact.statements[-1].day} {fact.statements[-1].text}",
                    "ranked_first": f"{winner.day} {winner.text}",
                }
            )
    above_when_found = [above for above, found in zip(newest_above, newest_found, strict=True) if found]
    return {
        "now_questions": len(newest_above),
        "now_newest_above_older": _share(newest_above),
        "now_older_first": _share(older_first),
        "now_newest_in_top10": _share(newest_found),
        "now_newest_above_older_when_in_top10": _share(above_when_found),
        "before_questions": len(before_hits),
        "before_top3": _share(before_hits),
        "p50_ms": round(median(took) * 1000, 2),
        "now_newest_above_older_by_phrasing": {kind: _share(hits) for kind, hits in sorted(by_kind.items())},
        "now_newest_above_older_by_time_word": {name: _share(hits) for name, hits in sorted(by_timed.items())},
        "now_newest_above_older_by_place": {name: _share(hits) for name, hits in sorted(by_place.items())},
        "older_first_examples": examples,
    }


def measure(corpus: Corpus, root: Path, modes: tuple[str, ...], embedding: EmbeddingConfig) -> dict[str, Any]:
    """Index the corpus in-process under root and score it in each mode."""
    workspace = root / "workspace"
    write_workspace(corpus, workspace)
    agent = quickstart_agent(
        workspace,
        root / "data",
        sources=("memory", "sessions"),
        sessions_dirs=(workspace / "sessions",),
        embedding=embedding,
    )
    statements = sum(len(f.statements) for f in corpus.facts)
    out: dict[str, Any] = {
        "notes": sum(p.startswith("memory/") for p in corpus.files),
        "transcripts": sum(p.startswith("sessions/") for p in corpus.files),
        "facts": len(corpus.facts),
        "statements": statements,
        "in_transcripts": sum(s.path.startswith("sessions/") for f in corpus.facts for s in f.statements),
    }
    with AgentMemory(agent) as memory:
        started = time.perf_counter()
        stale = memory.needs_reindex()
        report = memory.reindex() if stale else memory.sync()
        out["index_s"] = round(time.perf_counter() - started, 1)
        out["embedded"] = report.embedded
        out["chunks"] = memory.store.counts()["chunks"]
        print(f"  [{corpus.lang}] indexed {out['chunks']} chunks in {out['index_s']} s", flush=True)
        degraded: Counter[str] = Counter()

        def search(text: str, mode: str) -> list[dict[str, Any]]:
            response = memory.search(text, mode=mode, max_results=K)
            if response.mode != mode or response.degraded:
                degraded[f"{response.mode}: {response.degraded}"] += 1
            return response.as_dict()["results"]

        for mode in modes:
            degraded.clear()
            out[mode] = score(corpus, search, mode)
            if degraded:
                out[mode]["degraded"] = dict(degraded)
                print(f"  [{corpus.lang}] {mode} searches DEGRADED: {dict(degraded)}", flush=True)
            print(f"  [{corpus.lang}] {figures_line(out[mode], mode)}", flush=True)
    return out


def _floor(name: str, value: float) -> str:
    op, bound = FLOORS[name]
    ok = value >= bound if op == ">=" else value <= bound
    return f"({'meets' if ok else 'MISSES'} {op} {bound})"


def figures_line(row: dict[str, Any], mode: str) -> str:
    return (
        f"{mode:8s} now: newest above older {row['now_newest_above_older']:.3f} "
        f"{_floor('now_newest_above_older', row['now_newest_above_older'])}, older first "
        f"{row['now_older_first']:.3f} {_floor('now_older_first', row['now_older_first'])}; before: top-3 "
        f"{row['before_top3']:.3f} {_floor('before_top3', row['before_top3'])}; p50 {row['p50_ms']} ms"
    )


def model_file(name: str = "") -> Path:
    """The default local model's file, or the prepared model `name`'s."""
    from memoryd.embeddings.models.prepare import model_path

    data_dir = Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())
    return model_path(data_dir, name) if name else default_model_path(data_dir)


def run(
    langs: tuple[str, ...] = LANGUAGES,
    modes: tuple[str, ...] = MODES,
    fact_count: int = FACTS,
    seed: int = SEED,
    work: Path = CACHE,
    model_name: str = "",
    phrasings: tuple[str, ...] = PHRASINGS,
    fresh: bool = False,
) -> dict[str, Any]:
    """Each phrasing's figures: "varied" at the top level (`languages`), "asked" under `asked`; `fresh`: the indexes
    of these sets are built again (the others' are kept)."""
    model = model_file(model_name)
    if any(mode != "keyword" for mode in modes) and not model.is_file():
        raise SystemExit(
            f"bench knowledge: no local model at {model} (run: memoryd model prepare); hybrid search cannot be "
            "measured without it (--modes keyword measures keyword search alone)"
        )
    embedding = EmbeddingConfig(provider="local", model_path=str(model))
    if modes == ("keyword",):
        embedding = EmbeddingConfig(provider="none")
    out: dict[str, Any] = {"seed": seed, "facts": fact_count, "k": K, "floors": FLOORS}
    started = time.perf_counter()
    label = embedding.provider + (f"-{model_name}" if model_name and embedding.provider != "none" else "")
    for phrasing in phrasings:
        found = out.setdefault("asked", {}) if phrasing == "asked" else out
        found["languages"] = {}
        for lang in langs:
            corpus = build_corpus(lang, seed, fact_count, phrasing)
            suffix = "" if phrasing == "varied" else f"-{phrasing}"
            root = work / "knowledge" / f"{lang}-{fact_count}-{seed}-{label}{suffix}"
            if fresh:
                shutil.rmtree(root, ignore_errors=True)
            print(f"[{lang}, {phrasing}] {len(corpus.files)} files, {len(corpus.questions)} questions", flush=True)
            found["languages"][lang] = measure(corpus, root, modes, embedding)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


TARGETS = {
    "knowledge now: newest above older, hybrid, worst language": (">=", 0.95),
    "knowledge now: older first, hybrid, worst language": ("<=", 0.02),
    "knowledge before: previous in top 3, hybrid, worst language": (">=", 0.90),
    "knowledge as asked, now: newest above older, hybrid, worst language": (">=", 0.95),
    "knowledge as asked, now: older first, hybrid, worst language": ("<=", 0.02),
    "knowledge as asked, before: previous in top 3, hybrid, worst language": (">=", 0.90),
}


def _worst(found: dict[str, Any], mode: str, key: str, highest: bool = False) -> float | None:
    values = [row[mode][key] for row in found.get("languages", {}).values() if mode in row]
    if not values:
        return None
    return max(values) if highest else min(values)


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part (absent ones None)."""
    names = list(TARGETS)
    out = {}
    for first, figures in ((0, found), (3, found.get("asked", {}))):
        out[names[first]] = _worst(figures, "hybrid", "now_newest_above_older")
        out[names[first + 1]] = _worst(figures, "hybrid", "now_older_first", highest=True)
        out[names[first + 2]] = _worst(figures, "hybrid", "before_top3")
    return out


def markdown(found: dict[str, Any]) -> list[str]:
    """bench report's section."""
    lines = [
        "## Knowledge updates (`python -m bench knowledge`)",
        "",
        f"A synthetic year of daily notes and transcripts per language, {found.get('facts')} facts stated 2 to 4 "
        "times each; each fact asked what holds now (twice) and what was used before (once), max_results "
        f"{found.get('k')}. Floors (issue 45): newest above older >= 0.95, older first <= 0.02, before top-3 >= 0.90. "
        "Varied: statements name the attribute by a synonym half the time and a fifth of them by no name at all; as "
        "asked: every statement and question names it by its first name.",
        "",
        "| phrasing | lang | mode | now: newest above older | now: older first | now: newest in top 10 | now: newest "
        "above older, when in top 10 | before: top 3 | p50 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for phrasing, figures in (("varied", found), ("as asked", found.get("asked", {}))):
        for lang, row in figures.get("languages", {}).items():
            for mode in MODES:
                r = row.get(mode)
                if r:
                    lines.append(
                        f"| {phrasing} | {lang} | {mode} | {r['now_newest_above_older']} | {r['now_older_first']} | "
                        f"{r['now_newest_in_top10']} | {r['now_newest_above_older_when_in_top10']} | "
                        f"{r['before_top3']} | {r['p50_ms']} |"
                    )
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m bench.knowledge", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--langs", default=",".join(LANGUAGES))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--phrasings", default=",".join(PHRASINGS))
    parser.add_argument("--facts", type=int, default=FACTS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_FACTS} facts instead of {FACTS}")
    parser.add_argument("--fresh", action="store_true", help="rebuild these sets' indexes (else they are reused)")
    parser.add_argument("--model", default="", help="a prepared local model (default: multilingual-e5-small)")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    facts = QUICK_FACTS if args.quick else args.facts
    langs, modes = tuple(args.langs.split(",")), tuple(args.modes.split(","))
    phrasings = tuple(args.phrasings.split(","))
    if unknown := set(phrasings) - set(PHRASINGS):
        parser.error(f"unknown phrasing {sorted(unknown)}: choose from {', '.join(PHRASINGS)}")
    results = run(langs, modes, facts, args.seed, args.workdir, args.model, phrasings, args.fresh)
    print("\n".join(markdown(results)))
    print(f"{results['seconds']} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return results


if __name__ == "__main__":
    main()
