"""Script-aware text helpers shared by chunking and the search analyzer."""

from __future__ import annotations

import math
import re

# Scripts written without spaces between words: every character (with its marks) is a token. The first four
# write a syllable as letters with marks (the chunker's estimate counts them apart, below).
_ALPHABETIC_DENSE_RANGES = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
)
_HAN_RANGES = (
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002ebef"  # CJK extensions B-F
)
_DENSE_RANGES = (
    _ALPHABETIC_DENSE_RANGES
    + (
        "\u3040-\u30ff"  # Hiragana, Katakana
        "\u31f0-\u31ff"  # Katakana extensions
        "\uac00-\ud7af"  # Hangul syllables
    )
    + _HAN_RANGES
)
DENSE_CHAR = re.compile(f"[{_DENSE_RANGES}]")
HAN = re.compile(f"[{_HAN_RANGES}]")
# Marks that belong to the preceding character and never start a token.
_MARKS = "\u0300-\u036f\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd\u102b-\u103e\u17b4-\u17d3"
DENSE_CLUSTER = re.compile(f"[{_DENSE_RANGES}][{_MARKS}]*")
# Where a dense script meets a word of another ("ย้ายCIของbilling", "用GitHub"): a word edge, written or not. ICU
# keeps Thai and Latin letters in one word, so "billing" there was no word of its own.
_EDGE_DENSE = _DENSE_RANGES + "\u3005-\u3007\u303b"  # and the iteration marks of CJK words (佐々木)
_OTHER_WORD_CHAR = f"[^\\W{_EDGE_DENSE}]"
# a word's edge where a dense script may touch it unspaced ("migrateแคช", "改用Redis"): \b sees none there
EDGE_BEFORE = f"(?<!{_OTHER_WORD_CHAR})"
EDGE_AFTER = f"(?!{_OTHER_WORD_CHAR})"
SPACED_WORD_CHAR = re.compile(_OTHER_WORD_CHAR)  # a word's letter of a script written with spaces
SCRIPT_EDGE = re.compile(f"(?<=[{_EDGE_DENSE}])(?={_OTHER_WORD_CHAR})|(?<={_OTHER_WORD_CHAR})(?=[{_EDGE_DENSE}])")
_WORD_CHARS = (
    r"\w\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u0610-\u061a\u064b-\u065f\u0900-\u0dff"
    r"\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
WORD_CHAR_CLASS = f"[{_WORD_CHARS}]"
_LATIN_ONLY = re.compile(r"[\x00-\u024f\s]*")
# Of the dense scripts, those written with an alphabet (Thai, Lao, Myanmar, Khmer: a syllable is a consonant with
# marks) take several characters per model token; the rest (CJK, kana, Hangul) about one. Measured with the
# default model's tokenizer on XQuAD: Thai 3.1 characters per token, Chinese 1.18, English and Vietnamese 4.3 and
# 3.85 (`python -m research.tokenizer --ratios`: the estimate is then within 0.97-1.11 of the real count, Chinese 1.26).
_ALPHABETIC_DENSE = re.compile(f"[{_ALPHABETIC_DENSE_RANGES}]")
CHARS_PER_TOKEN = 4
ALPHABETIC_DENSE_CHARS_PER_TOKEN = 3


def char_tokens(char: str) -> float:
    """What one character adds to a text's estimated model tokens."""
    if DENSE_CHAR.match(char):
        return 1 / ALPHABETIC_DENSE_CHARS_PER_TOKEN if _ALPHABETIC_DENSE.match(char) else 1.0
    return 1 / CHARS_PER_TOKEN


def text_tokens(text: str) -> float:
    """Estimated model tokens of a text, unrounded (so that pieces of a text add up to the whole)."""
    dense = len(DENSE_CHAR.findall(text))
    if not dense:
        return len(text) / CHARS_PER_TOKEN
    alphabetic = len(_ALPHABETIC_DENSE.findall(text))
    return (dense - alphabetic) + alphabetic / ALPHABETIC_DENSE_CHARS_PER_TOKEN + (len(text) - dense) / CHARS_PER_TOKEN


def estimate_tokens(text: str) -> int:
    """Rough model-token count, rounded up: ~4 characters per token, fewer in dense scripts (see above)."""
    if not text:
        return 0
    if _LATIN_ONLY.fullmatch(text):
        return (len(text) + 3) // 4
    return math.ceil(text_tokens(text) - 1e-9)


def decodable(text: str) -> str:
    """The text with its lone surrogates (a note's bytes that are not UTF-8, read with surrogateescape) as U+FFFD,
    as `get` shows them."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte stands for
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")
