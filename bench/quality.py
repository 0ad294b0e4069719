"""Retrieval quality through the daemon's `search` RPC, for each local model, beside the seed design's baselines
on the same chunks (those with the default model).

python -m bench.quality                       # SciFact and XQuAD vi, vi without tones, en, zh, th; both models
python -m bench.quality --datasets scifact --models multilingual-e5-small
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

from bench.beir import CACHE, RESULTS_PER_QUERY, load
from bench.datasets import Dataset, dataset_workspace
from bench.harness import median, start_daemon
from bench.metrics import dedupe_docs, evaluate

MODES = ("keyword", "vector", "hybrid")
# Ranking options measured beside the defaults (both off by default).
VARIANTS = {"hybrid+mmr": {"mmr": True}, "hybrid+decay": {"decay": True}}
SEED_MIN_SCORE = 0.35
SEED_WEIGHTS = (0.7, 0.3)
SEED_MULTIPLIER = 4


DATASETS = "scifact,xquad-vi,xquad-vi-notone,xquad-en,xquad-zh,xquad-th"
MODELS = "multilingual-e5-small,all-MiniLM-L6-v2"


def through_rpc(
    dataset: Dataset, work: Path, model: str, labels: tuple[str, ...] = (*MODES, *VARIANTS)
) -> tuple[dict[str, Any], Path, dict[str, str]]:
    from memoryd.config import default_data_dir
    from memoryd.embeddings.models.prepare import model_path

    workspace, mapping = dataset_workspace(dataset, work)
    path = model_path(default_data_dir(), model)
    data = work / dataset.name / f"local-{path.stem}"  # the same index bench.beir and bench.fusion_study build
    daemon = start_daemon(workspace, data, model_path=path)
    out: dict[str, Any] = {}
    try:
        state = daemon.wait_idle()
        out["chunks"] = state["chunks"]
        with daemon.client() as client:
            for label in labels:
                mode = label.split("+")[0]
                options = VARIANTS.get(label, {})
                runs, latencies = {}, []
                for qid, text in dataset.queries.items():
                    started = time.perf_counter()
                    found = client.search(text, mode=mode, max_results=RESULTS_PER_QUERY, min_score=-1.0, **options)
                    latencies.append(time.perf_counter() - started)
                    runs[qid] = dedupe_docs([r.path for r in found.results], mapping)
                out[label] = {
                    **{k: round(v, 4) for k, v in evaluate(runs, dataset.qrels).items()},
                    "p50_ms": round(median(latencies) * 1000, 2),
                    "mode": found.mode,
                }
    finally:
        daemon.stop()
    return out, data / "agents" / "main" / "index.sqlite", mapping


class SeedBaseline:
    """The design memoryd started from, on memoryd's own chunks: ASCII-only AND queries over FTS5 bm25(), and
    fusion 0.7/0.3 with every keyword hit's rank mapped to 1/(1+max(0, rank)) and min_score 0.35."""

    def __init__(self, index: Path) -> None:
        source = apsw.Connection(str(index), flags=apsw.SQLITE_OPEN_READONLY)
        source.enable_load_extension(True)
        source.load_extension(sqlite_vec.loadable_path())
        rows = list(source.execute("SELECT c.id, f.path, c.text FROM chunks c JOIN files f ON f.id = c.file_id"))
        vectors = dict(source.execute("SELECT rowid, embedding FROM chunks_vec"))
        source.close()
        self.paths = {cid: path for cid, path, _ in rows}
        self.db = apsw.Connection(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE fts USING fts5(text)")
        with self.db:
            self.db.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)", [(cid, text) for cid, _, text in rows])
        self.ids = np.array(list(vectors), dtype=np.int64)
        self.matrix = np.stack([np.frombuffer(vectors[i], dtype=np.float32) for i in self.ids])

    @staticmethod
    def build_query(text: str) -> str | None:
        tokens = re.findall(r"[A-Za-z0-9_]+", text)
        return " AND ".join(f'"{t}"' for t in tokens) if tokens else None

    def keyword(self, text: str, limit: int) -> list[tuple[int, float]]:
        expression = self.build_query(text)
        if expression is None:
            return []
        rows = self.db.execute(
            "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?", (expression, limit)
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def hybrid(self, text: str, query_vector: np.ndarray, limit: int) -> list[int]:
        pool = limit * SEED_MULTIPLIER
        scores: dict[int, list[float]] = {}
        sims = self.matrix @ query_vector
        for i in np.argsort(-sims)[:pool]:
            scores[int(self.ids[i])] = [float(sims[i]), 0.0]
        for cid, rank in self.keyword(text, pool):
            scores.setdefault(cid, [0.0, 0.0])[1] = 1.0 / (1.0 + max(0.0, rank))
        fused = [(SEED_WEIGHTS[0] * v + SEED_WEIGHTS[1] * t, cid) for cid, (v, t) in scores.items()]
        return [cid for score, cid in sorted(fused, reverse=True) if score >= SEED_MIN_SCORE][:limit]


def baselines(dataset: Dataset, index: Path, mapping: dict[str, str]) -> dict[str, Any]:
    from memoryd.config import default_data_dir, default_model_path
    from memoryd.embeddings.local import LocalEmbedder

    seed = SeedBaseline(index)
    embedder = LocalEmbedder(default_model_path(default_data_dir()))
    keyword_runs, hybrid_runs = {}, {}
    for qid, text in dataset.queries.items():
        hits = [cid for cid, _ in seed.keyword(text, RESULTS_PER_QUERY)]
        keyword_runs[qid] = dedupe_docs([seed.paths[c] for c in hits], mapping)
        fused = seed.hybrid(text, embedder.embed_query(text), RESULTS_PER_QUERY)
        hybrid_runs[qid] = dedupe_docs([seed.paths[c] for c in fused], mapping)
    embedder.close()
    return {
        "seed_keyword": {k: round(v, 4) for k, v in evaluate(keyword_runs, dataset.qrels).items()},
        "seed_hybrid": {k: round(v, 4) for k, v in evaluate(hybrid_runs, dataset.qrels).items()},
    }


def measure(
    name: str, work: Path, models: list[str], labels: tuple[str, ...] = (*MODES, *VARIANTS), seed: bool = True
) -> dict[str, Any]:
    from memoryd.config import DEFAULT_LOCAL_MODEL

    dataset = load(name)
    print(f"[{name}] {len(dataset.docs)} documents, {len(dataset.queries)} queries", flush=True)
    out: dict[str, Any] = {}
    for model in models:
        ours, index, mapping = through_rpc(dataset, work, model, labels)
        if seed and model == DEFAULT_LOCAL_MODEL:
            ours.update(baselines(dataset, index, mapping))
        out[model] = ours
        for label in (*MODES, *VARIANTS, "seed_keyword", "seed_hybrid"):
            row = ours.get(label)
            if row:
                print(
                    f"  {model[:12]:12s} {label:13s} nDCG@10 {row['ndcg@10']:.4f}  Recall@10 {row['recall@10']:.4f}"
                    f"  MRR@10 {row['mrr@10']:.4f}",
                    flush=True,
                )
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--modes", default=",".join((*MODES, *VARIANTS)), help="modes and variants to measure")
    parser.add_argument("--no-seed", action="store_true", help="skip the seed design's baselines")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    labels = tuple(args.modes.split(","))
    results = {
        name: measure(name, args.workdir, args.models.split(","), labels, not args.no_seed)
        for name in args.datasets.split(",")
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
