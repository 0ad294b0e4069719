"""An independent numpy implementation of all-MiniLM-L6-v2 (BERT + mean pooling), to check the GGUF."""

from __future__ import annotations

import json
import math
import unicodedata
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPiece:
    def __init__(self, vocab_path: Path) -> None:
        self.vocab = {t: i for i, t in enumerate(vocab_path.read_text(encoding="utf-8").splitlines())}

    def _basic(self, text: str) -> list[str]:
        cleaned = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
                continue
            if _is_cjk(cp):
                cleaned.append(f" {ch} ")
            elif ch.isspace():
                cleaned.append(" ")
            else:
                cleaned.append(ch)
        words = []
        for word in "".join(cleaned).split():
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(c for c in word if unicodedata.category(c) != "Mn")
            current = ""
            for ch in word:
                if _is_punct(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def encode(self, text: str, max_len: int = 512) -> list[int]:
        ids = [self.vocab["[CLS]"]]
        for word in self._basic(text):
            if len(word) > 100:
                ids.append(self.vocab["[UNK]"])
                continue
            start, pieces = 0, []
            while start < len(word):
                end, found = len(word), None
                while start < end:
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    if piece in self.vocab:
                        found = self.vocab[piece]
                        break
                    end -= 1
                if found is None:
                    pieces = [self.vocab["[UNK]"]]
                    break
                pieces.append(found)
                start = end
            ids.extend(pieces)
        return [*ids[: max_len - 1], self.vocab["[SEP]"]]


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def self_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, heads: int) -> np.ndarray:
    """Scaled dot-product attention of every token to every token, heads concatenated: [n, hidden]."""
    n, hidden = q.shape
    dh = hidden // heads
    q, k, v = (m.reshape(n, heads, dh).transpose(1, 0, 2) for m in (q, k, v))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    scores /= scores.sum(-1, keepdims=True)
    return (scores @ v).transpose(1, 0, 2).reshape(n, -1)


class ReferenceMiniLM:
    def __init__(self, source: Path) -> None:
        self.t = {
            k: v.astype(np.float64)
            for k, v in load_file(str(source / "model.safetensors")).items()
            if k != "embeddings.position_ids"
        }
        self.cfg = json.loads((source / "config.json").read_text())
        self.tok = WordPiece(source / "vocab.txt")

    def embed(self, text: str) -> np.ndarray:
        t, cfg = self.t, self.cfg
        ids = self.tok.encode(text)
        n = len(ids)
        x = (
            t["embeddings.word_embeddings.weight"][ids]
            + t["embeddings.position_embeddings.weight"][:n]
            + t["embeddings.token_type_embeddings.weight"][0]
        )
        eps = cfg["layer_norm_eps"]
        x = layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
        heads = cfg["num_attention_heads"]
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def lin(inp: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return inp @ t[p + name + ".weight"].T + t[p + name + ".bias"]

            ctx = self_attention(
                lin(x, "attention.self.query"), lin(x, "attention.self.key"), lin(x, "attention.self.value"), heads
            )
            x = layer_norm(
                x + lin(ctx, "attention.output.dense"),
                t[p + "attention.output.LayerNorm.weight"],
                t[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            h = gelu(lin(x, "intermediate.dense"))
            x = layer_norm(
                x + lin(h, "output.dense"), t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], eps
            )
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)
