"""Remote providers over real HTTP against local servers that speak each provider's wire format."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memoryd.config import ConfigError, EmbeddingConfig, quickstart_agent
from memoryd.embeddings.base import EmbeddingError
from memoryd.embeddings.select import ProviderChain, build_provider, create_embedder
from memoryd.memory import AgentMemory

from .conftest import write
from .fake_providers import FakeProvider

KEY = "sk-test-SECRET-0123456789"
KINDS = ("openai", "gemini", "voyage", "ollama")


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeProvider]:
    server = FakeProvider(request.param)
    yield server
    server.close()


def config(server: FakeProvider, **extra: object) -> EmbeddingConfig:
    settings: dict[str, object] = {"max_retries": 3, "timeout": 5.0, **extra}
    return EmbeddingConfig(provider=server.kind, api_key=KEY, base_url=server.base_url, **settings)  # type: ignore[arg-type]


def test_auto_uses_a_key_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "VOYAGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    agent = quickstart_agent(tmp_path / "ws", tmp_path / "data", embedding=EmbeddingConfig(provider="auto"))
    embedder, reason = create_embedder(agent)
    assert embedder is None and "no local model and no API key" in (reason or "")
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    embedder, _ = create_embedder(agent)
    assert embedder is not None and embedder.provider == "voyage" and KEY not in repr(embedder)
    missing = quickstart_agent(tmp_path / "ws", tmp_path / "data", embedding=EmbeddingConfig(provider="openai"))
    embedder, reason = create_embedder(missing)
    assert embedder is None and "OPENAI_API_KEY" in (reason or "")


@pytest.mark.parametrize("fake", KINDS, indirect=True)
def test_provider_indexes_and_searches(fake: FakeProvider, workspace: Path, data_dir: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n\n# Food\napples and pears\n")
    agent = quickstart_agent(workspace, data_dir, embedding=config(fake))
    with AgentMemory(agent) as memory:
        report = memory.sync()
        assert report.embedded == 2 and report.embedding_error is None
        response = memory.search("JWT expiry", mode="vector")
        assert response.mode == "vector" and response.provider == fake.kind
        assert response.results[0].snippet.startswith("# Auth")
        assert memory.status()["dims"] == fake.dims
    documents, query = fake.embed_requests()[0], fake.embed_requests()[-1]
    if fake.kind == "openai":
        assert (
            documents.headers["authorization"] == f"Bearer {KEY}"
            and documents.body["model"] == "text-embedding-3-small"
        )
    if fake.kind == "gemini":
        assert documents.headers["x-goog-api-key"] == KEY
        assert documents.body["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT"
        assert query.body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
        assert documents.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    if fake.kind == "voyage":
        assert documents.body["input_type"] == "document" and query.body["input_type"] == "query"
    if fake.kind == "ollama":  # nomic-embed-text, Ollama's default here: its family's prompts go with the text
        assert documents.path == "/api/embed" and documents.body["input"] == [
            "search_document: # Auth\nJWT with 24h expiry",
            "search_document: # Food\napples and pears",
        ]
        assert query.body["input"] == ["search_query: JWT expiry"]


@pytest.mark.parametrize("fake", ["ollama"], indirect=True)
def test_ollama_models_get_their_familys_prompts_unless_settings_say_otherwise(fake: FakeProvider) -> None:
    gemma = build_provider("ollama", config(fake, model="embeddinggemma:300m"))
    gemma.embed_documents(["billing moved to Memcached"])
    gemma.embed_query("which cache does billing use?")
    sent = [r.body["input"] for r in fake.embed_requests()]
    assert sent == [
        ["title: none | text: billing moved to Memcached"],
        ["task: search result | query: which cache does billing use?"],
    ]
    assert gemma.prompts_from == "EmbeddingGemma family" and gemma.model.startswith("embeddinggemma:300m+prefix-")
    assert {r.body["model"] for r in fake.embed_requests()} == {"embeddinggemma:300m"}, "Ollama is asked for its name"
    plain = build_provider("ollama", config(fake, model="some-embedder"))
    plain.embed_query("hello")
    assert fake.embed_requests()[-1].body["input"] == ["hello"]
    assert plain.prompts_from == "none" and plain.model == "some-embedder"
    mine = build_provider("ollama", config(fake, model="embeddinggemma", query_prefix="q> ", document_prefix=""))
    mine.embed_query("hello")
    mine.embed_documents(["doc"])
    assert [r.body["input"] for r in fake.embed_requests()[-2:]] == [["q> hello"], ["doc"]]
    assert mine.prompts_from == "settings" and mine.model != gemma.model


@pytest.mark.parametrize("fake", KINDS, indirect=True)
def test_429_with_retry_after_is_honoured(fake: FakeProvider) -> None:
    embedder = build_provider(fake.kind, config(fake))
    fake.faults.append(("429", 1))
    started = time.monotonic()
    vectors = embedder.embed_documents(["hello", "world"])
    assert vectors.shape == (2, fake.dims)
    first, second = fake.embed_requests()
    assert second.at - first.at >= 0.95 and time.monotonic() - started >= 0.95


@pytest.mark.parametrize("fake", KINDS, indirect=True)
def test_500_then_success(fake: FakeProvider) -> None:
    embedder = build_provider(fake.kind, config(fake))
    fake.faults.extend([("500",), ("500",)])
    assert embedder.embed_query("hello").shape == (fake.dims,)
    assert len(fake.embed_requests()) == 3


@pytest.mark.parametrize("fake", KINDS, indirect=True)
def test_malformed_json_and_wrong_dimension_are_clear_errors(fake: FakeProvider) -> None:
    embedder = build_provider(fake.kind, config(fake))
    fake.faults.append(("malformed",))
    with pytest.raises(EmbeddingError, match="malformed"):
        embedder.embed_documents(["x"])
    embedder.embed_documents(["learn the dimension"])
    fake.faults.append(("dims", fake.dims + 5))
    with pytest.raises(EmbeddingError, match=f"expected {fake.dims}"):
        embedder.embed_documents(["y"])


@pytest.mark.parametrize("fake", ["openai"], indirect=True)
def test_provider_failure_keeps_keyword_search_and_says_so(fake: FakeProvider, workspace: Path, data_dir: Path) -> None:
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    agent = quickstart_agent(workspace, data_dir, embedding=config(fake, max_retries=1))
    with AgentMemory(agent) as memory:
        fake.faults.extend([("500",)] * 10)
        report = memory.sync()
        assert "giving up" in (report.embedding_error or "")
        response = memory.search("JWT")
        assert response.mode == "keyword" and response.degraded and response.results
        assert KEY not in (report.embedding_error or "") and KEY not in str(memory.status())
        fake.faults.clear()
        memory.sync()  # the provider is back: stored chunks get their vectors
        assert memory.search("JWT").mode == "hybrid"


def test_dead_primary_falls_back(workspace: Path, data_dir: Path) -> None:
    ollama = FakeProvider("ollama")
    try:
        write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n\n# Food\napples\n")
        cfg = EmbeddingConfig(
            provider="openai",
            api_key=KEY,
            base_url="http://127.0.0.1:9/v1",
            max_retries=1,
            timeout=2.0,
            fallback="ollama",
            fallback_base_url=ollama.base_url,
            fallback_model="nomic-embed-text",
        )
        agent = quickstart_agent(workspace, data_dir, embedding=cfg)
        with AgentMemory(agent) as memory:
            assert isinstance(memory.embedder, ProviderChain)
            first = memory.sync()
            assert first.embedding_error is not None
            status = memory.status()
            assert status["provider"] == "ollama" and "openai failed" in status["fallback_reason"]
            memory.sync()
            response = memory.search("JWT expiry", mode="vector")
            assert response.mode == "vector" and response.provider == "ollama"
            assert response.results[0].snippet.startswith("# Auth")
    finally:
        ollama.close()


def test_switching_provider_needs_a_reindex_and_stays_keyword_only_until_then(workspace: Path, data_dir: Path) -> None:
    first, second = FakeProvider("ollama", dims=64), FakeProvider("voyage", dims=32)
    try:
        write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
        agent = quickstart_agent(workspace, data_dir, embedding=config(first))
        with AgentMemory(agent) as memory:
            memory.sync()
            assert memory.search("JWT").mode == "hybrid"
        moved = replace(agent, embedding=config(second))
        with AgentMemory(moved) as memory:
            assert "embedding model changed" in (memory.syncer.needs_reindex() or "")
            response = memory.search("JWT")
            assert response.mode == "keyword" and "reindex needed" in (response.degraded or "")
            memory.reindex()
            assert memory.syncer.needs_reindex() is None
            assert memory.search("JWT").mode == "hybrid" and memory.status()["dims"] == 32
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("fake", ["openai", "gemini"], indirect=True)
def test_batch_api_and_its_switch_off_after_two_failures(fake: FakeProvider) -> None:
    embedder = build_provider(fake.kind, config(fake, batch_api=True))
    embedder.batch_min_items = 10  # type: ignore[attr-defined]
    embedder.batch_poll_seconds = 0.01  # type: ignore[attr-defined]
    texts = [f"note number {i} about topic {i % 7}" for i in range(25)]
    expected = np.asarray(fake.vectors(texts), dtype=np.float32)

    def inline_calls() -> int:
        return sum(r.path.endswith(("/embeddings", ":batchEmbedContents")) for r in fake.requests)

    assert np.allclose(embedder.embed_documents(texts), expected, atol=1e-5)
    assert len(fake.batches) == 1 and inline_calls() == 0
    fake.batch_faults.extend(["failed", "failed"])
    for _ in range(2):  # a failed batch: inline requests take over
        assert np.allclose(embedder.embed_documents(texts), expected, atol=1e-5)
    assert embedder.batch_failures == 2 and inline_calls() > 0  # type: ignore[attr-defined]
    assert "ended" in (embedder.last_batch_error or "")  # type: ignore[attr-defined]
    jobs = len(fake.batches)
    assert np.allclose(embedder.embed_documents(texts), expected, atol=1e-5)
    assert len(fake.batches) == jobs  # switched off for the run


def test_daemon_runtime_reindexes_after_a_mid_life_fallback(workspace: Path, data_dir: Path, tmp_path: Path) -> None:
    from memoryd.config import Config
    from memoryd.daemon.runtime import AgentRuntime

    primary, fallback = FakeProvider("openai", dims=48), FakeProvider("ollama", dims=40)
    write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
    cfg = EmbeddingConfig(
        provider="openai",
        api_key=KEY,
        base_url=primary.base_url,
        max_retries=1,
        timeout=2.0,
        fallback="ollama",
        fallback_base_url=fallback.base_url,
    )
    agent = quickstart_agent(workspace, data_dir, embedding=cfg)
    runtime = AgentRuntime(agent, Config(data_dir=data_dir, socket=tmp_path / "s", agents=(agent,)))
    try:
        runtime.sync_now()
        assert runtime.memory.search("JWT").provider == "openai"
        primary.close()  # the primary dies mid-life
        write(workspace / "memory" / "new.md", "# Food\napples and pears\n")
        runtime.sync_now()
        runtime.wait_reindex(60)
        status = runtime.status()
        assert status["reindex"]["state"] == "done" and "openai failed" in status["fallback_reason"]
        response = runtime.memory.search("apples", mode="vector")
        assert response.mode == "vector" and response.provider == "ollama" and status["dims"] == 40
        assert response.results[0].path == "memory/new.md"
    finally:
        runtime.close()
        fallback.close()


def test_chain_returns_to_a_recovered_primary(workspace: Path, data_dir: Path) -> None:
    primary, fallback = FakeProvider("openai", dims=48), FakeProvider("ollama", dims=40)
    try:
        write(workspace / "MEMORY.md", "# Auth\nJWT with 24h expiry\n")
        cfg = EmbeddingConfig(
            provider="openai",
            api_key=KEY,
            base_url=primary.base_url,
            max_retries=0,
            fallback="ollama",
            fallback_base_url=fallback.base_url,
        )
        with AgentMemory(quickstart_agent(workspace, data_dir, embedding=cfg)) as memory:
            chain = memory.embedder
            assert isinstance(chain, ProviderChain)
            primary.faults.extend([("500",)] * 3)
            memory.sync()
            memory.sync()
            assert chain.provider == "ollama" and memory.search("JWT").provider == "ollama"
            primary.faults.clear()
            chain.retry_primary_seconds = 0
            write(workspace / "memory" / "new.md", "# Food\napples\n")
            report = memory.sync()
            assert "recovered" in (report.embedding_error or "") and chain.provider == "openai"
            assert "is back" in memory.status()["fallback_reason"]
            memory.reindex()
            response = memory.search("JWT", mode="vector")
            assert response.provider == "openai" and memory.status()["dims"] == 48
    finally:
        primary.close()
        fallback.close()


def test_a_third_party_provider_plugs_in_through_an_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package that declares `[project.entry-points."memoryd.embeddings"]` is usable by name in config."""
    from memoryd.config import load_config
    from memoryd.embeddings import registry

    dist = tmp_path / "memoryd_tinyplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memoryd-tinyplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[memoryd.embeddings]\ntinyplug = memoryd_tinyplug:provider\n")
    (tmp_path / "memoryd_tinyplug.py").write_text(
        "from memoryd.embeddings.hashing import HashingEmbedder\n"
        "class Tiny(HashingEmbedder):\n    provider = 'tinyplug'\n"
        "def provider(cfg, as_fallback=False):\n    return Tiny(32)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._plugins.cache_clear()
    try:
        assert "tinyplug" in registry.provider_names()
        config = tmp_path / "c.toml"
        config.write_text(
            f'[[agents]]\nid = "a"\nworkspace = "{tmp_path}"\n[agents.embedding]\nprovider = "tinyplug"\n'
        )
        agent = load_config(config).default_agent
        embedder, reason = create_embedder(agent)
        assert embedder is not None and embedder.provider == "tinyplug" and embedder.dims == 32 and reason is None
        config.write_text(f'[[agents]]\nid = "a"\nworkspace = "{tmp_path}"\n[agents.embedding]\nprovider = "tinyplg"\n')
        with pytest.raises(ConfigError, match="unknown provider 'tinyplg'"):
            load_config(config)
    finally:
        registry._plugins.cache_clear()
