"""The search pipeline's own latency, in-process: a synthetic index searched with hash embeddings, so the figures are
memoryd's work (keyword, vector scan, fusion, snippets) without the model's. To compare two commits, run it from
each checkout on a quiet machine, the older first (an index made by a newer memoryd is refused by an older one).

python -m research.pipeline [--chunks 10000] [--rounds 3] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.beir import CACHE
from bench.latency import queries
from bench.synthetic import build

MODES = ("hybrid", "vector", "keyword")


def measure(chunks: int, rounds: int, data: Path) -> dict[str, Any]:
    from memoryd.config import EmbeddingConfig, quickstart_agent
    from memoryd.memory import AgentMemory

    workspace = build(CACHE / f"pipeline-{chunks}" / "workspace", chunks)
    agent = quickstart_agent(workspace, data, embedding=EmbeddingConfig(provider="hash"))
    with AgentMemory(agent) as memory:
        memory.sync()
        if memory.needs_reindex():
            memory.reindex()
        asked = queries(300)
        for query in asked[:30]:  # warm the matrix and the page cache
            memory.search(query, mode="hybrid")
        out: dict[str, Any] = {"chunks": memory.store.chunk_count()}
        for mode in MODES:
            times = []
            for _ in range(rounds):
                for query in asked:
                    started = time.perf_counter()
                    memory.search(query, mode=mode)
                    times.append((time.perf_counter() - started) * 1000)
            out[f"{mode}_p50_ms"] = round(statistics.median(times), 3)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m research.pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, help="the index's data dir (default: under the bench cache)")
    args = parser.parse_args(argv)
    data = args.data or CACHE / f"pipeline-{args.chunks}" / "data"
    found = measure(args.chunks, args.rounds, data)
    print(json.dumps(found))
    return found


if __name__ == "__main__":
    main()
