"""Budgets: indexing runs at a lower priority and on the threads it is given; SQLite's memory is capped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import llama_cpp
import pytest

from memoryd.config import default_data_dir
from memoryd.embeddings.local import LocalEmbedder
from memoryd.embeddings.models import prepare as prep

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model

DATA_DIR = Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())


def _nice_by_task(pid: int) -> dict[int, int]:
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        out[int(task.name)] = int(fields[16])  # the 19th field of stat: nice
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread priorities are per thread on Linux only")
def test_indexing_threads_run_at_the_configured_priority(tmp_path: Path, workspace: Path) -> None:
    for i in range(3):
        write(workspace / "memory" / f"n{i}.md", f"# Note {i}\nThe heron dataset moved to bucket {i}.\n")
    daemon = d.start(tmp_path, workspace, provider="local", extra="index_nice = 7\nsqlite_memory_mb = 24")
    try:
        assert daemon.status()["chunks"] == 3
        nice = _nice_by_task(daemon.proc.pid)
        assert nice[daemon.proc.pid] == 0  # the main thread, and with it the RPC server, keeps its priority
        lowered = [tid for tid, value in nice.items() if value == 7]
        assert lowered, nice  # the sync thread (and the llama.cpp workers it started)
        assert all(value in (0, 7) for value in nice.values()), nice
        with daemon.client() as client:
            info = client.status()["daemon"]
            assert info["index_nice"] == 7 and info["sqlite_memory_limit_mb"] == 24.0
            assert client.search("heron dataset").results  # searches still run, at normal priority
    finally:
        d.cleanup(daemon)


def test_indexing_threads_can_be_capped_while_queries_use_every_core() -> None:
    model = LocalEmbedder(prep.prepare(DATA_DIR).path, n_threads=1)
    try:
        model.embed_documents(["the heron dataset lives in the cold bucket"])
        model.embed_query("heron dataset")
        assert model._documents is not None and model._queries is not None
        assert llama_cpp.llama_n_threads(model._documents.ctx.ctx) == 1
        assert llama_cpp.llama_n_threads(model._queries.ctx.ctx) == (os.cpu_count() or 1)
    finally:
        model.close()
