"""What was forgotten that memoryd may not delete: transcripts belong to the agent platform and are never edited,
so their forgotten turns are kept out of the index by this record, and so is a forgotten note's text wherever a
transcript repeats it.

`<agent dir>/forgotten.json` (0600), a file a person can read: for each transcript the lines left out, for each
forgotten turn the hash of its words (so that a copy of it, or the transcript renamed at a session reset, stays out
too), and for each forgotten passage the hashes of its word runs (never any text). Sync reads it for every
transcript it indexes; `get` masks the same lines."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from memoryd.durable import private_folder, replace_privately
from memoryd.settings import AgentConfig
from memoryd.sources.entries import words
from memoryd.sources.transcripts import BadLine, Turn, parse_line

FORGOTTEN = "[forgotten]"
SHARED_SECONDS = 1.0  # how often the shared store's copy is read again
SHINGLE = 5  # words per hashed run
MIN_SHINGLES = 2  # a passage shorter than this many runs is matched whole
MATCH_SHARE = 0.8  # a transcript line holding this share of a passage's runs holds the passage
MIN_PASSAGE_WORDS = 4  # shorter lines ("- yes", a heading) are too common to keep out of every transcript
MIN_TURN_WORDS = 3  # a forgotten turn is kept out of other transcripts (a copy, a rotated file) from this length


def _hash(run: Iterable[str]) -> str:
    return hashlib.blake2b(" ".join(run).encode("utf-8"), digest_size=8).hexdigest()


def shingles(tokens: list[str]) -> set[str]:
    if len(tokens) < SHINGLE + MIN_SHINGLES - 1:
        return {_hash(tokens)} if tokens else set()
    return {_hash(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


@dataclass
class Record:
    transcripts: dict[str, list[int]] = field(default_factory=dict)  # path -> forgotten lines
    passages: list[dict[str, Any]] = field(default_factory=list)  # {"runs": [...], "whole": bool, "from": citation}
    turns: list[dict[str, Any]] = field(default_factory=list)  # {"hash": ..., "from": change}: forgotten turns' words


class ForgetRecord:
    """The record, re-read when the file changes (another daemon of the namespace, a person's edit)."""

    def __init__(self, path: Path, shared: Shared | None = None) -> None:
        self.path = path
        self.shared = shared  # the namespace's copy in a shared store, which every daemon of it reads and writes
        self._shared_seen: tuple[float, str | None] = (0.0, None)
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int, int] | None = None
        self._record = Record()
        self._index: dict[str, list[int]] = {}  # run -> passages holding it
        self._turns: set[str] = set()  # the forgotten turns' hashes

    def _shared_text(self) -> str | None:
        """The shared store's copy, read at most once a SHARED_SECONDS (a sync asks for it line by line)."""
        if self.shared is None:
            return None
        read_at, text = self._shared_seen
        if time.monotonic() - read_at >= SHARED_SECONDS:
            with contextlib.suppress(Exception):  # a store that cannot be read now: what was read last stands
                text = self.shared.read()
            self._shared_seen = (time.monotonic(), text)
        return text

    def _fresh(self) -> Record:
        try:
            stat = os.stat(self.path)
            # the inode too: each save is a new file, and two saves within the clock's step may have one size, time
            key: tuple[Any, ...] = (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size)
        except FileNotFoundError:
            key = ()
        shared = self._shared_text()
        key = (*key, shared)
        if key != self._seen:
            try:
                record = _parsed(json.loads(self.path.read_text("utf-8"))) if len(key) > 1 else Record()
            except FileNotFoundError:
                record = Record()
            except (OSError, ValueError, TypeError, AttributeError):
                record = self._record  # a half-written or hand-broken file: keep what was known
            if shared:
                with contextlib.suppress(ValueError, TypeError, AttributeError):  # a copy another daemon broke
                    _merge(record, json.loads(shared))
            self._record, self._seen = record, key
            self._index = {}
            self._turns = {t["hash"] for t in record.turns}
            for number, passage in enumerate(record.passages):
                for run in passage["runs"]:
                    self._index.setdefault(run, []).append(number)
        return self._record

    @property
    def empty(self) -> bool:
        with self._lock:
            record = self._fresh()
            return not record.transcripts and not record.passages and not record.turns

    def lines(self, path: str) -> set[int]:
        with self._lock:
            return set(self._fresh().transcripts.get(path, ()))

    def leave_out(self, path: str, turns: list[Turn]) -> list[Turn]:
        """A transcript's turns without its forgotten lines, and without the lines of a turn that repeat a
        forgotten passage (a turn left with nothing is dropped)."""
        if self.empty:
            return turns
        lines = self.lines(path)
        kept = []
        for turn in turns:
            if turn.line in lines or self.forgotten_turn(turn.text):
                continue
            text = "\n".join(line for line in turn.text.split("\n") if not self.holds_forgotten(line))
            if text.strip():
                kept.append(turn if text == turn.text else replace(turn, text=text))
        return kept

    def without_passages(self, text: str) -> str:
        """A note's text with each line that holds a forgotten passage blanked (its lines keep their numbers): a
        copy of forgotten text in another note, or in a team member's copy of the notes that has not caught up."""
        with self._lock:
            if not self._fresh().passages:
                return text
        lines = text.split("\n")
        kept = ["" if line.strip() and self.holds_forgotten(line) else line for line in lines]
        return text if kept == lines else "\n".join(kept)

    def masked(self, path: str, first: int, lines: list[str]) -> list[str]:
        """A transcript's lines as `get` shows them: forgotten ones, and those repeating a forgotten passage,
        replaced by a marker."""
        gone = self.lines(path)
        return [
            FORGOTTEN if first + i in gone or self._repeats(line, first + i) else line for i, line in enumerate(lines)
        ]

    def _repeats(self, raw: str, number: int) -> bool:
        """Whether a transcript's line repeats a forgotten turn (its copy, or the transcript renamed) or passage:
        its turn's text read line by line, as `leave_out` reads it (never the raw JSON, whose escapes glue words
        together and spell other scripts as `\\uXXXX`)."""
        try:
            turn = parse_line(raw, number)
        except BadLine:
            return self.holds_forgotten(raw)  # not a turn memoryd reads: the line as it stands
        if turn is None:  # no turn (tool output, metadata): the line as it stands
            return self.holds_forgotten(raw)
        return self.forgotten_turn(turn.text) or any(self.holds_forgotten(line) for line in turn.text.split("\n"))

    def forgotten_turn(self, text: str) -> bool:
        """Whether a turn says what a forgotten turn said, word for word (wherever it is now)."""
        key = turn_key(text)
        with self._lock:
            self._fresh()
            return key is not None and key in self._turns

    def holds_forgotten(self, text: str) -> bool:
        """Whether a line repeats a forgotten passage."""
        with self._lock:
            return bool(self._holding(text))

    def _holding(self, text: str) -> set[int]:
        """The forgotten passages a line holds (by number; the caller holds the lock)."""
        record = self._fresh()
        if not record.passages:
            return set()
        tokens = words(text)
        if not tokens:
            return set()
        whole = _hash(tokens)
        counts: dict[int, int] = {}
        for run in shingles(tokens) | {whole}:
            for number in self._index.get(run, ()):
                counts[number] = counts.get(number, 0) + 1
        found = set()
        for number, count in counts.items():
            passage = record.passages[number]
            if whole in passage["runs"] if passage.get("whole") else count >= MATCH_SHARE * len(passage["runs"]):
                found.add(number)
        return found

    def add(
        self,
        *,
        transcript: str | None = None,
        lines: Iterable[int] = (),
        passages: Iterable[str] = (),
        turns: Iterable[str] = (),
        source: str | None = None,
    ) -> None:
        with self._lock:
            record = self._fresh()
            if transcript is not None:
                record.transcripts[transcript] = sorted(set(record.transcripts.get(transcript, [])) | set(lines))
            for text in turns:
                if (key := turn_key(text)) is not None:
                    record.turns.append({"hash": key, "from": source})
            for text in passages:
                for line in text.split("\n"):
                    tokens = words(line)
                    if len(tokens) < MIN_PASSAGE_WORDS:
                        continue
                    runs = shingles(tokens)
                    whole = len(tokens) < SHINGLE + MIN_SHINGLES - 1
                    record.passages.append(
                        {"runs": sorted(runs), "whole": whole, "from": source, "time": round(time.time())}
                    )
            self._save(record)

    def release(self, text: str) -> bool:
        """Take out of the record the passages `text` holds (it is being written again, on purpose: it must be
        found); whether there were any."""
        with self._lock:
            record = self._fresh()
            held = {n for line in text.split("\n") for n in self._holding(line)}
            if not held:
                return False
            record.passages = [p for n, p in enumerate(record.passages) if n not in held]
            self._save(record)
            return True

    def remove(self, *, transcript: str | None = None, lines: Iterable[int] = (), source: str | None = None) -> None:
        """Take lines (an undone forget of a transcript) or a source's passages out of the record."""
        with self._lock:
            record = self._fresh()
            if transcript is not None:
                kept = sorted(set(record.transcripts.get(transcript, [])) - set(lines))
                if kept:
                    record.transcripts[transcript] = kept
                else:
                    record.transcripts.pop(transcript, None)
            if source is not None:
                record.passages = [p for p in record.passages if p.get("from") != source]
                record.turns = [t for t in record.turns if t.get("from") != source]
            self._save(record)

    def merge(self, other: Path) -> None:
        """Take in what another record holds (the record of an index moved here from elsewhere)."""
        raw = json.loads(other.read_text("utf-8"))
        with self._lock:
            record = self._fresh()
            _merge(record, raw)
            self._save(record)

    def _save(self, record: Record) -> None:
        private_folder(self.path.parent)
        data = {
            "about": "what memoryd keeps out of its index that it may not delete (transcripts); "
            "turns and passages are hashes of forgotten words, never their text",
            "transcripts": record.transcripts,
            "passages": record.passages,
            "turns": record.turns,
        }
        encoded = json.dumps(data, ensure_ascii=False, indent=1)
        replace_privately(self.path, encoded.encode("utf-8"))
        if self.shared is not None:  # the record as this daemon now holds it, the namespace's copy merged in
            try:
                self.shared.write(encoded)
                self._shared_seen = (time.monotonic(), encoded)
            except Exception:  # a standby or a reader cannot write the store: its own record still holds
                pass
        self._seen = None  # re-read (and re-index) at the next use


