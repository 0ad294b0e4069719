"""Incremental sync: bring the index in line with the files, touching only what changed."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np

from memoryd.config import AgentConfig
from memoryd.embeddings.base import Embedder, EmbeddingError
from memoryd.embeddings.cache import embed_with_cache
from memoryd.ingest.batch import (
    Pending,
    Progress,
    SyncReport,
    changed_since_read,
    chunking_signature,
    embedding_signature,
    mtime_ns,
    reason,
    stored,
)
from memoryd.ingest.shared import SharedRecord
from memoryd.ingest.windows import cached_windows, split_windows, window_plan
from memoryd.sources.discovery import SourceFile, discover, display_path, escape_path, real_workspace, source_for
from memoryd.sources.forgotten import ForgetRecord, record_path
from memoryd.sources.markdown import Chunk, chunk_markdown, embed_input, sha256
from memoryd.sources.metadata import annotate
from memoryd.sources.redact import Redactor
from memoryd.sources.transcripts import (
    LineErrors,
    chunk_turns,
    discover_transcripts,
    read_complete_lines,
    transcript_for,
    turns_of,
)
from memoryd.store.errors import FAILED, FULL, DiskFull
from memoryd.store.interface import MemoryStore

EMBED_GROUP = 32  # chunks embedded, then written, together: small enough that work stops and yields promptly
URGENT_CHUNKS = 16  # a write waits for at most this many new chunks to be embedded; more are embedded later
MAX_FILE_BYTES = 16 * 1024 * 1024  # a Markdown note bigger than this is skipped, not embedded for hours


class Syncer:
    """Runs syncs for one agent. Not thread-safe: callers run one sync at a time per agent.

    With `embed_inline` (the library's default, and the atomic reindex) a sync returns with every chunk embedded.
    Without it (the daemon), a sync stores chunks with the vectors the embedding cache already holds and leaves
    the others for `embed_pending`, which the daemon runs as its `embed` job: every note is keyword-searchable as
    soon as it is read, whatever the embedder's pace."""

    def __init__(
        self, store: MemoryStore, agent: AgentConfig, embedder: Embedder | None, *, embed_inline: bool = True
    ) -> None:
        self.store = store
        self.agent = agent
        self.embedder = embedder
        self.embed_inline = embed_inline
        self.redact = Redactor.create(agent.redact)
        self.skipped_lines: dict[str, LineErrors] = {}  # transcripts: malformed lines passed over, by path
        self.forgotten = ForgetRecord(record_path(agent), shared=SharedRecord(lambda: store))  # not self: no cycle

    # -- state of the vector space ------------------------------------------------------------------

    def vectors_usable(self) -> bool:
        """True when the index's vectors (if any) come from the current embedder."""
        if self.embedder is None:
            return False
        stored = self.store.get_meta("embedding")
        return stored is None or stored == embedding_signature(self.embedder)

    def _usable_embedder(self) -> Embedder | None:
        """The embedder, when the index's vectors are its own (else a sync stores chunks without vectors)."""
        return self.embedder if self.vectors_usable() else None

    def needs_reindex(self) -> str | None:
        """Why the index must be rebuilt before it can be fully used, or None."""
        chunking = self.store.get_meta("chunking")
        if chunking is not None and chunking != chunking_signature(self.agent):
            return f"chunking changed ({chunking} -> {chunking_signature(self.agent)})"
        if self.embedder is not None and not self.vectors_usable():
            return (
                f"embedding model changed ({self.store.get_meta('embedding')} -> {embedding_signature(self.embedder)})"
            )
        return None

    # -- sync ---------------------------------------------------------------------------------------

    def sync(self, *, force: bool = False, progress: Progress | None = None) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport()
        if self.store.get_meta("chunking") is None:
            self.store.set_meta("chunking", chunking_signature(self.agent))
        embedder = self._usable_embedder()

        known = self.store.files()  # before the disk: a note written and indexed after it is never "gone"
        workspace = real_workspace(self.agent)
        sessions = discover_transcripts(self.agent.sessions_dirs, workspace) if "sessions" in self.agent.sources else []
        files = discover(self.agent) + sessions
        report.files_seen = len(files)
        current = {f.path for f in files}
        kept = self._sources_with_missing_roots(report)
        gone = [p for p, row in known.items() if p not in current and row.source not in kept]
        if gone:
            report.chunks_removed += self.store.delete_files(gone)
            report.files_deleted = len(gone)

        for path in [p for p in self.skipped_lines if p not in current]:
            del self.skipped_lines[path]

        pending: list[Pending] = []
        for done, source_file in enumerate(files, 1):
            item = self._read_isolated(source_file, known, force, report)
            if item is not None:
                pending.append(item)
                if sum(len(p.chunks) for p in pending) >= EMBED_GROUP:
                    embedder = self._write(pending, embedder, report)
                    pending = []
            if progress:
                progress(done, len(files))
        self._finish(pending, embedder, report, started)
        self.store.set_meta("last_sync", str(time.time()))
        return report

    def _finish(self, pending: list[Pending], embedder: Embedder | None, report: SyncReport, started: float) -> None:
        """Write what is still pending, embed what lacks a vector, write the access counts, time the sync."""
        if pending:
            embedder = self._write(pending, embedder, report)
        if embedder is not None and self.embed_inline:
            self.embed_pending(report)
        self.store.flush_access()
        self.store.settle()
        report.seconds = time.perf_counter() - started

    def _sources_with_missing_roots(self, report: SyncReport) -> set[str]:
        """Sources whose root folder is not there (an unmounted disk, a renamed folder): their rows are kept, so
        that an index is never emptied because its folder vanished; they go only when the files do."""
        kept = set()
        if not self.agent.workspace.is_dir():
            kept.add("memory")
            report.missing_roots.append(str(self.agent.workspace))
        if "sessions" in self.agent.sources:
            missing = [str(d) for d in self.agent.sessions_dirs if not d.is_dir()]
            if missing:
                kept.add("sessions")
                report.missing_roots.extend(missing)
        return kept

    def _read_isolated(self, source_file: SourceFile, known: dict, force: bool, report: SyncReport) -> Pending | None:
        """Read one file; one that cannot be read, decoded or parsed is reported and never stops the others."""
        reader = self._read_transcript if source_file.source == "sessions" else self._read_if_changed
        try:
            return reader(source_file, known, force, report)
        except Exception as exc:
            report.skipped[source_file.path] = reason(exc)
            return None

    def sync_paths(self, paths: Iterable[Path], progress: Progress | None = None) -> SyncReport:
        """Bring just these paths in line (a watcher's events), Markdown notes and transcripts alike: index what
        changed (a transcript from where it was last read), remove what is no longer a source file. Renamed text
        is found in the embedding cache, so a move embeds nothing."""
        started = time.perf_counter()
        report = SyncReport()
        embedder = self._usable_embedder()
        workspace = real_workspace(self.agent)
        pending: list[Pending] = []
        gone: list[str] = []
        kept = self._sources_with_missing_roots(report)
        targets = sorted(set(paths))
        for done, path in enumerate(targets, 1):
            source_file = source_for(self.agent, path) or transcript_for(self.agent, path)
            real = path.parent.resolve() / path.name  # never through the file itself: a symlink is not its target
            shown = display_path(real, workspace)
            if source_file is None:
                row = self.store.file_row(shown)
                if row is not None and row.source not in kept:
                    gone.append(shown)
            else:
                report.files_seen += 1
                row = self.store.file_row(source_file.path)
                item = self._read_isolated(source_file, {source_file.path: row} if row else {}, False, report)
                if item is not None:
                    pending.append(item)
            if progress:
                progress(done, len(targets))
        if gone:
            report.chunks_removed += self.store.delete_files(gone)
            report.files_deleted = len(gone)
        self._finish(pending, embedder, report, started)
        return report

    def sync_file(self, source_file: SourceFile, *, force: bool = False) -> SyncReport:
        """Index one file now (after a `write`, a forget or an update), without walking the workspace; `force`
        reads it whole (a transcript whose forgotten lines changed)."""
        started = time.perf_counter()
        report = SyncReport(files_seen=1)
        row = self.store.file_row(source_file.path)
        known = {source_file.path: row} if row else {}
        embedder = self._usable_embedder()
        reader = self._read_transcript if source_file.source == "sessions" else self._read_if_changed
        item = reader(source_file, known, force, report)
        if item is not None:
            if embedder is not None and self.embed_inline and self._uncached(embedder, item.chunks) > URGENT_CHUNKS:
                embedder = None  # keyword-searchable now; the sync its change causes adds the vectors (backfill)
            self._write([item], embedder, report, urgent=True)
        report.seconds = time.perf_counter() - started
        return report

    def _uncached(self, embedder: Embedder, chunks: list[Chunk]) -> int:
        hashes = {c.hash for c in chunks}
        found = self.store.cache_get(embedder.provider, embedder.model, embedder.key_fingerprint, hashes)
        return len(hashes) - len(found)

    def _cached(self, embedder: Embedder, hashes: list[str], report: SyncReport) -> list[np.ndarray | None]:
        """The vectors the embedding cache already holds (a renamed or restored note costs no embedding)."""
        found = self.store.cache_get(embedder.provider, embedder.model, embedder.key_fingerprint, hashes)
        report.cache_hits += len(found)
        if found and self.store.get_meta("embedding") is None:
            self.store.set_meta("embedding", embedding_signature(embedder))
        return [found.get(h) for h in hashes]

    def _read_if_changed(self, source_file: SourceFile, known: dict, force: bool, report: SyncReport) -> Pending | None:
        row = known.get(source_file.path)
        try:
            stat = source_file.abs_path.stat()
            if row and not force and row.mtime_ns == mtime_ns(stat) and row.size == stat.st_size:
                report.files_unchanged += 1
                return None
            if stat.st_size > MAX_FILE_BYTES:
                report.skipped[source_file.path] = f"larger than {MAX_FILE_BYTES // 2**20} MiB"
                return None
            data = source_file.abs_path.read_bytes()
        except FileNotFoundError:
            if row:
                report.chunks_removed += self.store.delete_files([source_file.path])
                report.files_deleted += 1
            return None
        except OSError as exc:
            report.skipped[source_file.path] = exc.strerror or str(exc)
            return None
        report.bytes_read += len(data)
        if b"\x00" in data:
            report.skipped[source_file.path] = "binary content (NUL bytes), not Markdown"
            return None
        digest = hashlib.sha256(data).hexdigest()
        if row and not force and row.hash == digest:
            self.store.touch_file(source_file.path, mtime_ns(stat), stat.st_size)
            report.files_unchanged += 1
            return None
        text = self.redact(data.decode("utf-8", errors="replace"))  # whole, so a secret split by a chunk edge is caught
        text = self.forgotten.without_passages(text)
        chunks = chunk_markdown(text, self.agent.chunking.tokens, self.agent.chunking.overlap)
        chunks = annotate(chunks, text, source_file.path, stat.st_mtime)
        return Pending(source_file, digest, mtime_ns(stat), stat.st_size, chunks)

    def _read_transcript(self, source_file: SourceFile, known: dict, force: bool, report: SyncReport) -> Pending | None:
        """Read only what was appended since the last sync; re-read a file that was truncated or replaced."""
        row = known.get(source_file.path)
        try:
            stat = source_file.abs_path.stat()
            cursor = self.store.cursor(source_file.path) if row else None
            if cursor is not None and (force or cursor[0] != stat.st_ino or stat.st_size < cursor[1]):
                cursor = None  # replaced, truncated or forced: read it whole
            resume = cursor is not None
            if cursor is not None and stat.st_size == cursor[1]:
                report.files_unchanged += 1
                return None
            offset, lines_before = (cursor[1], cursor[2]) if cursor is not None else (0, 0)
            lines, new_offset = read_complete_lines(source_file.abs_path, offset, lines_before + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            report.skipped[source_file.path] = exc.strerror or str(exc)
            return None
        report.bytes_read += stat.st_size - offset
        errors = (self.skipped_lines.get(source_file.path) if resume else None) or LineErrors()
        turns = self.forgotten.leave_out(
            source_file.path, [replace(t, text=self.redact(t.text)) for t in turns_of(lines, errors)]
        )
        if errors.count:
            self.skipped_lines[source_file.path] = errors
        else:
            self.skipped_lines.pop(source_file.path, None)
        chunks = [
            replace(c, ts=ts or stat.st_mtime, dated=ts is not None, kind="episodic")
            for c, ts in chunk_turns(turns, self.agent.chunking.tokens, self.agent.chunking.overlap)
        ]
        if resume and not chunks and new_offset == offset:
            report.files_unchanged += 1  # only a partial line so far: wait for its newline
            return None
        cursor_after = (stat.st_ino, new_offset, lines_before + len(lines))
        return Pending(source_file, "", mtime_ns(stat), stat.st_size, chunks, cursor_after, append=resume)

    def _embed(
        self,
        embedder: Embedder | None,
        hashes: list[str],
        inputs: list[str],
        report: SyncReport,
        urgent: bool = False,
        windows: list[list[str]] | None = None,
    ) -> tuple[np.ndarray | None, list[np.ndarray] | None, Embedder | None]:
        """The chunks' vectors and, with `windows`, each chunk's window vectors."""
        if embedder is None or not hashes:
            return None, None, embedder
        flat = [w for chunk_windows in windows or () for w in chunk_windows]
        keys = [sha256(w) for w in flat]
        try:
            vectors, computed = embed_with_cache(embedder, self.store, hashes, inputs, urgent=urgent)
            window_vectors, windows_computed = embed_with_cache(embedder, self.store, keys, flat, urgent=urgent)
        except EmbeddingError as exc:
            report.embedding_error = str(exc)
            return None, None, None
        report.embedded += computed
        report.windows_embedded += windows_computed
        report.cache_hits += len(set(hashes)) - computed
        if self.store.get_meta("embedding") is None:
            self.store.set_meta("embedding", embedding_signature(embedder))
        return vectors, split_windows(window_vectors, windows), embedder

    def _write(
        self, pending: list[Pending], embedder: Embedder | None, report: SyncReport, urgent: bool = False
    ) -> Embedder | None:
        hashes = [c.hash for p in pending for c in p.chunks]
        windows = window_plan(self.agent, [(c.heading, c.text) for p in pending for c in p.chunks])
        vectors: np.ndarray | list[np.ndarray | None] | None
        window_vectors: list[np.ndarray] | list[np.ndarray | None] | None = None
        if self.embed_inline:
            inputs = [c.embed_input for p in pending for c in p.chunks]
            vectors, window_vectors, embedder = self._embed(embedder, hashes, inputs, report, urgent, windows)
        else:
            vectors = self._cached(embedder, hashes, report) if embedder is not None and hashes else None
            if vectors is not None and embedder is not None and windows is not None:
                # a chunk is stored with its vector only once its windows have theirs too: embed_group does both
                window_vectors = cached_windows(self.store, embedder, windows)
                vectors = [v if w is not None else None for v, w in zip(vectors, window_vectors, strict=True)]
        offset = 0
        for item in pending:
            count = len(item.chunks)
            part = vectors[offset : offset + count] if vectors is not None else None
            window_part = window_vectors[offset : offset + count] if window_vectors is not None else None
            offset += count
            if item.file.source == "memory" and changed_since_read(item):
                # written to while we embedded: the newer text is indexed by the sync its change causes
                report.skipped[item.file.path] = "changed while it was being indexed; the next sync takes it"
                continue
            try:
                self.store.replace_file(
                    path=item.file.path,
                    abs_path=escape_path(str(item.file.abs_path)),
                    source=item.file.source,
                    hash=item.digest,
                    mtime_ns=item.mtime_ns,
                    size=item.size,
                    chunks=[stored(chunk) for chunk in item.chunks],
                    vectors=part,
                    windows=window_part,
                    model=embedder.model if embedder else "",
                    cursor=item.cursor,
                    append=item.append,
                )
            except FULL:
                raise DiskFull(f"the disk holding {self.store.path} is full; indexing paused") from None
            except FAILED as exc:
                report.skipped[item.file.path] = reason(exc)
                continue
            report.files_indexed += 1
            report.chunks_added += count
        return embedder

    def embed_pending(self, report: SyncReport) -> int:
        """Embed every chunk stored without a vector; returns how many were attached (stops at an embedding error)."""
        attached = 0
        while group := self.embed_group(report):
            attached += group
        return attached

    def embed_group(self, report: SyncReport) -> int:
        """Embed one group of the chunks stored without vectors; returns how many were attached: 0 when none is
        left, when the embedder failed (the report says why) or when none could take its vector (replaced
        meanwhile), so that a caller looping on it never spins."""
        embedder = self._usable_embedder()
        rows = self.store.unembedded(EMBED_GROUP) if embedder is not None else []
        if not rows:
            if embedder is not None:
                self.store.settle()  # every chunk has its vector: what the store put off can be done
            return 0
        hashes = [r.hash for r in rows]
        inputs = [embed_input(r.context, r.text) for r in rows]
        windows = window_plan(self.agent, [(r.heading, r.text) for r in rows])
        vectors, window_vectors, active = self._embed(embedder, hashes, inputs, report, windows=windows)
        if vectors is None or active is None:
            return 0
        return self.store.set_vectors([r.id for r in rows], hashes, vectors, active.model, window_vectors)
