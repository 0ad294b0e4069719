"""The scaling curve: 10k, 100k and 1M chunks through the socket, with a model-free vector fill.

Embedding a million chunks with the local model would take days on two cores, so the index is built in-process
with the real sync (discovery, chunking, the analyzer, FTS5, sqlite-vec, the embedding cache), but with each
chunk's vector a pseudo-random unit vector seeded by its text, filed under the real local model's name. The
daemon then serves that index with the real model: every query is embedded by llama.cpp and scanned against
as many vectors as a real index holds, so latency and memory are real; retrieval quality is not measured here
(see bench.quality). Reported per scale: keyword and hybrid p50/p99 (1 client and 8), RSS idle, under load, a
minute later (contexts released, heap handed back) and with the model unloaded, index size on disk, a no-op
sync, `write` at that many files, a saved file -> searchable through the watcher, and with `--reindex` RSS after
a full reindex and a minute later.

python -m bench.scale                              # 10k, 100k, 1M chunks
python -m bench.scale --scales 100000 --no-idle    # one scale, without the two idle waits (2 min)
python -m bench.scale --scales 100000 --reindex    # ... ending with a full reindex (from the embedding cache)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import median, start_daemon
from bench.latency import (
    CACHE,
    change_to_searchable,
    index_bytes,
    memctl_wall,
    noop_sync,
    reindex_under_load,
    search_modes,
)
from bench.synthetic import build, queries
from memoryd.config import EmbeddingConfig, default_data_dir, default_model_path, quickstart_agent
from memoryd.embeddings.base import Embedder
from memoryd.embeddings.local import LocalEmbedder
from memoryd.memory import AgentMemory
from tests.harness import Daemon

IDLE_WAIT_SECONDS = 65  # past the daemon's one-minute context release and heap hand-back
MODEL_IDLE_MINUTES = 2  # the model unloads this long after the last search


class FillEmbedder(Embedder):
    """Unit vectors seeded by each text, under the identity of the real local model (see the module notes)."""

    def __init__(self, provider: str, model: str, key_fingerprint: str, dims: int) -> None:
        self.provider, self.model, self.key_fingerprint, self.dims = provider, model, key_fingerprint, dims

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
        vector = np.random.default_rng(seed).standard_normal(self.dims).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dims), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def close(self) -> None:
        pass


def fill(workspace: Path, data: Path) -> dict[str, Any]:
    """Index the workspace in-process with filled vectors; the daemon started on `data` then has nothing to do."""
    model_path = default_model_path(default_data_dir())
    real = LocalEmbedder(model_path)
    embedder = FillEmbedder(real.provider, real.model, real.key_fingerprint, real.dims)
    real.close()
    agent = quickstart_agent(workspace, data, embedding=EmbeddingConfig(provider="local", model_path=str(model_path)))
    started = time.perf_counter()
    with AgentMemory(agent, embedder) as memory:  # type: ignore[arg-type]
        report = memory.sync()
    return {"seconds": round(time.perf_counter() - started, 1), "chunks_added": report.chunks_added}


def write_latency(daemon: Daemon, runs: int = 15) -> float:
    """`write` of a short note into a workspace of that many files, median ms (each note its own file)."""
    times = []
    run = time.time_ns()  # new text each run: a note the embedding cache already holds would skip the model
    with daemon.client() as client:
        for i in range(runs):
            started = time.perf_counter()
            client.write(f"Scale bench note {i} of run {run}: the heron dataset moved.", path=f"scale-bench/w{i}.md")
            times.append(time.perf_counter() - started)
    for i in range(runs):
        (daemon.workspace / "memory" / "scale-bench" / f"w{i}.md").unlink(missing_ok=True)
    daemon.wait_idle()
    return round(median(times) * 1000, 1)


def filled(chunks: int, work: Path, out: dict[str, Any]) -> tuple[Path, Path, Path]:
    """(root, workspace, data dir) of the scaling curve's index at `chunks`, filled unless it already is (its
    time goes into `out["fill"]`); bench.pgstore measures the same index."""
    root = work / f"scale-fill-{chunks}"
    workspace = build(root / "workspace", chunks)
    data = root / "data"
    if not (data / "agents" / "main" / "index.sqlite").exists():
        print(f"[{chunks} chunks] filling the index (real sync, model-free vectors)", flush=True)
        out["fill"] = fill(workspace, data)
    return root, workspace, data


def measure(chunks: int, work: Path, n_queries: int, idle: bool, reindex: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks": chunks}
    _, workspace, data = filled(chunks, work, out)
    extra = f"model_idle_minutes = {MODEL_IDLE_MINUTES}" if idle else ""
    started = time.perf_counter()
    daemon = start_daemon(workspace, data, daemon_extra=extra)
    try:
        state = daemon.wait_idle()
        out["start_to_idle_s"] = round(time.perf_counter() - started, 1)
        out["files"], out["indexed_chunks"] = state["files"], state["chunks"]
        qs = queries(n_queries)
        with daemon.client() as client:
            client.search(qs[0])  # loads the warm matrix
        out["rss_idle_mb"] = round(daemon.rss_mb(), 1)
        out.update(search_modes(daemon, qs, f"[{chunks}] "))
        out["memctl_search_ms"] = round(memctl_wall(daemon), 1)
        out["noop_sync"] = noop_sync(daemon)
        out["write_ms"] = write_latency(daemon)
        out["change_to_searchable"] = change_to_searchable(daemon)
        out["index_mb"] = round(index_bytes(data) / 2**20, 1)
        if idle:
            time.sleep(IDLE_WAIT_SECONDS)
            out["rss_idle_minute_mb"] = round(daemon.rss_mb(), 1)
            time.sleep(MODEL_IDLE_MINUTES * 60 - IDLE_WAIT_SECONDS + 5)
            model_loaded = daemon.status().get("model_loaded")
            out["rss_model_unloaded_mb"] = round(daemon.rss_mb(), 1) if model_loaded is False else None
        if reindex:
            out["reindex"] = reindex_under_load(daemon, qs)  # vectors come from the embedding cache
            with daemon.client() as client:
                client.search(qs[1])
            out["rss_after_reindex_mb"] = round(daemon.rss_mb(), 1)
            if idle:
                time.sleep(IDLE_WAIT_SECONDS)
                out["rss_after_reindex_minute_mb"] = round(daemon.rss_mb(), 1)
        print(
            f"  [{chunks}] memctl {out['memctl_search_ms']} ms; no-op sync {out['noop_sync']}; write "
            f"{out['write_ms']} ms; change {out['change_to_searchable']}; index {out['index_mb']} MB; RSS idle "
            f"{out['rss_idle_mb']} MB, a minute on {out.get('rss_idle_minute_mb')}, unloaded "
            f"{out.get('rss_model_unloaded_mb')}; after a full reindex {out.get('rss_after_reindex_mb')}, a minute "
            f"on {out.get('rss_after_reindex_minute_mb')}; reindex {out.get('reindex')}",
            flush=True,
        )
    finally:
        daemon.stop()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-idle", action="store_true", help="skip the idle and unloaded RSS waits")
    parser.add_argument("--reindex", action="store_true", help="end with a full reindex and RSS after it")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = {
        n: measure(int(n), args.workdir, args.queries, not args.no_idle, args.reindex) for n in args.scales.split(",")
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