class Shared(Protocol):
    """Where a shared store keeps the namespace's record (PostgreSQL's meta table), so that every daemon of the
    namespace leaves out what any of them forgot, and a standby that takes over does too."""

    def read(self) -> str | None: ...
    def write(self, text: str) -> None: ...


def _parsed(raw: dict[str, Any]) -> Record:
    return Record(
        {str(k): sorted(int(n) for n in v) for k, v in dict(raw.get("transcripts", {})).items()},
        [p for p in raw.get("passages", []) if isinstance(p, dict) and p.get("runs")],
        [t for t in raw.get("turns", []) if isinstance(t, dict) and isinstance(t.get("hash"), str)],
    )


def _merge(record: Record, raw: dict[str, Any]) -> None:
    """Add what another record holds to `record` (nothing twice)."""
    other = _parsed(raw)
    for path, numbers in other.transcripts.items():
        record.transcripts[path] = sorted(set(record.transcripts.get(path, [])) | set(numbers))
    known = {json.dumps(p, sort_keys=True) for p in record.passages}
    record.passages += [p for p in other.passages if json.dumps(p, sort_keys=True) not in known]
    record.turns += [t for t in other.turns if t not in record.turns]


def turn_key(text: str) -> str | None:
    """A forgotten turn's hash: of its words, case-folded (None for a turn too short to tell from others)."""
    tokens = words(text)
    return _hash(tokens) if len(tokens) >= MIN_TURN_WORDS else None


def record_path(agent: AgentConfig) -> Path:
    """The agent's record, beside its index (`<data_dir>/agents/<id>/forgotten.json` by default)."""
    return agent.store.parent / "forgotten.json"
