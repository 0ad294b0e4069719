"""The language a chunk is written in. One index may hold notes in several languages, and a question scores
higher against every note in its own language than against any in another; search ranks each language's notes
on a common scale (memoryd.search.languages; docs/design.md, "Notes in several languages")."""

from __future__ import annotations

from functools import lru_cache

UNKNOWN = ""  # too short, no words, or no language sure enough: such chunks keep their scores
MIN_CONFIDENCE = 0.5  # py3langid's probability, normalised for the text's length
SAMPLE_CHARS = 2_000  # the start of a chunk says its language; py3langid's cost grows with the text
# labels py3langid gives some Mandarin text, which the embedding model reads as Chinese
SAME_AS = {"wuu": "zh", "yue": "zh", "zxx": UNKNOWN}


@lru_cache(maxsize=1)
def _identifier():  # type: ignore[no-untyped-def]
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def language_of(text: str) -> str:
    """An ISO 639 code (`en`, `vi`, `zh`), or UNKNOWN."""
    sample = text[:SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < 8:
        return UNKNOWN
    label, confidence = _identifier().classify(sample)
    if confidence < MIN_CONFIDENCE:
        return UNKNOWN
    return SAME_AS.get(label, label)
