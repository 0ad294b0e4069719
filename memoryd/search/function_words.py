"""The words a question is made of rather than what it asks about ("what", "does", "的", "คือ", "của", "now"): the
statement a question is about is found by its other words. Vietnamese, Chinese and Thai from stopwords-iso; English
closed-class words only (its stopwords-iso list holds "system", "new", "use"); and the time cues the temporal parser
reads ("now", "previously", "hiện tại", "以前", "ตอนนี้").

Latin-script words are taken out of the question as written, before folding: Vietnamese "cách" (a way) is a function
word, English "cache" folds and stems to the same token and is not."""

from __future__ import annotations

import functools
import re
import unicodedata

import stopwordsiso

from memoryd.search import temporal_words
from memoryd.sources.analyzer import analyze
from memoryd.sources.text import DENSE_CHAR, WORD_CHAR_CLASS

ENGLISH = (
    "what which who whom whose where when why how is are was were be been being am do does did done has have had "
    "the a an of for on in to at by from with as into onto about its it this that these those there here and or "
    "but if then than so such any some i me my we us our you your he him his she her they them their "
    "before after since until ago s t d ll re ve m"
)
LISTED = ("vi", "zh", "th")
_WORD = re.compile(f"{WORD_CHAR_CLASS}+")  # with a Thai word's marks
_LONGEST = 4  # words in the longest phrase looked for ("in the past", "cho đến khi")


@functools.lru_cache(maxsize=1024)
def content_tokens(question: str) -> tuple[str, ...]:
    """The analyzer's tokens of a question without its function words, in order. Words are compared case-folded
    and kept as written ("LedgerCore" is two words to the analyzer, "ledgercore" one)."""
    latin, dense = _lists()
    words = _WORD.findall(unicodedata.normalize("NFC", question))
    kept = [words[i] for i in _outside(tuple(word.casefold() for word in words), latin)]
    tokens = tuple(analyze(" ".join(kept)).body.split())
    return tuple(tokens[i] for i in _outside(tokens, dense))


def _outside(units: tuple[str, ...], phrases: frozenset[tuple[str, ...]]) -> list[int]:
    """The places of `units` outside the longest phrase starting at each place (an unspaced script's phrase is a
    run of the analyzer's words: ตอนนี้ is ตอน นี้)."""
    kept, at = [], 0
    while at < len(units):
        longest = min(_LONGEST, len(units) - at)
        span = next((n for n in range(longest, 0, -1) if units[at : at + n] in phrases), 0)
        if not span:
            kept.append(at)
        at += span or 1
    return kept


@functools.lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    """Every function word as the analyzer makes it: folded, so a Latin one may also stand for a word that is not
    one ("cach" is "cách" and "cache"); for leaving words out where leaving out too many costs nothing."""
    return frozenset(token for phrase in _phrases() for token in analyze(phrase).body.split())


def is_function_word(word: str) -> bool:
    """A word as written is one of the function words ("I", "We"): a capital does not make it a name."""
    return unicodedata.normalize("NFC", word.casefold()) in _single_words()


@functools.lru_cache(maxsize=1)
def _single_words() -> frozenset[str]:
    return frozenset(phrase for phrase in _phrases() if " " not in phrase)


@functools.lru_cache(maxsize=1)
def _phrases() -> tuple[str, ...]:
    phrases = [*ENGLISH.split(), *temporal_words.QUESTION_WORDS, *temporal_words.CURRENT, *temporal_words.PAST]
    # the connectors of two words and more ("trước khi", "kể từ khi", "prior to"): stopwords-iso's unmarked
    # Vietnamese words ("khi") are left out below, not phrases
    phrases += [phrase for phrase in temporal_words.CONNECTORS if " " in phrase]
    for language in LISTED:
        # a Vietnamese entry without a mark ("ai", "con", "anh", "theo") is also an English or a name's word
        phrases += [p for p in stopwordsiso.stopwords(language) if language != "vi" or not p.isascii()]
    return tuple(sorted({unicodedata.normalize("NFC", p.casefold()).strip() for p in phrases} - {""}))


@functools.lru_cache(maxsize=1)
def _lists() -> tuple[frozenset[tuple[str, ...]], frozenset[tuple[str, ...]]]:
    """The Latin-script phrases as their words, and the other scripts' as the analyzer's words (no folding changes
    those)."""
    latin = frozenset(tuple(_WORD.findall(p)) for p in _phrases() if not DENSE_CHAR.search(p))
    dense = frozenset(tuple(analyze(p).body.split()) for p in _phrases() if DENSE_CHAR.search(p))
    return latin, dense
