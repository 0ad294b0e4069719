"""The default provider: a local GGUF embedding model run by llama.cpp, no key and no network."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from memoryd import heap
from memoryd.embeddings.base import Embedder, EmbeddingError, Interrupted, clean_vectors, fingerprint
from memoryd.embeddings.models.gguf_meta import TOKENIZER_KEY, GGUFFormatError, read_preparation
from memoryd.embeddings.models.recipes import recorded
from memoryd.embeddings.prompts import known_prompts, with_settings
from memoryd.embeddings.unigram import UnigramTokenizer

# llama.cpp's CPU threads are OpenMP's, which by default spin for about 300,000 rounds at every step before they
# sleep. When the cores are busy (another program, or the daemon's own indexing beside a search) a spinning thread
# holds the core its partner needs. A short spin keeps the idle speed and sheds most of the stall
# (`python -m research.contention`, two busy processes on two cores: query p99 159 -> 33 ms, documents 8.7 -> 9.9 per
# second; idle: query p50 4.4 ms either way). Set before llama.cpp's libraries load (here, at import); a value the
# user set is kept.
os.environ.setdefault("GOMP_SPINCOUNT", "1000")

CONTEXT = 512
# After embedding inputs longer than this, the context is rebuilt to give its output buffer back.
KEEP_BUFFER_TOKENS = 64


class LocalEmbedder(Embedder):
    """One chunk per llama.cpp call: chunks batched together share one non-causal batch, whose cost grows
    quadratically, so separate calls are faster. flash_attn halves the time on CPU.

    The context is made through llama-cpp-python's model/context/batch layer rather than `Llama`, which gives
    an embedding context 256 sequences: llama.cpp then reserves an output row per sequence and vocabulary
    entry, 244 MiB for a 250k-token vocabulary. One sequence per call needs one row. llama.cpp also grows that
    buffer to a row per token of the longest input it has seen (1 MiB a token here) and never shrinks it, so
    after a batch of long documents the context is made anew (a few milliseconds) and the memory goes back.

    Queries have a context of their own beside the documents' (made at the first query): a search never waits
    for a document being embedded, only shares the cores with it. A query that arrives while that context is
    busy takes a spare one: llama.cpp spreads one short input poorly over threads, so two single-thread contexts
    answer more queries than one with two threads (`python -m research.query_lanes`). Each query context runs on
    the cores the other leaves: a search alone has them all.

    A GGUF that says `memoryd.tokenizer = "unigram"` is tokenized here (`unigram.py`), not by llama.cpp, and the
    tokenizer is loaded and dropped with the model."""

    provider = "local"

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        n_threads: int | None = None,
        *,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
    ) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF model at {path} (run: memoryd model prepare)")
        self.path = path
        try:
            import llama_cpp
            from llama_cpp._internals import LlamaBatch, LlamaContext, LlamaModel
            from llama_cpp._logger import set_verbose
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbeddingError("llama-cpp-python is not installed (pip install 'memoryd[local]')") from exc
        set_verbose(False)  # llama.cpp's own log lines stay out of the daemon's log
        self._llama_cpp = llama_cpp
        self._interrupted = False
        self._closed = False
        self._load_lock = threading.Lock()  # guards loading, unloading and the count of users
        self._users = 0
        self._last_used = time.monotonic()
        self._llama_model = LlamaModel
        self._unigram: UnigramTokenizer | None = None
        cores = self._cores = os.cpu_count() or 1
        try:
            self._model = self._make_model()
            metadata = self._model.metadata()
            self._own_tokenizer = _own_tokenizer(metadata, path)
            self._load_tokenizer()
            params = llama_cpp.llama_context_default_params()
            params.n_ctx = params.n_batch = params.n_ubatch = CONTEXT
            params.n_seq_max = 1
            params.embeddings = True
            params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
            # documents (indexing) may be capped to leave cores free; a query alone uses every core (`_hand_out`)
            self._params = {
                "documents": _with_threads(params, n_threads or cores),
                "queries": _with_threads(params, cores),
            }
            self._lane_parts = (LlamaContext, LlamaBatch)
            self._documents: _Lane | None = self._new_lane("documents")  # made again after an idle release
            self._documents_used = time.monotonic()
            self._queries: _Lane | None = None
            self._queries_used = time.monotonic()
            self._spare: _Lane | None = None
            self._spare_used = time.monotonic()
            self._lanes_lock = threading.Lock()  # guards making a lane
            self._query_lane_free = threading.Condition(self._lanes_lock)
        except (ValueError, RuntimeError, OSError) as exc:
            raise EmbeddingError(f"could not load the model {path}: {exc}") from exc
        self.dims = int(self._model.n_embd())
        own = read_preparation(metadata)
        query, document, self.prompts_from = with_settings(known_prompts(metadata, path), query_prefix, document_prefix)
        self.text = replace(own, query_prefix=query, document_prefix=document)
        self.model = path.name.removesuffix(".gguf")
        if (self.text.query_prefix, self.text.document_prefix) != (own.query_prefix, own.document_prefix):
            # other prefixes make other vectors: a distinct model name keeps them apart (and triggers a reindex)
            self.model += "+prefix-" + fingerprint(self.text.query_prefix + "\0" + self.text.document_prefix)[:8]
        self.key_fingerprint = fingerprint(_model_identity(path))
        self.licence = licence_of(path, metadata)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def prompts(self) -> tuple[str, str]:
        return self.text.query_prefix, self.text.document_prefix

    @contextmanager
    def _using(self) -> Iterator[None]:
        """The model loaded (again, after an idle unload) and kept loaded while the block runs."""
        with self._load_lock:
            if self._closed:
                raise EmbeddingError("the local model is closed")
            if self._model is None:
                try:
                    self._model = self._make_model()
                    self._load_tokenizer()
                except (ValueError, RuntimeError, OSError) as exc:
                    self._free()
                    raise EmbeddingError(f"could not load the model {self.path}: {exc}") from exc
            self._users += 1
            self._last_used = time.monotonic()
        try:
            yield
        finally:
            with self._load_lock:
                self._users -= 1
                self._last_used = time.monotonic()
                if self._closed and not self._users and self._model is not None:
                    self._free()

    def unload_if_idle(self, idle_seconds: float) -> bool:
        """Free the model and its contexts when nothing used them for `idle_seconds`; the next call loads them
        again (about a second: docs/configuration.md, model_idle_minutes). Returns whether it unloaded."""
        with self._load_lock:
            idle = time.monotonic() - self._last_used >= idle_seconds
            if self._model is None or self._users or not idle:
                return False
            self._free()
            return True

    def release_idle_contexts(self, idle_seconds: float) -> bool:
        """Close each context (documents', queries', spare) unused for `idle_seconds`: about 10 MB each, made again in a
        few milliseconds by the next call (a query: 3.5 ms once). The model stays loaded. Returns whether any
        was closed."""
        with self._load_lock:
            if self._users:
                return False
            now = time.monotonic()
            idle = [
                name
                for name, used in (
                    ("_documents", self._documents_used),
                    ("_queries", self._queries_used),
                    ("_spare", self._spare_used),
                )
                if getattr(self, name) is not None and now - used >= idle_seconds
            ]
            for name in idle:
                _close_lane(getattr(self, name))
                setattr(self, name, None)
        if idle:
            heap.give_back()
            heap.drop_file_pages(self.path)
        return bool(idle)

    def _free(self) -> None:
        """Close every context and the model (the caller holds _load_lock and no one uses them)."""
        for lane in (self._documents, self._queries, self._spare):
            if lane is not None:
                _close_lane(lane)
        self._documents = self._queries = self._spare = None
        if self._model is not None:
            self._model.close()
        self._model = self._unigram = None
        heap.give_back()

    def _make_model(self) -> Any:
        model = self._llama_model(
            path_model=str(self.path), params=self._llama_cpp.llama_model_default_params(), verbose=False
        )
        heap.drop_file_pages(self.path)  # llama.cpp read the whole file in; queries fault back what they use
        return model

    def _load_tokenizer(self) -> None:
        if self._own_tokenizer:
            self._unigram = UnigramTokenizer.from_gguf(self.path)

    def tokenize(self, text: str) -> list[int]:
        """Token ids as the model sees them (special tokens added), at most one context long."""
        with self._using():
            return self._tokenize(text)

    def _tokenize(self, text: str) -> list[int]:
        if self._unigram is not None:
            return self._unigram.encode(text, CONTEXT)
        tokens = self._model.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) > CONTEXT:
            tokens = [*tokens[: CONTEXT - 1], tokens[-1]]  # keep the closing special token
        return tokens

    def _new_context(self, role: str) -> Any:
        return self._lane_parts[0](model=self._model, params=self._params[role], verbose=False)

    def _new_lane(self, role: str) -> _Lane:
        batch = self._lane_parts[1](n_tokens=CONTEXT, embd=0, n_seq_max=1, verbose=False)
        return _Lane(self._new_context(role), batch, role, int(self._params[role].n_threads))

    def _embed_one(self, lane: _Lane, text: str) -> np.ndarray:
        if not text.strip():
            return np.zeros(self.dims, dtype=np.float32)
        llama_cpp = self._llama_cpp
        try:
            tokens = self._tokenize(text)
            lane.longest = max(lane.longest, len(tokens))
            lane.batch.reset()
            lane.batch.add_sequence(tokens, 0, True)
            lane.ctx.kv_cache_clear()
            lane.ctx.decode(lane.batch)
            pointer = llama_cpp.llama_get_embeddings_seq(lane.ctx.ctx, 0)
            if not pointer:
                raise RuntimeError("llama.cpp returned no pooled embedding")
            return np.ctypeslib.as_array(pointer, shape=(self.dims,)).astype(np.float32)
        except Exception as exc:  # llama.cpp raises plain RuntimeError/ValueError on decode failures
            raise EmbeddingError(f"local embedding failed: {exc}") from exc

    def _renew(self, lane: _Lane) -> None:
        """Give back the output buffer that long inputs grew (see the class notes)."""
        if lane.longest > KEEP_BUFFER_TOKENS:
            lane.ctx.close()
            lane.ctx = self._new_context(lane.role)
            lane.threads = int(self._params[lane.role].n_threads)
            lane.longest = 0

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        """One input at a time; after `interrupt()` a batch stops at the next input. `urgent` (a note just
        written, that a client waits for) runs on the query context, beside any batch."""
        rows = []
        for text in texts:
            if self._interrupted and not urgent:
                raise Interrupted("the local model is stopping")
            with self._lane(urgent) as lane:
                rows.append(self._embed_one(lane, self.text.document(text) if text.strip() else ""))
                if urgent or len(rows) == len(texts):
                    self._renew(lane)
        if not rows:
            return np.zeros((0, self.dims), dtype=np.float32)
        return clean_vectors(np.stack(rows), self.dims)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lane(True) as lane:
            row = self._embed_one(lane, self.text.query(text) if text.strip() else "")
            self._renew(lane)
        return clean_vectors(row, self.dims)[0]

    @contextmanager
    def _lane(self, urgent: bool) -> Iterator[_Lane]:
        """A query context (see the class notes) or the documents' one, held for one input."""
        with self._using():
            if urgent:
                lane = self._take_query_lane()
                try:
                    with lane.lock:
                        yield lane
                finally:
                    with self._query_lane_free:
                        lane.taken = False
                        self._query_lane_free.notify()
                return
            with self._lanes_lock:
                self._documents = lane = self._documents or self._new_lane("documents")
                self._documents_used = time.monotonic()
            with lane.lock:
                yield lane

    def _take_query_lane(self) -> _Lane:
        """The queries' context if it is free, else the spare (made at first need), else the first to come free."""
        with self._query_lane_free:
            while True:
                now = time.monotonic()
                self._queries = first = self._queries or self._new_lane("queries")
                if not first.taken:
                    self._queries_used = now
                    return self._hand_out(first, self._spare)
                self._spare = spare = self._spare or self._new_lane("queries")
                if not spare.taken:
                    self._spare_used = now
                    return self._hand_out(spare, first)
                self._query_lane_free.wait()

    def _hand_out(self, lane: _Lane, other: _Lane | None) -> _Lane:
        """Mark a query lane taken, with the threads the other query lane leaves (the caller holds the lock)."""
        threads = max(1, self._cores - 1) if other is not None and other.taken else self._cores
        if lane.threads != threads:
            self._llama_cpp.llama_set_n_threads(lane.ctx.ctx, threads, threads)
            lane.threads = threads
        lane.taken = True
        return lane

    def interrupt(self) -> None:
        """Stop document work at the next input (daemon shutdown); queries still run until close."""
        self._interrupted = True

    def close(self) -> None:
        self._interrupted = True
        with self._load_lock:
            self._closed = True
            if self._users:  # a batch is between inputs: it stops at the next one (interrupted) and frees nothing
                return
            self._free()


