"""The language a chunk is written in. One index may hold notes in several languages, and a question scores
higher against every note in its own language than against any in another; search ranks each language's notes
on a common scale (memoryd.store.languages; docs/design.md, "Notes in several languages")."""

from __future__ import annotations

import threading
import time
from typing import Any

UNKNOWN = ""  # too short, no words, or no language sure enough: such chunks keep their scores
MIN_CONFIDENCE = 0.5  # py3langid's probability, normalised for the text's length
SAMPLE_CHARS = 2_000  # the start of a chunk says its language; py3langid's cost grows with the text
# labels py3langid gives some Mandarin text, which the embedding model reads as Chinese
SAME_AS = {"wuu": "zh", "yue": "zh", "zxx": UNKNOWN}


_lock = threading.Lock()
_held: Any = None  # py3langid's identifier, about 70 MB: loaded for a sync, dropped when unused (release_if_idle)
_used_at = 0.0


def _identifier() -> Any:
    global _held, _used_at
    with _lock:
        if _held is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            _held = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)  # 0.6 s
        _used_at = time.monotonic()
        return _held


def release_if_idle(idle_seconds: float) -> bool:
    """Drop the identifier when no chunk was labelled for `idle_seconds`; returns whether it was held."""
    global _held
    with _lock:
        if _held is None or time.monotonic() - _used_at < idle_seconds:
            return False
        _held = None
        return True


def language_of(text: str) -> str:
    """An ISO 639 code (`en`, `vi`, `zh`), or UNKNOWN."""
    sample = text[:SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < 8:
        return UNKNOWN
    label, confidence = _identifier().classify(sample)
    if confidence < MIN_CONFIDENCE:
        return UNKNOWN
    return SAME_AS.get(label, label)
