from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.config import ConfigError, load_config


def test_zero_config_gives_one_default_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    monkeypatch.delenv("MEMORYD_CONFIG", raising=False)
    monkeypatch.delenv("MEMORYD_DATA_DIR", raising=False)
    config = load_config()
    agent = config.default_agent
    assert agent.id == "main"
    assert agent.query.max_results == 6
    assert (agent.query.vector_weight, agent.query.text_weight, agent.query.candidate_multiplier) == (0.5, 0.5, 4)
    assert agent.query.fusion == "adaptive"
    assert (agent.chunking.tokens, agent.chunking.overlap) == (400, 80)
    assert agent.sources == ("memory",)
    assert agent.store.is_relative_to(tmp_path / "share")
    assert agent.embedding.model_path.endswith("multilingual-e5-small.q4_0.gguf")


def test_workspace_quickstart_needs_no_file(tmp_path: Path) -> None:
    config = load_config(workspace=tmp_path / "ws", data_dir=tmp_path / "data", socket=tmp_path / "s.sock")
    assert [a.id for a in config.agents] == ["main"]
    assert config.default_agent.workspace == tmp_path / "ws"
    assert config.socket == tmp_path / "s.sock"


def test_toml_agents_are_isolated_and_defaults_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        """
data_dir = "data"
[defaults.query]
max_results = 9
[[agents]]
id = "alpha"
workspace = "~/alpha"
extra_paths = ["notes", "/abs/file.md"]
[agents.query]
fusion = "rrf"
[[agents]]
id = "beta"
workspace = "beta"
sources = ["memory", "sessions"]
sessions_dir = "sessions"
[agents.chunking]
tokens = 200
overlap = 20
"""
    )
    monkeypatch.setenv("MEMORYD_CONFIG", str(cfg))
    config = load_config()
    alpha, beta = config.agents
    assert alpha.workspace == Path("~/alpha").expanduser()
    assert alpha.extra_paths == (Path("~/alpha/notes").expanduser(), Path("/abs/file.md"))
    assert alpha.query.fusion == "rrf" and alpha.query.max_results == 9
    assert beta.workspace == tmp_path / "beta"
    assert beta.chunking.tokens == 200 and beta.query.max_results == 9
    assert alpha.store != beta.store
    assert alpha.store.parent.parent == tmp_path / "data" / "agents"
    assert config.agent("beta") is beta
    with pytest.raises(ConfigError, match="unknown agent"):
        config.agent("gamma")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[agents]]\nid = "a"\nworkspace = "w"\ncolour = 1\n', "unknown key"),
        ('[[agents]]\nid = "a"\nworkspace = "w"\n[agents.query]\nmax_results = "six"\n', "max_results: .*integer"),
        ('[[agents]]\nid = "a"\nworkspace = "w"\nsources = ["email"]\n', "sources.0: .*'memory' or 'sessions'"),
        # strings where a list is meant were iterated character by character (indexing / and ~)
        ('[[agents]]\nid = "a"\nworkspace = "w"\nextra_paths = "~/notes"\n', r"extra_paths: .*valid array"),
        ('[[agents]]\nid = "a"\nworkspace = "w"\nredact = "CORP"\n', r"redact: .*valid array"),
        # [daemon] was coerced: "false" became True, negatives passed, misspelt keys and tables were ignored
        ('[daemon]\nsync_on_search = "false"\n', r"\[daemon\]\.sync_on_search: .*boolean"),
        ("[daemon]\ndebounce_seconds = -1\n", "debounce_seconds: .*greater than or equal to 0"),
        ("[daemon]\nreconcile_secs = 3\n", "reconcile_secs: unknown key \\(did you mean 'reconcile_seconds'\\?\\)"),
        ("[deamon]\ndebounce_seconds = 1\n", "deamon: unknown key \\(did you mean 'daemon'\\?\\)"),
        ('[[agents]]\nid = "a"\nworkspace = "w"\n[agents.query]\nmax_resuls = 3\n', "did you mean 'max_results'"),
        ('[[agents]]\nid = "a"\nworkspace = "w"\n[agents.query]\nmin_score = 1.5\n', "min_score: .*less than or equal"),
        ('[[agents]]\nid = "a"\nworkspace = "w"\n[[agents]]\nid = "a"\nworkspace = "v"\n', "unique"),
        ('[[agents]]\nid = "a"\nworkspace = "w"\n[agents.chunking]\ntokens = 100\noverlap = 100\n', "overlap"),
        ("this is not toml = = =", "config.toml"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path: Path, body: str, message: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(body)
    with pytest.raises(ConfigError, match=message):
        load_config(cfg)


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_recall_and_session_settings(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "[daemon]\nsession_debounce_seconds = 2\nsession_sync_bytes = 1000\nsession_sync_messages = 7\n"
        '[[agents]]\nid = "a"\nworkspace = "w"\nsources = ["memory", "sessions"]\nsessions_dir = "chats"\n'
        'redact = ["CORP-\\\\d+"]\n[agents.query]\nevergreen = ["NOTES.md"]\ndecay = true\nmmr = true\n'
    )
    config = load_config(cfg)
    agent = config.agents[0]
    assert (config.session_debounce_seconds, config.session_sync_bytes, config.session_sync_messages) == (2.0, 1000, 7)
    assert agent.sessions_dirs == (tmp_path / "w" / "chats",) and agent.redact == ("CORP-\\d+",)
    assert agent.query.evergreen == ("NOTES.md",) and agent.query.decay and agent.query.mmr
    cfg.write_text('[[agents]]\nid = "a"\nworkspace = "w"\nredact = ["("]\n')
    with pytest.raises(ConfigError, match="bad redact pattern"):
        load_config(cfg)


def test_clients_find_the_data_dir_the_daemon_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """memoryd_client.protocol.paths repeats, without pydantic, how the config decides the data dir (clients read the
    daemon's lock there): the two must agree."""
    from memoryd_client.protocol.paths import default_data_dir as clients_data_dir

    for key in ("MEMORYD_DATA_DIR", "MEMORYD_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    assert clients_data_dir() == str(load_config().data_dir)
    config = tmp_path / "c.toml"
    config.write_text('data_dir = "relative/data"\n')
    monkeypatch.setenv("MEMORYD_CONFIG", str(config))
    assert clients_data_dir() == str(load_config().data_dir)
    monkeypatch.setenv("MEMORYD_DATA_DIR", str(tmp_path / "explicit"))
    assert clients_data_dir() == str(load_config().data_dir)


def test_a_prepared_model_is_named_instead_of_its_path(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    body = '[[agents]]\nid = "a"\nworkspace = "{ws}"\n[agents.embedding]\nprovider = "{provider}"\nmodel = "{model}"\n'
    (tmp_path / "ws").mkdir()

    def load(provider: str, model: str, check: bool = False) -> str:
        cfg.write_text(body.format(ws=tmp_path / "ws", provider=provider, model=model))
        return load_config(cfg, data_dir=tmp_path / "data", check_paths=check).default_agent.embedding.model_path

    models = tmp_path / "data" / "models"
    assert load("local", "embeddinggemma-300m") == str(models / "embeddinggemma-300m.q8_0.gguf")
    assert load("local", "embeddinggemma-300m:f16") == str(models / "embeddinggemma-300m.f16.gguf")
    assert load("auto", "all-MiniLM-L6-v2") == str(models / "all-MiniLM-L6-v2.q8_0.gguf")
    cfg.write_text(body.format(ws=tmp_path / "ws", provider="auto", model="embeddinggemma-300m"))
    auto = load_config(cfg, data_dir=tmp_path / "data").default_agent.embedding
    assert auto.provider == "local", "a named local model never falls to a remote provider (nor sends it its name)"
    with pytest.raises(ConfigError, match=r"embeddinggemma-300m\?"):
        load("local", "embeddinggema-300m")  # a misspelt name is not silently the default model
    assert load("auto", "text-embedding-3-small") == str(models / "multilingual-e5-small.q4_0.gguf")
    # a name memoryd does not prepare is left to the providers that know it, as before (doctor says so for local)
    assert load("local", "text-embedding-3-small") == str(models / "multilingual-e5-small.q4_0.gguf")
    for wrong in ("embeddinggemma-300m:q4_0", "all-MiniLM-L6-v2:q4_0"):
        with pytest.raises(ConfigError, match="is prepared as"):
            load("local", wrong)
        with pytest.raises(ConfigError, match="is prepared as"):
            load("auto", wrong)
    with pytest.raises(ConfigError, match="memoryd model prepare --model embeddinggemma-300m --accept-terms"):
        load("local", "embeddinggemma-300m", check=True)


@pytest.mark.parametrize(
    ("store", "secret"),
    [
        ("postgresql://bob:pa/ss@db.example/team", "pa/ss"),  # libpq reads this as host "bob", port "pa"
        ("postgresql://bob:p@ss?w@db.example/team", "p@ss?w"),
        ("postgres://bob:${TEAM_PG_PASSWORD}@db.example/team", "s3/cr3t"),  # the same from the environment
        ("postgresql://bob:s3cr%zzet@db.example/team", "s3cr"),  # libpq's own complaint repeats the token
    ],
)
def test_a_password_libpq_would_misread_is_refused_without_printing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str, secret: str
) -> None:
    from memoryd.postgres_urls import mask_password
    from memoryd.store.postgres.connections import redact_url

    monkeypatch.setenv("TEAM_PG_PASSWORD", "s3/cr3t")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[agents]]\nid = "a"\nworkspace = "{tmp_path}"\nstore = "{store}"\n')
    with pytest.raises(ConfigError, match=r"percent-encode|libpq can read") as refused:
        load_config(cfg)
    assert secret not in str(refused.value)
    expanded = store.replace("${TEAM_PG_PASSWORD}", "s3/cr3t")
    if "%" in secret or "%" in store:
        return  # libpq cannot read it at all: refused, and shown by mask_password only
    for shown in (mask_password(expanded), redact_url(expanded)):
        assert shown is not None and secret not in shown and "***" in shown and "db.example/team" in shown


def test_a_read_url_that_is_not_a_url_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[[agents]]\nid = "a"\nworkspace = "{tmp_path}"\nstore = "postgresql://bob@db/team"\n'
        'read_url = "host=replica user=bob password=hunter2"\n'
    )
    with pytest.raises(ConfigError, match="read_url: not a postgresql:// URL") as refused:
        load_config(cfg)
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize(
    ("store", "secret", "why"),
    [
        ("postgresql+psycopg://bob:SECRET@db/team", "SECRET", "neither a postgresql:// URL nor a file path"),
        (" postgresql://bob:SECRET@db/team", "SECRET", "neither a postgresql:// URL nor a file path"),
        ("host=db user=bob password=SECRET", "SECRET", "neither a postgresql:// URL nor a file path"),
        ("postgresql://bob:SEC\\nRET@db/team", "SEC", "control character"),
    ],
)
def test_a_store_that_would_be_misread_is_refused_without_its_secret(
    tmp_path: Path, store: str, secret: str, why: str
) -> None:
    """Not taken for a SQLite file named after the password, nor a password with a line break printed."""
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[agents]]\nid = "a"\nworkspace = "{tmp_path}"\nstore = "{store}"\n')
    with pytest.raises(ConfigError, match=why) as refused:
        load_config(cfg)
    assert secret not in str(refused.value)


def test_every_secret_parameter_is_masked() -> None:
    from memoryd.postgres_urls import mask_password, without_password

    for url in (
        "postgresql://bob@db/team?%70assword=SECRET&sslmode=require",
        "postgresql://bob@db/team?sslmode=require&sslpassword=SECRET",
        "postgresql://bob:SEC\nRET@db/team",
    ):
        shown, pasted = str(mask_password(url)), without_password(url)
        assert "SEC" not in shown and "***" in shown and "SEC" not in pasted, (shown, pasted)
    assert "CRET" not in str(mask_password("host=db password=SE\\ CRET user=bob"))