def _close_lane(lane: _Lane) -> None:
    with lane.lock:
        for part in (lane.batch, lane.ctx):
            if part is not None:
                part.close()
        lane.batch = lane.ctx = None


@dataclass
class _Lane:
    """One llama.cpp context and batch, used by one thread at a time."""

    ctx: Any
    batch: Any
    role: str  # "documents" or "queries" (a key of LocalEmbedder._params; the spare is a query lane too)
    threads: int
    longest: int = 0
    taken: bool = False  # a query lane handed to a caller (guarded by LocalEmbedder._lanes_lock)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _with_threads(params: Any, threads: int) -> Any:
    """A copy of llama.cpp context parameters (a ctypes structure) with its own thread count."""
    out = type(params).from_buffer_copy(params)
    out.n_threads = out.n_threads_batch = threads
    return out


def _own_tokenizer(metadata: dict[str, str], path: Path) -> bool:
    """Whether memoryd tokenizes for this model (see gguf_meta) rather than llama.cpp."""
    kind = metadata.get(TOKENIZER_KEY, "")
    if kind not in ("", "unigram"):
        raise GGUFFormatError(f"{path}: unknown {TOKENIZER_KEY} {kind!r} (this memoryd knows 'unigram')")
    return kind == "unigram"


def licence_of(path: Path, metadata: dict[str, str]) -> str:
    """What `memoryd model prepare` recorded of the model's licence, else what the file says, else ""."""
    return str(recorded(path).get("licence") or metadata.get("general.license", ""))


def _model_identity(path: Path) -> str:
    """The checksum recorded by `memoryd model prepare`, else size and mtime."""
    if checksum := recorded(path).get("sha256"):
        return str(checksum)
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"
