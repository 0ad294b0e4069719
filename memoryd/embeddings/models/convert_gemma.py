"""Write EmbeddingGemma-300M (Google's sentence-transformers folder) as a llama.cpp `gemma-embedding` GGUF.

The GGUF holds all of sentence-transformers' pipeline, so llama.cpp's vectors are the reference model's: the
Gemma 3 encoder (bidirectional, sliding-window layers with their own RoPE base), mean pooling, and the two dense
projections (768 -> 3072 -> 768, `2_Dense` and `3_Dense`); the caller normalises. The vocabulary is
SentencePiece's (read by `sentencepiece_model`), which llama.cpp tokenizes itself (`llama` model, no space
prefix, BOS and EOS added). Gemma's RMSNorm scales by (1 + weight), llama.cpp's by weight: norms are stored + 1.
numpy, safetensors and `gguf` only, as llama.cpp's own converter does it without torch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.embeddings.models.gguf_meta import write_memoryd_metadata, write_out
from memoryd.embeddings.models.sentencepiece_model import ModelFormatError, PieceType, read_pieces
from memoryd.embeddings.prompts import EMBEDDING_GEMMA

# q8_0 keeps cosine >= 0.9994 to the reference model on memoryd's check texts at 54% of f16's size and the same
# speed; 4- and 5-bit weights fall to 0.93-0.99 (below the check's 0.99), and are not offered.
GEMMA_QUANTS = ("q8_0", "f16")
DENSE = {"2_Dense": "dense_2", "3_Dense": "dense_3"}
_LAYER_NAMES = {
    "input_layernorm": "attn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "post_attention_layernorm": "post_attention_norm",
    "pre_feedforward_layernorm": "ffn_norm",
    "post_feedforward_layernorm": "post_ffw_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


class ConversionError(ValueError):
    """The source files are not the model this converter expects."""


def gguf_name(hf_name: str) -> str:
    """llama.cpp's name for one of the encoder's tensors (`layers.3.mlp.up_proj.weight` -> `blk.3.ffn_up.weight`)."""
    name = hf_name.removeprefix("model.")
    if name == "embed_tokens.weight":
        return "token_embd.weight"
    if name == "norm.weight":
        return "output_norm.weight"
    parts = name.split(".")
    if parts[0] == "layers" and len(parts) >= 4 and parts[1].isdigit():
        inner = ".".join(parts[2:-1])
        if inner in _LAYER_NAMES:
            return f"blk.{int(parts[1])}.{_LAYER_NAMES[inner]}.{parts[-1]}"
    raise ConversionError(f"no GGUF name for tensor {hf_name}")


def _vocabulary(source: Path, vocab_size: int) -> tuple[list[str], list[float], list[int]]:
    """Tokens, scores and types as llama.cpp's converter writes them for a SentencePiece Gemma."""
    import gguf

    try:
        pieces = read_pieces(source / "tokenizer.model")
    except (OSError, ModelFormatError) as exc:
        raise ConversionError(f"tokenizer.model: {exc}") from exc
    tokens = [f"[PAD{i}]" for i in range(vocab_size)]
    scores = [-10000.0] * vocab_size
    types = [int(gguf.TokenType.UNUSED)] * vocab_size
    for index, piece in enumerate(pieces[:vocab_size]):
        tokens[index], scores[index], types[index] = piece.text, piece.score, int(piece.kind)
    added = source / "added_tokens.json"
    if added.is_file():
        for text, index in json.loads(added.read_text(encoding="utf-8")).items():
            if 0 <= index < vocab_size:
                tokens[index], scores[index], types[index] = text, -1000.0, int(PieceType.USER_DEFINED)
    config = source / "tokenizer_config.json"
    decoder = json.loads(config.read_text(encoding="utf-8")).get("added_tokens_decoder", {}) if config.is_file() else {}
    for key, entry in decoder.items():
        index, text = int(key), entry["content"]
        if not 0 <= index < vocab_size:
            continue
        if entry.get("special") or (text.startswith("<") and text.endswith(">")):
            types[index] = int(PieceType.CONTROL)
        else:
            text = text.replace("\u2581", " ")
            types[index] = int(PieceType.USER_DEFINED)
        tokens[index], scores[index] = text, -1000.0
    return tokens, scores, types


def _tensor(writer: Any, name: str, data: np.ndarray, quant: str) -> None:
    """A weight matrix in the chosen type; vectors (norms) stay float32, as llama.cpp needs them."""
    import gguf

    data = np.ascontiguousarray(data, dtype=np.float32)
    if data.ndim < 2:
        writer.add_tensor(name, data)
        return
    if quant == "q8_0" and data.shape[-1] % 32 == 0:
        kind = gguf.GGMLQuantizationType.Q8_0
        writer.add_tensor(name, gguf.quantize(data, kind), raw_dtype=kind)
        return
    writer.add_tensor(name, data.astype(np.float16))


