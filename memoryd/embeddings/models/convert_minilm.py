"""Write all-MiniLM-L6-v2 (sentence-transformers files: safetensors, WordPiece vocab) as a llama.cpp BERT GGUF."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memoryd.embeddings.models.gguf_meta import write_out

MINILM_QUANTS = ("q8_0", "f16", "f32")


class ConversionError(ValueError):
    """The source files are not the model this converter expects."""


def _read_vocab(source: Path) -> list[str]:
    return (source / "vocab.txt").read_text(encoding="utf-8").splitlines()


def convert_minilm(
    source: Path, out: Path, quant: str, name: str, progress: Callable[[str, int, int], None] | None = None
) -> None:
    """Write a llama.cpp BERT GGUF from the sentence-transformers files in source."""
    import gguf
    from safetensors.numpy import load_file

    if quant not in MINILM_QUANTS:
        raise ConversionError(f"quant must be one of {', '.join(MINILM_QUANTS)}")
    config = json.loads((source / "config.json").read_text())
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    if config.get("model_type") != "bert":
        raise ConversionError(f"expected a BERT model, got {config.get('model_type')}")
    tensors = load_file(str(source / "model.safetensors"))
    vocab = _read_vocab(source)
    n_layers = int(config["num_hidden_layers"])

    writer = gguf.GGUFWriter(str(out), "bert")
    writer.add_name(name)
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_block_count(n_layers)
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_layer_norm_eps(float(config["layer_norm_eps"]))
    writer.add_causal_attention(False)
    mean = pooling.get("pooling_mode_mean_tokens", True)
    writer.add_pooling_type(gguf.PoolingType.MEAN if mean else gguf.PoolingType.CLS)
    file_type = {
        "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
        "f16": gguf.LlamaFileType.MOSTLY_F16,
        "f32": gguf.LlamaFileType.ALL_F32,
    }[quant]
    writer.add_file_type(file_type)

    special = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    token_types = [gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in vocab]
    # llama.cpp's WordPiece uses a "phantom space" marker for word starts instead of "##" for continuations.
    pieces = [t if t in special else (t[2:] if t.startswith("##") else "\u2581" + t) for t in vocab]
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(pieces)
    writer.add_token_types(token_types)
    writer.add_token_type_count(int(config.get("type_vocab_size", 2)))
    ids = {t: i for i, t in enumerate(vocab)}
    writer.add_unk_token_id(ids["[UNK]"])
    writer.add_pad_token_id(ids["[PAD]"])
    writer.add_bos_token_id(ids["[CLS]"])  # llama.cpp's WordPiece treats [CLS] as BOS
    writer.add_sep_token_id(ids["[SEP]"])
    writer.add_mask_token_id(ids["[MASK]"])
    writer.add_add_bos_token(True)
    writer.add_add_sep_token(True)

    names = gguf.TensorNameMap(gguf.MODEL_ARCH.BERT, n_layers)
    keep_f32 = ("position_embd", "token_types")
    items = [
        (k, v) for k, v in tensors.items() if k not in ("embeddings.position_ids",) and not k.startswith("pooler.")
    ]
    for done, (hf_name, data) in enumerate(items, 1):
        tensor = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if tensor is None:
            raise ConversionError(f"no GGUF name for tensor {hf_name}")
        data = data.astype(np.float32)
        if data.ndim == 2 and quant != "f32" and not tensor.startswith(keep_f32):
            if quant == "q8_0" and data.shape[1] % 32 == 0:
                writer.add_tensor(
                    tensor,
                    gguf.quantize(data, gguf.GGMLQuantizationType.Q8_0),
                    raw_dtype=gguf.GGMLQuantizationType.Q8_0,
                )
            else:
                writer.add_tensor(tensor, data.astype(np.float16))
        else:
            writer.add_tensor(tensor, data)
        if progress:
            progress("convert", done, len(items))
    write_out(writer)
