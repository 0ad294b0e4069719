"""Text made safe to stand inside a memoryd frame: what recall's block (memoryd.recall.block) and the hooks show is
quoted with `quote_for_frame`, so no text inside can close or reopen the frame or hide itself from the reader."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC, SOS strings
    r"|\x1b[@-Z\\-_]?"  # two-character escapes, and a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the 8-bit CSI
)
_SPACE = re.compile(r"\s+")
_LINE_SPACE = re.compile(r"[^\S\n]+")
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# what a reader takes for the Latin letters of memoryd's tags (memoryd, recall, notes) and for angle brackets,
# beyond what NFKD folds
_LOOKALIKES = {
    "a": "аАαΑɑ⍺ᴀꓮⱥ",
    "c": "сСϲϹᴄⲥⲤꓚᏟꮯȼƈ",
    "d": "ԁԀᴅꓓᎠꭰɗɖđᑯ",
    "e": "еЕҽҼεΕᴇ℮ɛꓰᎬꭼɇ",
    "l": "ӏӀǀΙꓡᏞꮮʟłƚɫɭ",
    "m": "мМΜᴍᎷꮇꓟɱϺϻⲘⲙ",
    "n": "ΝɴꓠոⲚⲛηɲɳƞп",
    "o": "оОοΟσօՕᴏⲟⲞꓳøɵ",
    "r": "гʀꓣᎡꭱɍɽɾɼ",
    "s": "ѕЅꜱꓢᏚꮪʂȿ",
    "t": "тТτΤᴛꓔᎢꭲŧƭʈƫ",
    "y": "уУүҮγΥʏꓬᎩꭹƴɏყ",
    "<": "‹〈⟨⟪《«˂˱ᐸᐹᚲ❬❮❰⧼⦑≺",
    ">": "›〉⟩⟫》»˃˲ᐳᐴ❭❯❱⧽⦒≻",
}
_SKELETON = {lookalike: latin for latin, lookalikes in _LOOKALIKES.items() for lookalike in lookalikes}
_UNSEEN = frozenset(("Mn", "Mc", "Me", "Cf"))  # combining marks and invisible format characters
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers: letters that show as nothing
# on folded text: a memoryd tag, opening or closing; brackets just before one count as its own, so that all are made
# square and quoting twice changes nothing
_FRAME_TAG = re.compile(r"<[^a-z0-9]{0,8}memoryd[^<>]{0,64}>?")
_ANGLE = re.compile("[<>]")
_MAX_CACHED = 1 << 14  # characters remembered by each translation table: at most a few MB, whatever a text holds


def _fold(ch: str) -> str:
    """A character as a tag check reads it: compatibility forms decomposed, marks and invisible letters dropped,
    lookalike letters and angle brackets as their ASCII skeleton, lower case. Empty for a mark, longer for `ﬁ`."""
    kept = []
    for part in unicodedata.normalize("NFKD", _SKELETON.get(ch, ch)):
        for low in _SKELETON.get(part, part).lower():
            if unicodedata.category(low) not in _UNSEEN and low not in _FILLERS:
                kept.append(_SKELETON.get(low, low))
    return "".join(kept)


class _Translation(dict[int, str]):
    """A str.translate table that maps each character with `per_char` the first time it is met, so a long text
    is mapped at C speed; it forgets what it holds when it grows past _MAX_CACHED."""

    def __init__(self, per_char: Callable[[str], str]) -> None:
        super().__init__()
        self.per_char = per_char

    def __missing__(self, code: int) -> str:
        if len(self) >= _MAX_CACHED:
            self.clear()
        mapped = self[code] = self.per_char(chr(code))
        return mapped


_FOLDED = _Translation(_fold)


def neutral_tags(text: str) -> str:
    """The text with every memoryd tag's angle brackets, and their lookalikes, made square: `[/memoryd-recall]`.
    Tags are found in the folded text and changed in the original, so letters and marks are left as written."""
    folded = text.translate(_FOLDED)
    if "memoryd" not in folded:
        return text
    tags = [match.span() for match in _FRAME_TAG.finditer(folded)]
    if not tags:
        return text
    folded_ends = list(accumulate(map(len, map(_FOLDED.__getitem__, map(ord, text)))))  # where each char's fold ends
    chars = list(text)
    for start, end in tags:
        for angle in _ANGLE.finditer(folded, start, end):
            chars[bisect_right(folded_ends, angle.start())] = "[" if angle.group() == "<" else "]"
    return "".join(chars)


def _printable(ch: str) -> str:
    """A control character as a space; an invisible format character (zero-width, bidi override) as nothing."""
    kind = unicodedata.category(ch)
    if kind in ("Cc", "Zl", "Zp"):
        return " "
    if kind == "Cf":
        return ""
    if kind == "Cs":
        return "\ufffd"
    return ch


_PRINTABLE = _Translation(_printable)


def quote_for_frame(text: str, *, keep_lines: bool = False) -> str:
    """Text as it may stand inside a memoryd frame: no tag of a memoryd frame (in any case, spacing, full-width or
    lookalike letter, bracket or mark), no terminal escapes, control or invisible format characters, and all on one
    line (or, with `keep_lines`, line breaks kept as plain newlines and nothing else)."""
    text = _ESCAPES.sub("", text)
    if keep_lines:
        lines = _LINE_BREAKS.sub("\n", text).split("\n")
        text = "\n".join(_LINE_SPACE.sub(" ", line.translate(_PRINTABLE)).strip() for line in lines)
    else:
        text = _SPACE.sub(" ", text.translate(_PRINTABLE)).strip()
    return neutral_tags(text)
