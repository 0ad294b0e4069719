"""One settings schema drives the config file and its documentation: docs/configuration.md's tables of keys are
written from memoryd.settings (python -m memoryd.settings_doc), cover every table the loader reads, and the TOML
examples in the docs are configs the loader accepts."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from memoryd import settings_doc
from memoryd.config import load_config
from memoryd.settings import AgentTable, ConfigFile, DaemonConfig, DefaultsTable

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "configuration.md"
REGENERATE = "docs/configuration.md is stale: run python -m memoryd.settings_doc docs/configuration.md"


def test_the_config_doc_is_written_from_the_schema() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = [*settings_doc.TABLES, *settings_doc.EXTRA_BLOCKS]
    assert sorted(settings_doc.documented(text)) == sorted(blocks), REGENERATE
    assert settings_doc.render(text) == text, REGENERATE


def test_every_key_is_documented_with_a_meaning() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name, (_, schema) in settings_doc.TABLES.items():
        block = settings_doc.block(name)
        assert block in text
        for field in dataclasses.fields(schema):
            row = re.search(rf"^\| `{field.name}` \|.*\| (.*) \|$", block, re.M)
            assert row, f"{name}.{field.name} has no row"
            assert len(row.group(1)) > 10, f"{name}.{field.name} has no description: give the field a docstring"


def _tables_of(schema: type) -> set[str]:
    """The keys of a table whose values are tables (or arrays of tables) the loader checks against a schema."""
    hints = get_type_hints(schema)
    return {name for name, hint in hints.items() if "dict[str, typing.Any]" in str(hint)}


def test_every_table_the_loader_reads_has_a_block() -> None:
    nested = _tables_of(ConfigFile) | _tables_of(AgentTable) | _tables_of(DefaultsTable)
    assert nested == {"daemon", "defaults", "agents", "embedding", "query", "chunking", "recall"}
    assert nested <= settings_doc.TABLES.keys()


def test_a_changed_schema_makes_the_doc_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    text = DOC.read_text(encoding="utf-8")

    @dataclasses.dataclass(frozen=True)
    class Changed(DaemonConfig):
        debounce_seconds: float = 9.0
        """Something else."""

    monkeypatch.setitem(settings_doc.TABLES, "daemon", ("`[daemon]`", Changed))
    assert settings_doc.render(text) != text


def test_the_generator_reports_a_missing_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    partial = tmp_path / "configuration.md"
    partial.write_text("<!-- settings:daemon -->\n<!-- /settings -->\n", encoding="utf-8")
    assert settings_doc.main([str(partial)]) == 1
    assert "agents" in capsys.readouterr().err
    written = tmp_path / "full.md"
    blocks = [*settings_doc.TABLES, *settings_doc.EXTRA_BLOCKS]
    written.write_text("".join(f"<!-- settings:{n} -->\n<!-- /settings -->\n" for n in blocks))
    assert settings_doc.main([str(written)]) == 0
    assert settings_doc.render(written.read_text()) == written.read_text()


def _toml_examples(path: Path) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("doc", ["README.md", "docs/configuration.md", "docs/postgresql.md"])
def test_the_docs_toml_examples_are_valid_configs(doc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("MEMORYD_CONFIG", "MEMORYD_DATA_DIR", "MEMORYD_SOCKET"):
        monkeypatch.delenv(variable, raising=False)
    examples = _toml_examples(ROOT / doc)
    for i, example in enumerate(examples):
        if "[project.entry-points." in example:  # a plugin's pyproject.toml, not a memoryd config
            continue
        path = tmp_path / f"example{i}.toml"
        path.write_text(example, encoding="utf-8")
        config = load_config(path, data_dir=tmp_path / "data", socket=tmp_path / "memoryd.sock")
        shown: dict[str, Any] = config.as_dict()
        assert shown["agents"], f"{doc}, TOML example {i + 1}"
