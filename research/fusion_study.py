"""Compare fusion rules offline: gather each query's keyword and vector candidates once (through the engine),
then fuse them every way and score the rankings, on every data set and both local models.

python -m research.fusion_study --datasets scifact,xquad-th --models multilingual-e5-small,all-MiniLM-L6-v2
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.beir import CACHE, load, open_memory
from bench.metrics import dedupe_docs, evaluate
from memoryd.config import EmbeddingConfig, QueryConfig, default_data_dir, quickstart_agent
from memoryd.embeddings.models.prepare import model_path
from memoryd.memory import AgentMemory
from memoryd.search.filters import Filters
from memoryd.search.fusion import Candidate, fuse, noise_ceiling
from memoryd.store.vectors import VectorScan

POOL = 50


def gather_locomo(model: str, workdir: Path) -> dict[str, Any]:
    """LoCoMo as dated notes, one agent per conversation; judged at turn level on the chunk's lines."""
    from bench.conversations import load_locomo, write_notes

    queries: dict[str, Any] = {}
    chunks: dict[str, tuple[str, int, int]] = {}
    judges: dict[str, Any] = {}
    for conv in load_locomo():
        workspace = workdir / "locomo" / "study" / conv.id
        write_notes(conv, workspace)
        agent = quickstart_agent(
            workspace,
            workdir / "locomo" / "study" / f"data-{model}" / conv.id,
            embedding=EmbeddingConfig(provider="local", model_path=str(model_path(default_data_dir(), model))),
            query=QueryConfig(min_score=-1.0),
        )
        with AgentMemory(agent) as memory:
            memory.reindex() if memory.needs_reindex() else memory.sync()
            for i, (question, evidence) in enumerate(conv.questions):
                got = memory.engine.gather(question, "hybrid", POOL, Filters.parse(None, None, None, None, None))
                scan = got.vector_scan
                qid = f"{conv.id}/{i}"
                queries[qid] = (
                    [(c.chunk_id, c.text_score, c.vector_score, c.text_rank, c.vector_rank) for c in got.candidates],
                    (scan.mean, scan.std, scan.count) if scan else None,
                )
                rows = memory.store.chunks_by_ids([c.chunk_id for c in got.candidates])
                for cid, row in rows.items():
                    chunks[f"{conv.id}/{cid}"] = (row.path, row.start_line, row.end_line)
                judges[qid] = (conv.turn_at, evidence)
    return {"queries": queries, "chunks": chunks, "judges": judges}


def score_locomo(gathered: dict[str, Any], rule: Rule) -> dict[str, float]:
    from bench.conversations import Conversation, judge, score_rows

    rows = []
    for qid, (cands_rows, stats) in gathered["queries"].items():
        conv_id = qid.split("/")[0]
        cands = [
            Candidate(cid, vector_score=v, text_score=t, vector_rank=vr, text_rank=tr)
            for cid, t, v, tr, vr in cands_rows
        ]
        rule(cands, VectorScan([], *stats) if stats else None)
        cands.sort(key=lambda c: (-c.score, c.chunk_id))
        turn_at, evidence = gathered["judges"][qid]
        conv = Conversation(conv_id, ("", ""), [], [], turn_at)
        results = [gathered["chunks"][f"{conv_id}/{c.chunk_id}"] for c in cands[:5]]
        rows.append(judge(conv, results, evidence))
    scored = score_rows(rows)
    return {"mrr@10": scored["turn_mrr@5"], "turn_r@5": scored["turn_r@5"], "session_r@5": scored["session_r@5"]}


def gather(dataset_name: str, model: str, workdir: Path) -> dict[str, Any]:
    cache = workdir / dataset_name / f"gathered-{model}.pickle"
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    if dataset_name == "locomo":
        out = gather_locomo(model, workdir)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps(out))
        return out
    dataset = load(dataset_name)
    memory, mapping = open_memory(dataset, "local", workdir, model_path(default_data_dir(), model))
    with memory:
        stale = memory.needs_reindex()
        started = time.perf_counter()
        report = memory.reindex() if stale else memory.sync()
        print(f"[{dataset_name}/{model}] indexed in {time.perf_counter() - started:.0f}s ({report.embedded} embedded)")
        queries = {}
        for qid, text in dataset.queries.items():
            got = memory.engine.gather(text, "hybrid", POOL, Filters.parse(None, None, None, None, None))
            scan = got.vector_scan
            queries[qid] = (
                [(c.chunk_id, c.text_score, c.vector_score, c.text_rank, c.vector_rank) for c in got.candidates],
                (scan.mean, scan.std, scan.count) if scan else None,
            )
        ids = {row[0] for rows, _ in queries.values() for row in rows}
        paths = {cid: row.path for cid, row in memory.store.chunks_by_ids(list(ids)).items()}
    out = {"queries": queries, "paths": paths, "mapping": mapping, "qrels": dataset.qrels}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps(out))
    return out


def score(gathered: dict[str, Any], rule: Rule, k: int = 10) -> dict[str, float]:
    if "judges" in gathered:
        return score_locomo(gathered, rule)
    runs = {}
    for qid, (rows, stats) in gathered["queries"].items():
        cands = [
            Candidate(cid, vector_score=v, text_score=t, vector_rank=vr, text_rank=tr) for cid, t, v, tr, vr in rows
        ]
        rule(cands, VectorScan([], *stats) if stats else None)
        cands.sort(key=lambda c: (-c.score, c.chunk_id))
        runs[qid] = dedupe_docs([gathered["paths"][c.chunk_id] for c in cands], gathered["mapping"])
    return evaluate(runs, gathered["qrels"], k)