def convert_gemma(
    source: Path, out: Path, quant: str, name: str, progress: Callable[[str, int, int], None] | None = None
) -> None:
    """Write a llama.cpp GGUF from the sentence-transformers folder in source."""
    try:
        _convert(source, out, quant, name, progress)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a config without a key or of another shape
        if isinstance(exc, ConversionError):
            raise
        raise ConversionError(f"the model's files are not EmbeddingGemma's: {type(exc).__name__}: {exc}") from exc


def _convert(source: Path, out: Path, quant: str, name: str, progress: Callable[[str, int, int], None] | None) -> None:
    import gguf
    from safetensors.numpy import load_file

    if quant not in GEMMA_QUANTS:
        raise ConversionError(f"quant must be one of {', '.join(GEMMA_QUANTS)}")
    config = json.loads((source / "config.json").read_text())
    if config.get("model_type") != "gemma3_text" or not config.get("use_bidirectional_attention"):
        raise ConversionError(f"expected an EmbeddingGemma (bidirectional gemma3_text), got {config.get('model_type')}")
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    if not pooling.get("pooling_mode_mean_tokens"):
        raise ConversionError("expected mean pooling (1_Pooling/config.json)")
    n_layers, vocab_size = int(config["num_hidden_layers"]), int(config["vocab_size"])
    dense = {}
    for folder, prefix in DENSE.items():
        dims = json.loads((source / folder / "config.json").read_text())
        if dims.get("bias") or "Identity" not in str(dims.get("activation_function", "Identity")):
            raise ConversionError(f"{folder}: expected a linear projection without bias or activation")
        dense[prefix] = (folder, int(dims["in_features"]), int(dims["out_features"]))

    writer = gguf.GGUFWriter(str(out), "gemma-embedding")
    writer.add_name(name)
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_block_count(n_layers)
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_head_count_kv(int(config["num_key_value_heads"]))
    writer.add_key_length(int(config["head_dim"]))
    writer.add_value_length(int(config["head_dim"]))
    writer.add_layer_norm_rms_eps(float(config["rms_norm_eps"]))
    writer.add_rope_freq_base(float(config["rope_theta"]))
    writer.add_rope_freq_base_swa(float(config["rope_local_base_freq"]))
    writer.add_sliding_window(int(config["sliding_window"]))
    full = [kind == "full_attention" for kind in config.get("layer_types", [])]
    if full:
        writer.add_sliding_window_pattern([not is_full for is_full in full])
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    for prefix, (_, features_in, features_out) in dense.items():
        writer.add_dense_features_dims(prefix, features_in, features_out)
    writer.add_file_type(
        {
            "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
            "f16": gguf.LlamaFileType.MOSTLY_F16,
        }[quant]
    )

    tokens, scores, types = _vocabulary(source, vocab_size)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    gguf_log = logging.getLogger("gguf")  # it warns of tokenizer.json's pair template, which embedding never uses
    level = gguf_log.level
    gguf_log.setLevel(logging.ERROR)
    try:
        special = gguf.SpecialVocab(source, load_merges=False, n_vocab=len(tokens))
    finally:
        gguf_log.setLevel(level)
    special.chat_template = None
    special.add_to_gguf(writer, quiet=True)
    writer.add_add_space_prefix(False)
    write_memoryd_metadata(writer, query_prefix=EMBEDDING_GEMMA.query, document_prefix=EMBEDDING_GEMMA.document)

    tensors = load_file(str(source / "model.safetensors"))
    extra = {f"{prefix}.weight": (folder, prefix) for prefix, (folder, _, _) in dense.items()}
    total, done = len(tensors) + len(extra), 0
    for hf_name, data in tensors.items():
        target = gguf_name(hf_name)
        if target == "token_embd.weight":
            data = data[:vocab_size]
        if hf_name.endswith("norm.weight"):
            data = data.astype(np.float32) + 1.0
        _tensor(writer, target, data, quant)
        done += 1
        if progress:
            progress("convert", done, total)
    for target, (folder, _) in extra.items():
        weights = load_file(str(source / folder / "model.safetensors"))
        if set(weights) != {"linear.weight"}:
            raise ConversionError(f"{folder}: expected one tensor, linear.weight, got {sorted(weights)}")
        _tensor(writer, target, weights["linear.weight"], quant)
        done += 1
        if progress:
            progress("convert", done, total)
    write_out(writer)
