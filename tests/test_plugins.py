"""A provider from another package: pip installs it, its entry point names it, the daemon embeds with it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # pip and a daemon process

PACKAGE = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "memoryd-letters"
        version = "0.1"

        [project.entry-points."memoryd.embeddings"]
        letters = "memoryd_letters:provider"
        """,
    "memoryd_letters.py": '''
        """Vectors of letter counts: a provider that only memoryd's base class makes an embedder."""
        import numpy as np

        from memoryd.embeddings.base import Embedder, clean_vectors


        class Letters(Embedder):
            provider, model, dims = "letters", "letters-26", 26

            def _vector(self, text):
                counts = np.zeros(26, dtype=np.float32)
                for ch in text.lower():
                    if "a" <= ch <= "z":
                        counts[ord(ch) - 97] += 1
                return counts

            def embed_documents(self, texts, *, urgent=False):
                return clean_vectors([self._vector(t) for t in texts], self.dims)

            def embed_query(self, text):
                return clean_vectors([self._vector(text)], self.dims)[0]


        def provider(cfg, as_fallback=False):
            return Letters()
        ''',
}


def test_a_pip_installed_provider_is_used_by_the_daemon(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "src", tmp_path / "site"
    for name, text in PACKAGE.items():
        write(source / name, textwrap.dedent(text).lstrip())
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target),
         str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )  # fmt: skip
    write(workspace / "MEMORY.md", "# Zebras\nzzz zebra zoo\n\n# Apples\naaa apple banana\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")])))
    daemon = d.start(tmp_path, workspace, provider="letters")  # the daemon process finds the package there
    try:
        state = daemon.status()
        assert state["provider"] == "letters" and state["dims"] == 26 and state["embedded_chunks"] == state["chunks"]
        with daemon.client() as client:
            found = client.search("zzzz", mode="vector")
            assert found.provider == "letters" and found.results[0].snippet.startswith("# Zebras")
    finally:
        d.cleanup(daemon)