Rule = Callable[[list[Candidate], VectorScan | None], None]


def side_only(side: str) -> Rule:
    def rule(cands: list[Candidate], scan: VectorScan | None) -> None:
        for c in cands:
            rank = c.text_rank if side == "text" else c.vector_rank
            c.score = -rank if rank is not None else -1e9

    return rule


def configured(**settings: Any) -> Rule:
    cfg = QueryConfig(**settings)

    def rule(cands: list[Candidate], scan: VectorScan | None) -> None:
        fuse(cands, cfg.fusion, cfg, has_vector=True, has_text=True, scan=scan)

    return rule


def experimental(
    w: float, norm: str, conf: str, span: float = 2.0, transfer: bool = False, offset: float = 0.0, loo: bool = False
) -> Rule:
    """Fusion variants explored here before one became `adaptive`: how the vector side is scaled (`minmax` over
    its candidates, or `mean` of the whole index up to the best) and how its weight follows its confidence
    (`none`, `noise`: past the expected best of that many unrelated chunks, or a fixed z threshold)."""

    def rule(cands: list[Candidate], scan: VectorScan | None) -> None:
        vs = [c.vector_score for c in cands if c.vector_score is not None]
        top = max(vs, default=0.0)
        floor = min(vs, default=0.0) if norm == "minmax" else scan.mean if scan else 0.0
        width = top - floor if top > floor else 1.0
        wv = w
        if conf != "none" and scan is not None and scan.std > 0:
            z_top = (top - scan.mean) / scan.std
            if loo and scan.count > 2:
                n = scan.count
                mean_r = (n * scan.mean - top) / (n - 1)
                var_r = (n * (scan.std**2 + scan.mean**2) - top * top) / (n - 1) - mean_r * mean_r
                z_top = (top - mean_r) / max(var_r, 1e-12) ** 0.5
            threshold = noise_ceiling(scan.count) - offset if conf == "noise" else float(conf)
            wv *= min(1.0, max(0.0, (z_top - threshold) / span))
        wt = 1 - wv if transfer else 1 - w
        for c in cands:
            v = max(0.0, (c.vector_score - floor) / width) if c.vector_score is not None else 0.0
            c.score = wv * v + wt * (c.text_score or 0.0)

    return rule


def rules() -> dict[str, Rule]:
    out: dict[str, Rule] = {
        "keyword": side_only("text"),
        "vector": side_only("vector"),
        "default": configured(),
        "weighted-0.7": configured(fusion="weighted", vector_weight=0.7, text_weight=0.3),
        "rrf-60": configured(fusion="rrf", vector_weight=0.5, text_weight=0.5, rrf_k=60),
        "rrf-20": configured(fusion="rrf", vector_weight=0.5, text_weight=0.5, rrf_k=20),
    }
    for w in (0.3, 0.5, 0.6, 0.7):
        for span in (1.0, 1.5, 2.0, 4.0):
            out[f"adapt-{w}-{span}"] = configured(
                fusion="adaptive", vector_weight=w, text_weight=1 - w, confidence_span=span
            )
    for offset in (-0.5, 0.0, 0.5, 1.0):
        for span in (1.0, 2.0):
            out[f"loo{offset}-{span}"] = experimental(0.5, "minmax", "noise", span, True, offset, loo=True)
    for w in (0.5, 0.6):
        for norm in ("minmax", "mean"):
            for offset in (0.0, 1.0, 1.5):
                for transfer in (False, True):
                    name = f"{norm[:2]}B{offset}-{w}{'t' if transfer else ''}"
                    out[name] = experimental(w, norm, "noise", 2.0, transfer, offset)
    for w in (0.3, 0.5, 0.7):
        out[f"minmax-{w}"] = experimental(w, "minmax", "none")
        out[f"mean-{w}"] = experimental(w, "mean", "none")
        for threshold in ("1", "2", "3"):
            out[f"z{threshold}-{w}"] = experimental(w, "mean", threshold, 2.0)
            out[f"mmz{threshold}-{w}"] = experimental(w, "minmax", threshold, 2.0)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="xquad-vi,xquad-vi-notone,xquad-en,xquad-zh,xquad-th,scifact")
    parser.add_argument("--models", default="multilingual-e5-small,all-MiniLM-L6-v2")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--metric", default="mrr@10")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    table: dict[str, dict[str, float]] = {}
    for model in args.models.split(","):
        for name in args.datasets.split(","):
            gathered = gather(name, model, args.workdir)
            column = f"{name}/{model[:5]}"
            for label, rule in rules().items():
                table.setdefault(label, {})[column] = round(score(gathered, rule)[args.metric], 4)
    columns = list(next(iter(table.values())))
    print(f"{args.metric:14s} " + " ".join(f"{c[:17]:>17s}" for c in columns) + "   worst-gap")
    for label, row in table.items():
        gaps = [row[c] - max(table["keyword"][c], table["vector"][c]) for c in columns]
        print(f"{label:14s} " + " ".join(f"{row[c]:17.4f}" for c in columns) + f"   {min(gaps):+.4f}")
    if args.json:
        args.json.write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
