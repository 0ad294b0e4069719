"""One recall: the prompt's focus through the gate, a search, the memories this session has not seen, redacted, into
a block."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.embeddings.base import EmbeddingError
from memoryd.recall.block import Memory, build_block
from memoryd.recall.focus import focus
from memoryd.recall.gate import ChatterCheck, prompt_topic
from memoryd.recall.log import FOLDER, RecallLog
from memoryd.recall.sessions import ShownMemories
from memoryd_client.protocol.schema import Recall, Search

if TYPE_CHECKING:
    from memoryd.memory import AgentMemory
    from memoryd.search.hybrid import SearchResponse


# below this many chunks, IDF and the cosine distribution say nothing (a term in half of 2 chunks weighs 0): a
# young memory's keyword hits are given as found, and its vectors' alone are not
MEASURABLE_CHUNKS = 50


@dataclass
class Recaller:
    """The daemon's recall state: which memories each session was shown, the chatter anchors' vectors, and the log
    of what each recall gave (kept in `<data_dir>/recall/` when the daemon has a data dir)."""

    shown: ShownMemories
    chatter: ChatterCheck
    log: RecallLog = field(default_factory=lambda: RecallLog(None))

    @classmethod
    def create(cls, data_dir: Path | None = None) -> Recaller:
        return cls(ShownMemories(), ChatterCheck(), RecallLog(data_dir / FOLDER if data_dir is not None else None))

    def close(self) -> None:
        self.log.close()

    def recall(self, memory: AgentMemory, request: Recall) -> dict[str, Any]:
        started = time.perf_counter()
        agent = memory.agent
        cfg = agent.recall
        prompt = focus(request.prompt)  # what is gated, embedded and searched: bounded for any prompt

        def answer(skipped: str | None, block: str = "", memories: list[Memory] | None = None, tokens: int = 0):
            redact = memory.syncer.redact
            self.log.add(
                agent.id, request.session, request.client, request.prompt, redact, memories or [], tokens, skipped
            )
            return {
                "agent": agent.id,
                "block": block,
                "memories": [{"citation": m.citation, "score": round(m.score, 4)} for m in memories or []],
                "tokens": tokens,
                "skipped": skipped,
                "took_ms": round((time.perf_counter() - started) * 1000, 3),
            }

        reason = prompt_topic(prompt)
        if reason is not None:
            return answer(reason)
        found = self._search(memory, prompt, cfg.max_results, request.sources)
        if found is None:
            return answer("small talk or a bare command, by its meaning")
        if memory.store.chunk_count() < MEASURABLE_CHUNKS:
            confident = (found.evidence or 0.0) > 0  # a keyword hit at all
        else:
            confident = (found.evidence or 0.0) >= cfg.min_evidence or (
                found.vector_margin is not None and found.vector_margin >= cfg.min_vector_margin
            )
        if not found.results or not confident:
            return answer("nothing in memory scores high enough")
        seen = self.shown.shown(agent.id, request.session) if request.session else frozenset()
        own = _real(request.transcript) if request.transcript else None
        # chunks were redacted when indexed, perhaps under fewer patterns (an older config, another daemon's); file
        # names never were
        redact = memory.syncer.redact
        candidates = [
            Memory(
                redact(r.citation),
                redact(r.snippet),
                r.score,
                when=_when(r.date, r.superseded),
                key=f"{r.path}#{r.chunk_start_line}-{r.chunk_end_line}",
            )
            for r in found.results
            if not (own and _real(r.path, agent.workspace) == own)
        ]
        fresh = [m for m in candidates if m.key not in seen]
        block, kept, tokens = build_block(fresh, request.budget or cfg.budget)
        if not kept:
            return answer("already shown in this session" if candidates and not fresh else "nothing fits the budget")
        if request.session:
            self.shown.add(agent.id, request.session, [m.key for m in kept])
        return answer(None, block, kept, tokens)

    def _search(self, memory: AgentMemory, prompt: str, limit: int, sources: list[str] | None) -> SearchResponse | None:
        """The search's response, or None when the prompt's vector says it is small talk."""
        cfg = memory.agent.recall
        try:
            embedded = memory.engine.query_vector(prompt)
        except EmbeddingError:  # the search reports it (and falls back to keywords)
            embedded = None
        if embedded is not None:
            embedder, vector = embedded
            margin = ChatterCheck.margin(embedder, cfg.chatter_margin)
            if margin is not None and self.chatter.lean(embedder, vector) >= margin:
                return None
        return memory.run_search(Search(query=prompt, max_results=limit, min_score=0.0, sources=sources))


def _real(path: str, base: Any = None) -> str:
    """A path as the file system resolves it (a display path is relative to the workspace)."""
    full = path if os.path.isabs(path) or base is None else os.path.join(str(base), path)
    return os.path.realpath(os.path.expanduser(full))


def _when(date: str | None, superseded: str | None) -> str:
    """A recalled line's date, and that it was superseded (and when) when its note says so."""
    if superseded:
        return f"{date}, superseded {superseded.split(' ', 1)[0]}" if date else f"superseded {superseded}"
    return date or ""
