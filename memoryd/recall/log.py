"""The recall log: what automatic recall put before which prompt, per agent and session, and (briefly) the prompts
it put nothing before and why. So a user can see why an agent "knew" something, and forget a memory that should not
have been shown (`memctl recall --log`, then `memctl forget <citation>`).

One JSON object a line in `<data_dir>/recall/log.jsonl` (0600, in a 0700 folder):

    {"time": 1764000000.123, "agent": "main", "session": "cc-1", "client": "claude-code",
     "prompt": "which database does Alice prefer for billing?",
     "memories": [{"citation": "memory/2026-11-24.md#L3-L3", "score": 0.91, "date": "2026-11-24"}],
     "tokens": 61, "skipped": null}

`prompt` is the prompt's first EXCERPT_CHARS characters after the agent's redaction (memory.syncer.redact, as the
recalled snippets had), its whitespace and control characters made single spaces. A memory's `date` is the one
recall showed with it, else the date its note's file name carries, else null. An entry that put nothing has no
memories and `skipped` says why. At MAX_FILE_BYTES the file becomes `log.jsonl.1` (the one before it is dropped):
at most twice that is kept, across restarts.

A recall only hands its entry to a queue (about 2 microseconds); the log's own thread formats, redacts and appends
it (O_APPEND, no fsync: the log is a record, not a source of truth) BATCH_SECONDS later, with whatever came
meanwhile. A recall finding the queue full (the disk stalled) drops its entry and counts it rather than wait; a
read first waits for what is queued."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import os
import queue
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from memoryd.durable import private_folder
from memoryd.sources.metadata import note_date

log = structlog.get_logger("memoryd.recall")

FOLDER = "recall"  # under the data dir
NAME = "log.jsonl"
MAX_FILE_BYTES = 2_621_440  # 2.5 MiB, some 4,000 recalls that gave memories: the log keeps at most twice this
EXCERPT_CHARS = 120  # of the prompt
REDACT_CHARS = 2000  # of the prompt redacted for its excerpt (all of it when masks shrank that below 2 excerpts)
KEPT_CHARS = 4 * REDACT_CHARS  # of the prompt, handed to the writer
MAX_WAITING = 4096  # entries queued for the writer; past this a recall's entry is dropped
FLUSH_SECONDS = 2.0  # how long a read waits for the entries queued before it
BATCH_SECONDS = 0.05  # the writer waits this long after an entry for more: a busy daemon's recalls then do not
# wait for the GIL behind it one by one (measured: 330 us added to back-to-back recalls without it)


@dataclass
class Counts:
    """One agent's entries in one file: recalls that gave memories, those that gave nothing, the last that gave."""

    recalls: int = 0
    skipped: int = 0
    last: float | None = None

    def count(self, entry: dict[str, Any]) -> None:
        if entry.get("skipped"):
            self.skipped += 1
        else:
            self.recalls += 1
            self.last = max(self.last or 0.0, float(entry.get("time") or 0.0))


# what a recall hands the writer: time, agent, session, client, prompt, redactor, memories, tokens, skipped
_Item = tuple[float, str, str | None, str | None, str, Callable[[str], str], Sequence[Any], int, str | None]


def plain(text: str) -> str:
    """Whitespace runs and characters a terminal would act on (controls, bidirectional marks) as single spaces."""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(text.split())


def excerpt(prompt: str, redact: Callable[[str], str]) -> str:
    """The prompt's start, secrets masked, within EXCERPT_CHARS. Only its first REDACT_CHARS are redacted, unless
    masks shrank them so much that the cut could fall inside the excerpt (a secret cut in two is not recognised)."""
    masked = redact(prompt[:REDACT_CHARS])
    if len(prompt) > REDACT_CHARS and len(masked) < 2 * EXCERPT_CHARS:
        masked = redact(prompt)
    text = plain(masked[: 4 * EXCERPT_CHARS])
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"


def _date(citation: str) -> str | None:
    return _note_day(citation.partition("#")[0])


@functools.lru_cache(maxsize=4096)  # the same notes come back recall after recall
def _note_day(path: str) -> str | None:
    stamp = note_date(path)
    return None if stamp is None else dt.datetime.fromtimestamp(stamp, dt.timezone.utc).strftime("%Y-%m-%d")


