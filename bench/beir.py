"""Retrieval quality on BEIR SciFact and XQuAD through the memoryd engine.

python -m bench.beir                        # SciFact, keyword only
python -m bench.beir --modes keyword,vector,hybrid --provider local
python -m bench.beir --dataset xquad-vi --modes keyword,hybrid --provider local
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench.datasets import Dataset, load_scifact, load_xquad, write_workspace
from bench.metrics import dedupe_docs, evaluate
from memoryd.config import EmbeddingConfig, QueryConfig, quickstart_agent
from memoryd.service.agent import AgentMemory

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "bench"
RESULTS_PER_QUERY = 50  # chunks fetched per query before folding them into documents


def load(name: str) -> Dataset:
    if name == "scifact":
        return load_scifact()
    if name.startswith("xquad-"):
        return load_xquad(name.split("-", 1)[1])
    raise SystemExit(f"unknown dataset {name}")


def open_memory(dataset: Dataset, provider: str, fusion: str, workdir: Path) -> tuple[AgentMemory, dict[str, str]]:
    workspace = workdir / dataset.name / "workspace"
    mapping = (
        write_workspace(dataset, workspace)
        if not (workspace / "memory").exists()
        else {f"memory/{dataset.name}/d{i:05d}.md": doc_id for i, doc_id in enumerate(dataset.docs)}
    )
    agent = quickstart_agent(
        workspace,
        workdir / dataset.name / provider,
        embedding=EmbeddingConfig(provider=provider),
        query=QueryConfig(fusion=fusion, min_score=-1.0),
    )
    return AgentMemory(agent), mapping


def run(
    dataset: Dataset, memory: AgentMemory, mapping: dict[str, str], mode: str, fusion: str | None = None
) -> tuple[dict[str, float], float, str]:
    runs: dict[str, list[str]] = {}
    latencies = []
    actual = mode
    for qid, text in dataset.queries.items():
        started = time.perf_counter()
        response = memory.search(text, max_results=RESULTS_PER_QUERY, min_score=-1.0, mode=mode, fusion=fusion)
        latencies.append(time.perf_counter() - started)
        actual = response.mode
        runs[qid] = dedupe_docs([r.path for r in response.results], mapping)
    latencies.sort()
    return evaluate(runs, dataset.qrels), latencies[len(latencies) // 2] * 1000, actual


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--modes", default="keyword")
    parser.add_argument("--provider", default="none", help="embedding provider: none, hash, local, ...")
    parser.add_argument("--fusion", default="weighted,rrf", help="fusions to compare in hybrid mode")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)

    dataset = load(args.dataset)
    memory, mapping = open_memory(dataset, args.provider, "weighted", args.workdir)
    report: dict[str, Any] = {"dataset": dataset.name, "queries": len(dataset.queries), "provider": args.provider}
    with memory:
        started = time.perf_counter()
        sync = memory.sync()
        seconds = time.perf_counter() - started
        report["index"] = {
            "files": sync.files_seen,
            "chunks": memory.store.counts()["chunks"],
            "seconds": seconds,
            "embedded": sync.embedded,
            "chunks_per_s": sync.embedded / seconds if sync.embedded else None,
        }
        print(
            f"{dataset.name}: {sync.files_seen} files, {report['index']['chunks']} chunks, "
            f"indexed in {seconds:.1f}s ({sync.embedded} embedded)"
        )
        for mode in args.modes.split(","):
            fusions = args.fusion.split(",") if mode == "hybrid" else [None]
            for fusion in fusions:
                metrics, p50, actual = run(dataset, memory, mapping, mode, fusion)
                label = mode if fusion is None else f"{mode}/{fusion}"
                report[label] = {**metrics, "p50_ms": p50, "mode": actual}
                print(
                    f"  {label:16s} nDCG@10 {metrics['ndcg@10']:.4f}  Recall@10 {metrics['recall@10']:.4f}  "
                    f"MRR@10 {metrics['mrr@10']:.4f}  p50 {p50:.1f} ms  ({actual})"
                )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
