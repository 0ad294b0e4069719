"""Conversation recall on LoCoMo (dev): does a question find the turn that answers it?

Each of the five conversations becomes one agent, laid out two ways:
- notes: one dated Markdown note per session, one line per turn (`Speaker: text`);
- transcripts: one OpenClaw `.jsonl` per session in the agent's sessions_dir, with timestamps and speaker names.

Every question but the adversarial ones (category 5) is asked through the daemon's `search` RPC with
max_results 5. Session R@5: a result comes from a session that holds an evidence turn. Turn R@5: a returned
chunk's lines contain an evidence turn (and, stricter, a result's citation lines do). MRR@5 is at turn level.
In the same run, plain SQLite FTS5 `bm25()` with all query words OR-ed is scored on memoryd's own chunks and
on ~1,600-character chunks of its own. The data is CC BY-NC (evaluation only): it is read from ../shared, never
copied into the project.

python -m bench.conversations                 # notes and transcripts, keyword/vector/hybrid
python -m bench.conversations --layouts notes --modes keyword
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from bench.beir import CACHE
from bench.datasets import SHARED
from bench.harness import BenchAgent, start_daemon

K = 5
MODES = ("keyword", "vector", "hybrid")
BASELINE_CHARS = 1600


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str


@dataclass
class Session:
    number: int
    when: dt.datetime
    turns: list[Turn]


@dataclass
class Conversation:
    id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[tuple[str, set[str]]]  # (question, evidence dia_ids)
    # filled by a layout: dia_id -> (display path, line), and session number -> display path
    turn_at: dict[str, tuple[str, int]] = field(default_factory=dict)
    session_path: dict[int, str] = field(default_factory=dict)


def _when(text: str) -> dt.datetime:
    return dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def _turn_text(raw: dict[str, Any]) -> str:
    text = str(raw.get("text", "")).strip()
    if raw.get("blip_caption"):
        text += f" [shares a photo: {raw['blip_caption']}]"
    return text


def _evidence(items: list[Any]) -> set[str]:
    out: set[str] = set()
    for item in items:
        out.update(re.findall(r"D\d+:\d+", str(item)))
    return out


def load_locomo() -> list[Conversation]:
    data = json.loads((SHARED / "data" / "locomo" / "locomo-dev.json").read_text(encoding="utf-8"))
    conversations = []
    for sample in data:
        conv = sample["conversation"]
        sessions = []
        for key, turns in conv.items():
            match = re.fullmatch(r"session_(\d+)", key)
            if not match or not isinstance(turns, list):
                continue
            number = int(match.group(1))
            sessions.append(
                Session(
                    number,
                    _when(conv[f"session_{number}_date_time"]),
                    [Turn(t["dia_id"], t["speaker"], _turn_text(t)) for t in turns],
                )
            )
        sessions.sort(key=lambda s: s.number)
        questions = [(q["question"], _evidence(q["evidence"])) for q in sample["qa"] if q.get("category") != 5]
        questions = [(q, ev) for q, ev in questions if ev]
        conversations.append(
            Conversation(sample["sample_id"], (conv["speaker_a"], conv["speaker_b"]), sessions, questions)
        )
    return conversations


def write_notes(conv: Conversation, workspace: Path) -> None:
    folder = workspace / "memory" / "conversations"
    folder.mkdir(parents=True, exist_ok=True)
    for session in conv.sessions:
        name = f"{session.when:%Y-%m-%d}-session-{session.number:02d}.md"
        display = f"memory/conversations/{name}"
        title = f"# {conv.speakers[0]} and {conv.speakers[1]}, session {session.number}"
        lines = [title, "", f"{session.when:%A %-d %B %Y, %-I:%M %p}", ""]
        for turn in session.turns:
            lines.append(f"{turn.speaker}: {turn.text}")
            conv.turn_at[turn.dia_id] = (display, len(lines))
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        conv.session_path[session.number] = display


def write_transcripts(conv: Conversation, sessions_dir: Path, workspace: Path) -> None:
    sessions_dir.mkdir(parents=True, exist_ok=True)
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    roles = {conv.speakers[0]: "user", conv.speakers[1]: "assistant"}
    for session in conv.sessions:
        path = sessions_dir / f"session-{session.number:02d}.jsonl"
        display = str(path.resolve())
        lines = [
            json.dumps({"type": "session", "id": f"{conv.id}-{session.number}", "timestamp": session.when.isoformat()})
        ]
        for i, turn in enumerate(session.turns):
            stamp = (session.when + dt.timedelta(seconds=30 * i)).isoformat() + "Z"
            message = {
                "role": roles.get(turn.speaker, "user"),
                "name": turn.speaker,
                "content": [{"type": "text", "text": turn.text}],
            }
            lines.append(json.dumps({"type": "message", "timestamp": stamp, "message": message}, ensure_ascii=False))
            conv.turn_at[turn.dia_id] = (display, len(lines))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        conv.session_path[session.number] = display


def judge(conv: Conversation, results: list[tuple[str, int, int]], evidence: set[str]) -> tuple[bool, bool, float]:
    """(session hit, turn hit, reciprocal rank of the first turn hit) for results as (path, start, end)."""
    places = [conv.turn_at[e] for e in evidence if e in conv.turn_at]
    sessions = {p for p, _ in places}
    session_hit = any(path in sessions for path, _, _ in results)
    rr = 0.0
    for rank, (path, start, end) in enumerate(results, 1):
        if any(path == p and start <= line <= end for p, line in places):
            rr = 1.0 / rank
            break
    return session_hit, rr > 0, rr


class PlainFTS:
    """The baseline: SQLite FTS5 with its default tokenizer, bm25(), every query word OR-ed."""

    def __init__(self, chunks: list[tuple[str, int, int, str]]) -> None:
        self.chunks = chunks
        self.db = apsw.Connection(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE fts USING fts5(text)")
        with self.db:
            self.db.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)", [(i, c[3]) for i, c in enumerate(chunks)])

    def search(self, question: str, limit: int) -> list[tuple[str, int, int]]:
        words = re.findall(r"\w+", question)
        if not words:
            return []
        expression = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?", (expression, limit)
        )
        return [self.chunks[r[0]][:3] for r in rows]


def own_chunks(conv: Conversation, size: int = BASELINE_CHARS) -> list[tuple[str, int, int, str]]:
    """Each session's turn lines packed into chunks of about `size` characters."""
    by_path: dict[str, list[tuple[int, str]]] = {}
    for session in conv.sessions:
        for turn in session.turns:
            path, line = conv.turn_at[turn.dia_id]
            by_path.setdefault(path, []).append((line, f"{turn.speaker}: {turn.text}"))
    chunks = []
    for path, lines in by_path.items():
        current: list[tuple[int, str]] = []
        for line in lines:
            if current and sum(len(t) for _, t in current) + len(line[1]) > size:
                chunks.append((path, current[0][0], current[-1][0], "\n".join(t for _, t in current)))
                current = []
            current.append(line)
        if current:
            chunks.append((path, current[0][0], current[-1][0], "\n".join(t for _, t in current)))
    return chunks


