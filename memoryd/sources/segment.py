"""Word segmentation for scripts written without spaces (Thai, Lao, Khmer, Burmese, Chinese, Japanese), by ICU's
dictionary-based word break iterator (icu4py ships ICU in its wheels)."""

from __future__ import annotations

from functools import lru_cache

from icu4py.breakers import WordBreaker
from icu4py.locale import Locale

from memoryd.sources.text import DENSE_CHAR

# ICU picks the dictionary by script, not by locale; the root locale keeps the rules language-neutral.
_ROOT = Locale("")


@lru_cache(maxsize=65536)
def segment_words(text: str) -> tuple[str, ...]:
    """The words of a run of text, as ICU's word break finds them; spaces and punctuation are dropped."""
    breaker = WordBreaker(text, _ROOT)
    return tuple(piece for start, end in breaker.segments() if (piece := text[start:end].strip()) and _wordy(piece))


def _wordy(piece: str) -> bool:
    return any(ch.isalnum() or DENSE_CHAR.match(ch) for ch in piece)