def _entry(item: _Item) -> dict[str, Any]:
    when, agent, session, client, prompt, redact, memories, tokens, skipped = item
    return {
        "time": round(when, 3),
        "agent": agent,
        "session": plain(session) if session else None,
        "client": client,
        "prompt": excerpt(prompt, redact),
        "memories": [
            {"citation": m.citation, "score": round(m.score, 4), "date": m.when or _date(m.citation)} for m in memories
        ],
        "tokens": tokens,
        "skipped": skipped,
    }


class RecallLog:
    """The daemon's recall log in `folder` (None: a log that keeps nothing), written by a thread of its own."""

    def __init__(self, folder: Path | None, max_bytes: int = MAX_FILE_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.dropped = 0  # entries lost to a full queue or a failed write
        self._queue: queue.Queue[_Item | None] = queue.Queue(MAX_WAITING)
        self._fd: int | None = None
        self._bytes = 0  # of the current file
        self._lock = threading.Lock()  # the counts
        self._counts: tuple[dict[str, Counts], dict[str, Counts]] = ({}, {})  # the older file's, the current one's
        self._failed: str | None = None
        self._hurry = threading.Event()  # a read or close wants the queue written now
        self._thread: threading.Thread | None = None
        if folder is not None:
            self._thread = threading.Thread(target=self._run, name="recall-log", daemon=True)
            self._thread.start()

    @property
    def path(self) -> Path | None:
        return None if self.folder is None else self.folder / NAME

    # -- the recall's side: hand the entry over ------------------------------------------------------------

    def add(
        self,
        agent: str,
        session: str | None,
        client: str | None,
        prompt: str,
        redact: Callable[[str], str],
        memories: Sequence[Any],
        tokens: int,
        skipped: str | None,
    ) -> None:
        """Log one recall: `memories` are what it gave (each with a citation and score), or `skipped` why not."""
        if self._thread is None:
            return
        if len(prompt) > KEPT_CHARS:  # a queue held up by a stalled disk holds no megabytes of pasted logs
            prompt = prompt[:KEPT_CHARS]
        try:
            self._queue.put_nowait((time.time(), agent, session, client, prompt, redact, memories, tokens, skipped))
        except queue.Full:
            self.dropped += 1

    # -- the writer's side ------------------------------------------------------------------------------------

    def _run(self) -> None:
        self._load()
        while True:
            items = [self._queue.get()]
            if items[0] is not None:  # let recalls that come close together be written as one batch, after them
                self._hurry.wait(BATCH_SECONDS)
                self._hurry.clear()
            with contextlib.suppress(queue.Empty):
                while len(items) < MAX_WAITING:
                    items.append(self._queue.get_nowait())
            stop = None in items
            try:
                self._write([i for i in items if i is not None])
            finally:
                for _ in items:
                    self._queue.task_done()
            if stop:
                return

    def _write(self, items: list[_Item]) -> None:
        """Append the entries, moving to a new file where the next one would take this one past `max_bytes`."""
        written = 0
        try:
            entries = [_entry(item) for item in items]
            lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for e in entries]
            self._open()
            run, pending = 0, 0  # the first line not yet written, and the bytes from it to the current one
            for i, line in enumerate(lines):
                if self._bytes + pending + len(line) > self.max_bytes and (pending or self._bytes):
                    written += self._append(entries[run:i], lines[run:i])
                    run, pending = i, 0
                    self._rotate()
                    self._open()
                pending += len(line)
            written += self._append(entries[run:], lines[run:])
            self._failed = None
        except Exception as exc:  # a full disk, a folder made unwritable, a redaction pattern gone wrong
            self.dropped += len(items) - written
            if self._failed != str(exc):
                self._failed = str(exc)
                log.warning("recall log not written", error=str(exc), path=str(self.path))

    def _append(self, entries: list[dict[str, Any]], lines: list[bytes]) -> int:
        assert self._fd is not None
        view = memoryview(b"".join(lines))
        while view:
            view = view[os.write(self._fd, view) :]
        self._bytes += sum(map(len, lines))
        with self._lock:
            current = self._counts[1]
            for entry in entries:
                current.setdefault(entry["agent"], Counts()).count(entry)
        return len(entries)

    def _open(self) -> int:
        """The current file, opened for appending: created 0600 in a 0700 folder, never through a symlink, only a
        regular file; a last line a crash cut short is ended, so the next entry starts a line of its own."""
        if self._fd is not None:
            return self._fd
        assert self.folder is not None and self.path is not None
        private_folder(self.folder)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                raise OSError(f"{self.path} is not a regular file")
            if found.st_mode & 0o077:
                os.fchmod(fd, 0o600)
            if found.st_size and os.pread(fd, 1, found.st_size - 1) != b"\n":
                os.write(fd, b"\n")
        except OSError:
            os.close(fd)
            raise
        self._fd, self._bytes = fd, os.fstat(fd).st_size
        return fd

    def _rotate(self) -> None:
        assert self.path is not None and self._fd is not None
        os.close(self._fd)
        self._fd = None
        os.replace(self.path, self.path.with_name(NAME + ".1"))
        with self._lock:
            self._counts = (self._counts[1], {})

    def _load(self) -> None:
        """The counts of what the files hold, as an earlier run left them."""
        counted: list[dict[str, Counts]] = []
        for lines in (self._lines(NAME + ".1"), self._lines(NAME)):
            counts: dict[str, Counts] = {}
            for entry in _parsed(lines):
                counts.setdefault(str(entry.get("agent")), Counts()).count(entry)
            counted.append(counts)
        with self._lock:  # the writer loads before it writes: nothing was counted yet
            self._counts = (counted[0], counted[1])

    def _lines(self, name: str) -> list[bytes]:
        if self.folder is None:
            return []
        try:
            fd = os.open(self.folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return []
        with open(fd, "rb") as file:
            return file.read().splitlines()

    # -- reading ----------------------------------------------------------------------------------------------

    def flush(self, timeout: float = FLUSH_SECONDS) -> bool:
        """Wait until every entry queued so far is written (or `timeout`); whether it was."""
        self._hurry.set()
        done = self._queue.all_tasks_done
        with done:
            return done.wait_for(lambda: self._queue.unfinished_tasks == 0, timeout)

    def read(
        self, agent: str | None, session: str | None, limit: int, *, skipped: bool = False
    ) -> list[dict[str, Any]]:
        """The latest `limit` entries of `agent` and `session` (None: any), oldest first; those that gave nothing
        only with `skipped`."""
        if self.folder is None:
            return []
        self.flush()
        session = plain(session) if session else session
        wanted = [json.dumps(v, ensure_ascii=False).encode() for v in (agent, session) if v is not None]
        found: list[dict[str, Any]] = []
        for lines in (self._lines(NAME), self._lines(NAME + ".1")):
            candidates = (line for line in reversed(lines) if all(w in line for w in wanted))
            for entry in _parsed(candidates):
                if _matches(entry, agent, session, skipped):
                    found.append(entry)
                    if len(found) >= limit:
                        return found[::-1]
        return found[::-1]

    def counts(self, agent: str) -> dict[str, Any]:
        """What the log holds of an agent: `{recalls, skipped, last}` (the time of the last that gave memories)."""
        with self._lock:
            held = [c[agent] for c in self._counts if agent in c]
        lasts = [c.last for c in held if c.last is not None]
        return {
            "recalls": sum(c.recalls for c in held),
            "skipped": sum(c.skipped for c in held),
            "last": max(lasts) if lasts else None,
        }

    def size(self) -> dict[str, Any]:
        """The log's files in bytes, entries lost (a full queue, a failed write) and the last write's error."""
        held = 0
        if self.folder is not None:
            for name in (NAME, NAME + ".1"):
                with contextlib.suppress(OSError):
                    held += (self.folder / name).lstat().st_size
        return {"bytes": held, "dropped": self.dropped, "error": self._failed}

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued and stop the writer."""
        if self._thread is None:
            return
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=timeout)
        self._hurry.set()
        self._thread.join(timeout)
        self._thread = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _matches(entry: dict[str, Any], agent: str | None, session: str | None, skipped: bool) -> bool:
    return (
        (agent is None or entry.get("agent") == agent)
        and (session is None or entry.get("session") == session)
        and (skipped or not entry.get("skipped"))
    )


def _parsed(lines: Iterable[bytes]) -> Iterable[dict[str, Any]]:
    """The entries of the lines that hold one (a line a crash cut short holds none)."""
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry
