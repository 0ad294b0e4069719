"""Retrieval quality on BEIR SciFact and XQuAD through the memoryd engine.

python -m bench.beir                                     # SciFact, keyword only
python -m bench.beir --modes keyword,vector,hybrid --provider local
python -m bench.beir --dataset xquad-vi --modes keyword,hybrid --provider local
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bench.datasets import Dataset, dataset_workspace, load_scifact, load_xquad
from bench.metrics import dedupe_docs, evaluate
from memoryd.config import EmbeddingConfig, QueryConfig, default_data_dir, default_model_path, quickstart_agent
from memoryd.embeddings.local import CONTEXT
from memoryd.embeddings.models.gguf_meta import TOKENIZER_KEY
from memoryd.embeddings.unigram import UnigramTokenizer
from memoryd.memory import AgentMemory

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "bench"
RESULTS_PER_QUERY = 50  # chunks fetched per query before folding them into documents
BARE_SAMPLE = 300


def load(name: str) -> Dataset:
    if name == "scifact":
        return load_scifact()
    if name.startswith("xquad-"):
        return load_xquad(name.split("-", 1)[1])
    raise SystemExit(f"unknown dataset {name}")


def index_dir(dataset: Dataset, provider: str, workdir: Path, model_path: Path | None = None) -> Path:
    """Where a data set's index for a provider (and local model) lives; bench.quality reuses it."""
    label = provider if provider != "local" else f"local-{Path(model_path or default_model_path(Path())).stem}"
    return workdir / dataset.name / label


def open_memory(
    dataset: Dataset, provider: str, workdir: Path, model_path: Path | None = None, **query: Any
) -> tuple[AgentMemory, dict[str, str]]:
    workspace, mapping = dataset_workspace(dataset, workdir)
    agent = quickstart_agent(
        workspace,
        index_dir(dataset, provider, workdir, model_path),
        embedding=EmbeddingConfig(provider=provider, model_path=str(model_path or "")),
        query=QueryConfig(min_score=-1.0, **query),
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


def bare_throughput(model_path: Path, texts: list[str]) -> float:
    """Chunks/s of llama.cpp alone (`Llama.embed`, one chunk per call) on the same inputs."""
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(model_path),
        embedding=True,
        n_ctx=512,
        n_batch=512,
        n_ubatch=512,
        flash_attn=True,
        n_threads=os.cpu_count(),
        verbose=False,
    )
    if llm.metadata.get(TOKENIZER_KEY) == "unigram":
        # llama.cpp holds no vocabulary for a model memoryd tokenizes (e5): it gets the ids memoryd feeds it
        unigram = UnigramTokenizer.from_gguf(model_path)
        llm.tokenize = lambda text, add_bos=True, special=False: unigram.encode(text.decode("utf-8"), CONTEXT)
    llm.embed(texts[0], truncate=True)
    started = time.perf_counter()
    for text in texts:
        llm.embed(text, truncate=True)
    seconds = time.perf_counter() - started
    llm.close()
    return len(texts) / seconds


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--modes", default="keyword")
    parser.add_argument("--provider", default="none", help="embedding provider: none, hash, local, ...")
    parser.add_argument("--fusion", default="weighted,rrf", help="fusions to compare in hybrid mode")
    parser.add_argument("--model-path", type=Path, default=default_model_path(default_data_dir()))
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--fresh", action="store_true", help="rebuild the index (else an earlier one is reused)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)

    dataset = load(args.dataset)
    if args.fresh:
        import shutil

        shutil.rmtree(index_dir(dataset, args.provider, args.workdir, args.model_path), ignore_errors=True)
    memory, mapping = open_memory(dataset, args.provider, args.workdir, args.model_path)
    report: dict[str, Any] = {"dataset": dataset.name, "queries": len(dataset.queries), "provider": args.provider}
    with memory:
        started = time.perf_counter()
        stale = memory.needs_reindex()
        if stale:  # the daemon rebuilds a stale index by itself; the bare engine is told to here
            print(f"index out of date ({stale}): rebuilding")
        sync = memory.reindex() if stale else memory.sync()
        seconds = time.perf_counter() - started
        chunks = memory.store.counts()["chunks"]
        report["index"] = {
            "files": sync.files_seen,
            "chunks": chunks,
            "seconds": round(seconds, 2),
            "embedded": sync.embedded,
        }
        print(
            f"{dataset.name}: {sync.files_seen} files, {chunks} chunks; sync {seconds:.1f}s, "
            f"{sync.embedded} embedded, {sync.cache_hits} from cache"
        )
        if sync.embedded >= BARE_SAMPLE and args.provider == "local":
            rate = sync.embedded / seconds
            sample = _sample_inputs(memory, BARE_SAMPLE)
            bare = bare_throughput(args.model_path, sample)
            report["index"].update(
                {
                    "chunks_per_s": round(rate, 1),
                    "bare_chunks_per_s": round(bare, 1),
                    "ratio_to_bare": round(rate / bare, 3),
                }
            )
            print(f"  indexing {rate:.1f} chunks/s; bare Llama.embed {bare:.1f} chunks/s; ratio {rate / bare:.2f}")
        for mode in args.modes.split(","):
            fusions = args.fusion.split(",") if mode == "hybrid" else [None]
            for fusion in fusions:
                metrics, p50, actual = run(dataset, memory, mapping, mode, fusion)
                label = mode if fusion is None else f"{mode}/{fusion}"
                report[label] = {
                    **{k: round(v, 4) for k, v in metrics.items()},
                    "p50_ms": round(p50, 2),
                    "mode": actual,
                }
                print(
                    f"  {label:16s} nDCG@10 {metrics['ndcg@10']:.4f}  Recall@10 {metrics['recall@10']:.4f}  "
                    f"MRR@10 {metrics['mrr@10']:.4f}  p50 {p50:.1f} ms  ({actual})"
                )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return report


def _sample_inputs(memory: AgentMemory, count: int) -> list[str]:
    """The embedding inputs of the first chunks of the index, for the bare-model comparison."""
    from memoryd.sources.markdown import embed_input

    rows = memory.store.reader.execute("SELECT context, text FROM chunks ORDER BY id LIMIT ?", (count,))
    return [embed_input(c, t) for c, t in rows]


if __name__ == "__main__":
    main()
