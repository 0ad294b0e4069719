"""The table of model families' prompts: which family a model is, from its GGUF architecture or its names."""

from __future__ import annotations

import pytest

from memoryd.embeddings.prompts import FAMILIES, NONE, family


@pytest.mark.parametrize(
    ("architecture", "names", "expected"),
    [
        ("gemma-embedding", ("my-finetune",), "EmbeddingGemma"),
        ("", ("embeddinggemma:300m",), "EmbeddingGemma"),
        ("nomic-bert", ("",), "nomic-embed"),
        ("", ("nomic-embed-text:latest",), "nomic-embed"),
        ("qwen3", ("Qwen3-Embedding-0.6B",), "Qwen3-Embedding"),
        ("bert", ("multilingual-e5-small",), "E5"),
        ("bert", ("intfloat/e5-large-v2",), "E5"),
        ("", ("snowflake-arctic-embed2:568m",), "Arctic Embed 2"),
        ("bert", ("snowflake-arctic-embed-m",), "Arctic Embed"),
        ("xlm-roberta", ("bge-m3",), "BGE-M3"),
        ("bert", ("all-MiniLM-L6-v2", "nomic-embed-text.gguf"), "MiniLM"),
        ("bert", ("", "nomic-embed-text-v1.5.Q8_0.gguf"), "nomic-embed"),
    ],
)
def test_a_model_is_recognised_by_its_architecture_then_its_names_in_order(
    architecture: str, names: tuple[str, ...], expected: str
) -> None:
    assert family(architecture, *names).name == expected


def test_an_unknown_model_gets_no_prompts_and_a_general_architecture_names_no_family() -> None:
    assert family("qwen3", "Qwen3-4B-Instruct") is NONE and NONE.query == NONE.document == ""
    assert family("bert", "") is NONE
    assert len({f.name for f in FAMILIES}) == len(FAMILIES)
