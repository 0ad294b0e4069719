"""SentencePiece unigram tokenization in Python, exactly as llama.cpp's UGM tokenizer does it, for a fraction of
its memory.

llama.cpp builds a trie of small nodes for every piece when it loads a UGM model: about 127 MB for
multilingual-e5-small's 250k pieces, resident for as long as the model is. memoryd's e5 GGUF therefore tells
llama.cpp it has no tokenizer (`tokenizer.ggml.model = "none"`, with `<arch>.vocab_size` so the embedding table
keeps its rows) and carries the pieces as a MARISA trie (`memoryd.tokenizer.*`, under 1 MB, built by
`memoryd model prepare`), which is loaded with the model and dropped with it.

The segmentation follows llama.cpp (src/llama-vocab.cpp, `llm_tokenizer_ugm_session`) rule for rule:
- spaces: every run of non-space characters is preceded by one `▁`, other spaces vanish;
- normal, user-defined and unused pieces can match (control pieces never do; a later duplicate wins);
- Viterbi in order of start, then length; a challenger replaces the best path to a position only when strictly
  better;
- where no single piece covers a character, it may be an unknown token, scored the lowest normal score minus 10;
- consecutive unknown tokens collapse into one, and the begin and end tokens frame the result.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import marisa_trie

from memoryd.embeddings.models.gguf_meta import GGUFFormatError, read_keys

UNKNOWN_PENALTY = 10.0
SPACE = "\u2581"
# GGUF token types (as SentencePiece's)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
KEY_PREFIX = "memoryd.tokenizer."
_KEYS = ("trie", "ids", "scores", "unknown_score", "longest", "bos", "eos", "unk")


@dataclass(frozen=True)
class Vocabulary:
    """The pieces that can match, as a trie; `ids` and `scores` are indexed by the trie's own key ids."""

    trie: bytes
    ids: array  # trie key id -> token id
    scores: array  # trie key id -> piece score
    unknown_score: float
    longest: int  # characters in the longest piece
    bos: int
    eos: int
    unk: int

    @classmethod
    def build(
        cls, pieces: Sequence[str], scores: Sequence[float], types: Sequence[int], *, bos: int, eos: int, unk: int
    ) -> Vocabulary:
        if not len(pieces) == len(scores) == len(types):
            raise ValueError("pieces, scores and types differ in length")
        normal = [float(s) for s, kind in zip(scores, types, strict=True) if kind == NORMAL]
        if not normal:
            raise ValueError("the vocabulary has no normal pieces")
        token_of: dict[str, int] = {}
        for token_id, (piece, kind) in enumerate(zip(pieces, types, strict=True)):
            if kind in (NORMAL, USER_DEFINED, UNUSED) and piece:
                token_of[piece] = token_id
        trie = marisa_trie.Trie(token_of)
        ids, key_scores = array("i", [0] * len(trie)), array("f", [0.0] * len(trie))
        for piece, key in trie.iteritems():
            ids[key] = token_of[piece]
            key_scores[key] = scores[token_of[piece]]
        longest = max(map(len, token_of))
        return cls(trie.tobytes(), ids, key_scores, min(normal) - UNKNOWN_PENALTY, longest, bos, eos, unk)

    def write(self, writer: Any) -> None:
        """As `memoryd.tokenizer.*` keys of a GGUF being written (`gguf.GGUFWriter`)."""
        import gguf

        kind = gguf.GGUFValueType
        writer.add_key_value(KEY_PREFIX + "trie", self.trie, kind.ARRAY, kind.UINT8)
        writer.add_key_value(KEY_PREFIX + "ids", self.ids.tolist(), kind.ARRAY, kind.INT32)
        writer.add_key_value(KEY_PREFIX + "scores", self.scores.tolist(), kind.ARRAY, kind.FLOAT32)
        writer.add_float32(KEY_PREFIX + "unknown_score", self.unknown_score)
        for name in ("longest", "bos", "eos", "unk"):
            writer.add_key_value(KEY_PREFIX + name, getattr(self, name), kind.INT32)

    @classmethod
    def read(cls, path: str | Path) -> Vocabulary:
        keys = {KEY_PREFIX + name for name in _KEYS}
        found = read_keys(path, keys)
        if missing := sorted(keys - found.keys()):
            raise GGUFFormatError(f"{path} has no {', '.join(missing)} (run: memoryd model prepare --force)")
        get = {name: found[KEY_PREFIX + name] for name in _KEYS}
        if not len(get["ids"]) == len(get["scores"]):
            raise GGUFFormatError(f"{path}: the tokenizer's ids and scores differ in length")
        return cls(
            get["trie"].tobytes(),
            get["ids"],
            get["scores"],
            get["unknown_score"],
            get["longest"],
            get["bos"],
            get["eos"],
            get["unk"],
        )


class UnigramTokenizer:
    """Token ids for text (already normalised), framed by the begin and end tokens."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self._trie = marisa_trie.Trie().frombytes(vocabulary.trie)
        if len(self._trie) != len(vocabulary.ids):
            raise GGUFFormatError("the tokenizer's trie and ids differ in length")

    @classmethod
    def from_gguf(cls, path: str | Path) -> UnigramTokenizer:
        return cls(Vocabulary.read(path))

    def pieces(self, text: str) -> list[int]:
        """The best segmentation of `text`, without the framing tokens."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: an unknown character, like any other
            text = text.encode("utf-8", "replace").decode("utf-8")
        chars = "".join(SPACE + word for word in text.split(" ") if word)
        n = len(chars)
        vocabulary = self.vocabulary
        unknown, unknown_score, scores = vocabulary.unk, vocabulary.unknown_score, vocabulary.scores
        best = [0.0] + [float("-inf")] * n
        came_from = [0] * (n + 1)
        key = [-1] * (n + 1)  # trie key id of the last piece on the best path; -1 for an unknown character
        prefixes, longest = self._trie.iter_prefixes_with_ids, vocabulary.longest
        for start in range(n):
            base = best[start]
            single = False
            for piece, piece_key in prefixes(chars[start : start + longest]):
                end = start + len(piece)
                if end == start + 1:
                    single = True
                score = base + scores[piece_key]
                if score > best[end]:
                    best[end], came_from[end], key[end] = score, start, piece_key
            if not single and base + unknown_score > best[start + 1]:
                best[start + 1], came_from[start + 1], key[start + 1] = base + unknown_score, start, -1
        ids = vocabulary.ids
        out: list[int] = []
        position, previous_unknown = n, False
        while position > 0:
            is_unknown = key[position] < 0
            if not (previous_unknown and is_unknown):
                out.append(unknown if is_unknown else ids[key[position]])
            previous_unknown = is_unknown
            position = came_from[position]
        out.reverse()
        return out

    def encode(self, text: str, max_tokens: int) -> list[int]:
        """`[bos, pieces..., eos]`, cut to `max_tokens` with the end token kept. Only the start of a long text is
        segmented (a query may be megabytes): a piece never spans a space, so cut at a space the words before it
        segment as they would in the whole text, and the start is long enough to fill `max_tokens`."""
        limit = 2 * max_tokens * self.vocabulary.longest
        if len(text) > limit:
            space = text.rfind(" ", limit // 2, limit)
            text = text[: space if space > 0 else limit]
        body = self.pieces(text)[: max(0, max_tokens - 2)]
        return [self.vocabulary.bos, *body, self.vocabulary.eos]