def memoryd_chunks(index: Path) -> list[tuple[str, int, int, str]]:
    db = apsw.Connection(str(index), flags=apsw.SQLITE_OPEN_READONLY)
    rows = list(
        db.execute("SELECT f.path, c.start_line, c.end_line, c.text FROM chunks c JOIN files f ON f.id = c.file_id")
    )
    db.close()
    return [(str(p), int(s), int(e), str(t)) for p, s, e, t in rows]


def score_rows(rows: list[tuple[bool, bool, float]]) -> dict[str, float]:
    n = max(len(rows), 1)
    return {
        "session_r@5": round(sum(r[0] for r in rows) / n, 4),
        "turn_r@5": round(sum(r[1] for r in rows) / n, 4),
        "turn_mrr@5": round(sum(r[2] for r in rows) / n, 4),
    }


def measure(layout: str, modes: list[str], work: Path, model_path: Path | None = None) -> dict[str, Any]:
    root = work / "locomo" / layout
    shutil.rmtree(root / "workspaces", ignore_errors=True)
    conversations = load_locomo()
    agents = []
    for conv in conversations:
        workspace = root / "workspaces" / conv.id
        if layout == "notes":
            write_notes(conv, workspace)
            agents.append(BenchAgent(conv.id, workspace))
        else:
            sessions = root / "workspaces" / f"{conv.id}-sessions"
            write_transcripts(conv, sessions, workspace)
            agents.append(BenchAgent(conv.id, workspace, sessions))
    label = model_path.stem if model_path else "default"
    data = root / f"data-{label}"
    daemon = start_daemon(agents[0].workspace, data, agents=agents, model_path=model_path)
    out: dict[str, Any] = {"questions": sum(len(c.questions) for c in conversations)}
    try:
        daemon.wait_idle()
        with daemon.client() as client:
            for mode in modes:
                chunk_rows, cite_rows = [], []
                for conv in conversations:
                    for question, evidence in conv.questions:
                        found = client.search(question, agent=conv.id, mode=mode, max_results=K)
                        chunk_rows.append(
                            judge(
                                conv, [(r.path, r.chunk_start_line, r.chunk_end_line) for r in found.results], evidence
                            )
                        )
                        cite_rows.append(
                            judge(conv, [(r.path, r.start_line, r.end_line) for r in found.results], evidence)
                        )
                out[mode] = score_rows(chunk_rows)
                out[f"{mode}_citations"] = score_rows(cite_rows)
                print(f"  [{layout}] {mode:18s} {out[mode]}", flush=True)
                print(f"  [{layout}] {mode + ' (citations)':18s} {out[f'{mode}_citations']}", flush=True)
    finally:
        daemon.stop()
    for name, chunker in (("plain_fts5_same_chunks", None), ("plain_fts5_1600_chars", own_chunks)):
        rows = []
        for conv in conversations:
            chunks = chunker(conv) if chunker else memoryd_chunks(data / "agents" / conv.id / "index.sqlite")
            baseline = PlainFTS(chunks)
            for question, evidence in conv.questions:
                rows.append(judge(conv, baseline.search(question, K), evidence))
        out[name] = score_rows(rows)
        print(f"  [{layout}] {name:18s} {out[name]}", flush=True)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layouts", default="notes,transcripts")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--model-path", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = {
        layout: measure(layout, args.modes.split(","), args.workdir, args.model_path)
        for layout in args.layouts.split(",")
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
