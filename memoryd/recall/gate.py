"""Whether a prompt asks anything of memory: by its words (a greeting, a thank-you or a bare command asks
nothing), its form (an instruction about the work at hand) and its meaning (its vector's lean towards small talk).
How clearly the index answers it is weighed after the search (memoryd.recall.answer)."""

from __future__ import annotations

import threading
import unicodedata
from functools import cache

import numpy as np

from memoryd.embeddings.base import Embedder, clean_vectors
from memoryd.recall.chatter import (
    ANCHORS,
    FIRST_PERSON,
    LEAD_INS,
    MEMORY_CUES,
    QUESTIONS,
    WORK_VERBS,
    chatter_words,
)
from memoryd.settings import DEFAULT_LOCAL_MODEL
from memoryd.sources.segment import segment_words

MAX_PROMPT_CHARS = 2000  # a long prompt is read for its topic up to here


QUESTION_MARKS = ("?", "？", "؟")


@cache
def _plain_words() -> frozenset[str]:
    """Words that carry no topic in any language: stopwords-iso's lists and memoryd's chatter."""
    import stopwordsiso

    return frozenset(stopwordsiso.stopwords(stopwordsiso.langs())) | chatter_words()


def _letters(text: str) -> int:
    return sum(1 for ch in text if unicodedata.category(ch).startswith("L"))


def content_words(words: tuple[str, ...]) -> list[str]:
    """The words of a prompt that are neither function words nor chatter (a two-word entry, as Vietnamese
    writes many, counts for both of its words)."""
    plain = _plain_words()
    lowered = [w.lower() for w in words]
    dropped = [w in plain or not _letters(w) for w in lowered]
    for i in range(len(lowered) - 1):
        if f"{lowered[i]} {lowered[i + 1]}" in plain:
            dropped[i] = dropped[i + 1] = True
    return [w for w, gone in zip(lowered, dropped, strict=True) if not gone]


def is_work_command(words: tuple[str, ...], text: str) -> bool:
    """An instruction about the code in front of the agent ("add logging", "can you use a dataclass?") that does
    not point back to something done or decided before."""
    lowered = [w.lower() for w in words]
    first = next((w for w in lowered if w not in LEAD_INS), "")
    if first not in WORK_VERBS:
        return False
    folded = " ".join(lowered)
    return not any(cue in folded or cue in text for cue in MEMORY_CUES)


def prompt_topic(prompt: str) -> str | None:
    """Why a prompt asks nothing of memory, or None when it may: it has no words, is a slash command or one
    word, or holds only greetings, thanks, agreement and bare commands, and is not a question about the user."""
    text = prompt.strip()
    if not _letters(text):
        return "no words"
    if text.startswith("/") and len(text.split()) == 1:
        return "a slash command"
    words = segment_words(text[:MAX_PROMPT_CHARS])
    if len(words) <= 1:
        return "one word"
    if is_work_command(words, text):
        return "a command about the work at hand"
    if content_words(words):
        return None
    if any(mark in text for mark in QUESTION_MARKS) and FIRST_PERSON.intersection(w.lower() for w in words):
        return None
    return "small talk or a bare command"


# measured with research.recall_study (every data set's questions against both no-memory prompt sets)
MEASURED_CHATTER_MARGIN = {DEFAULT_LOCAL_MODEL: 0.04}


class ChatterCheck:
    """Whether a prompt's vector lies nearer memoryd's small-talk and command phrases than its memory questions,
    by a margin: the configured one, else the one measured for the model, else there is no check (a margin
    depends on how a model spreads its cosines). The phrases are embedded once per model."""

    def __init__(self) -> None:
        self._anchors: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def margin(embedder: Embedder, configured: float | None) -> float | None:
        if configured is not None:
            return configured
        for model, value in MEASURED_CHATTER_MARGIN.items():
            if embedder.provider == "local" and embedder.model.startswith(model):
                return value
        return None

    def _vectors(self, embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
        key = (embedder.provider, embedder.model)
        with self._lock:
            found = self._anchors.get(key)
            if found is None:
                found = self._anchors[key] = (_embed_all(embedder, ANCHORS), _embed_all(embedder, QUESTIONS))
        return found

    def lean(self, embedder: Embedder, vector: np.ndarray) -> float:
        """How much nearer the closest small-talk phrase is than the closest memory question (cosines)."""
        chatter, questions = self._vectors(embedder)
        query = np.asarray(vector, dtype=chatter.dtype)
        return float((chatter @ query).max() - (questions @ query).max())


def _embed_all(embedder: Embedder, texts: tuple[str, ...]) -> np.ndarray:
    return np.vstack([clean_vectors(embedder.embed_query(text), embedder.dims)[0] for text in texts])
