"""What a sync carries: its report, the files it has read but not yet written, and chunks as a store takes them
(their keyword columns analysed here, so that no store analyses text)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from memoryd.config import AgentConfig
from memoryd.embeddings.base import Embedder
from memoryd.ingest.windows import WINDOW_TOKENS
from memoryd.sources.analyzer import fts_row
from memoryd.sources.discovery import SourceFile
from memoryd.sources.language import language_of
from memoryd.sources.markdown import Chunk
from memoryd.sources.metadata import date_words
from memoryd.store.rows import NewChunk
from memoryd.store.schema import ANALYZER_VERSION

Progress = Callable[[int, int], None]


@dataclass
class SyncReport:
    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0  # vectors computed by the provider
    windows_embedded: int = 0  # window texts the embedder was asked for (memoryd.ingest.windows)
    cache_hits: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    embedding_error: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)  # path -> why it could not be indexed this time
    missing_roots: list[str] = field(default_factory=list)  # folders that were not there: their rows were kept

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def embedding_signature(embedder: Embedder) -> str:
    return f"{embedder.provider}|{embedder.model}"


def chunking_signature(agent: AgentConfig) -> str:
    windows = f"/windows-{WINDOW_TOKENS}" if agent.chunking.windows else ""
    return f"{agent.chunking.tokens}/{agent.chunking.overlap}/analyzer-{ANALYZER_VERSION}{windows}/languages"


@dataclass
class Pending:
    file: SourceFile
    digest: str
    mtime_ns: int
    size: int
    chunks: list[Chunk]
    cursor: tuple[int, int, int] | None = None  # transcripts: (inode, offset, lines) after this read
    append: bool = False  # transcripts: these chunks follow the ones already stored


def reason(exc: BaseException) -> str:
    """Why a file was skipped, short enough for `status`."""
    return f"{type(exc).__name__}: {exc}"[:300]


def stored(chunk: Chunk) -> NewChunk:
    """A chunk as a store takes it: with its keyword columns analysed here, so that no store analyses text. A
    dated chunk also answers to its day ("what happened on 13 October?")."""
    heading = f"{chunk.heading} {date_words(chunk.ts)}" if chunk.dated and chunk.ts else chunk.heading
    terms, language = _analysed(chunk.text, heading)
    return NewChunk(
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        heading=chunk.heading,
        context=chunk.context,
        text=chunk.text,
        hash=chunk.hash,
        ts=chunk.ts,
        kind=chunk.kind,
        importance=chunk.importance,
        source_lines=chunk.source_lines,
        terms=terms,
        language=language,
    )


@functools.lru_cache(maxsize=256)
def _analysed(text: str, heading: str) -> tuple[tuple[str, str, str, str], str]:
    """A chunk's keyword columns and language, kept for the last 256 chunks analysed: a note written to again (today's
    note, at each `write`) is indexed whole, and its earlier chunks are the same text as the last time."""
    return fts_row(text, heading), language_of(text)


INT64 = (-(2**63), 2**63 - 1)


def mtime_ns(stat: os.stat_result) -> int:
    """A file's modification time as a store keeps it: a time past 2262 (or before 1677) does not fit the 64-bit
    integer a store holds, and a file someone stamped so must not stop every sync (it is clamped)."""
    return min(max(stat.st_mtime_ns, INT64[0]), INT64[1])


def changed_since_read(item: Pending) -> bool:
    try:
        stat = item.file.abs_path.stat()
    except OSError:
        return False  # gone: the next sync removes it
    return (mtime_ns(stat), stat.st_size) != (item.mtime_ns, item.size)
