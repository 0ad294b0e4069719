"""Which query terms keyword search keeps: keyword-only quality at each common-term share, on every data set.

python -m research.keyword_terms [--shares 0.5,0.2] [--max-terms 12,24] [--datasets scifact,xquad-en,...,locomo]

Keyword search drops terms found in more than a share of the chunks when rarer ones remain
(`memoryd.search.keyword.COMMON_TERM_SHARE`), and scores at most the rarest MAX_SCORED_TERMS of a long query; at a
million chunks the common terms' posting lists are most of the query time. Here, in-process and without
embeddings: SciFact nDCG@10 and MRR@10, XQuAD MRR@10 and Recall@10, LoCoMo (dated notes) session and turn
Recall@5 and turn MRR@5, for every pair of settings.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.beir import CACHE, RESULTS_PER_QUERY, load, open_memory
from bench.conversations import K, judge, load_locomo, write_notes
from bench.metrics import dedupe_docs, evaluate
from memoryd.config import EmbeddingConfig, quickstart_agent
from memoryd.memory import AgentMemory
from memoryd.search import keyword

DATASETS = "scifact,xquad-en,xquad-vi,xquad-vi-notone,xquad-zh,xquad-th,locomo"


Setting = tuple[float, int]  # (common-term share, most terms scored)


def _apply(setting: Setting) -> str:
    keyword.COMMON_TERM_SHARE, keyword.MAX_SCORED_TERMS = setting
    return f"share {setting[0]}, terms {setting[1]}"


def _retrieval(name: str, work: Path, settings: list[Setting]) -> dict[str, dict[str, float]]:
    dataset = load(name)
    memory, mapping = open_memory(dataset, "none", work)
    out = {}
    with memory:
        memory.sync()
        for setting in settings:
            label = _apply(setting)
            runs = {
                qid: dedupe_docs(
                    [r.path for r in memory.search(text, max_results=RESULTS_PER_QUERY, mode="keyword").results],
                    mapping,
                )
                for qid, text in dataset.queries.items()
            }
            out[label] = evaluate(runs, dataset.qrels)
    return out


def _locomo(work: Path, settings: list[Setting]) -> dict[str, dict[str, float]]:
    conversations = load_locomo()
    memories = []
    for conv in conversations:
        workspace = work / "locomo" / "keyword-terms" / conv.id
        write_notes(conv, workspace)
        agent = quickstart_agent(
            workspace, work / "locomo" / "keyword-terms" / f"data-{conv.id}", embedding=EmbeddingConfig(provider="none")
        )
        memory = AgentMemory(agent)
        memory.sync()
        memories.append(memory)
    out = {}
    for setting in settings:
        label = _apply(setting)
        rows = []
        for conv, memory in zip(conversations, memories, strict=True):
            for question, evidence in conv.questions:
                found = memory.search(question, max_results=K, mode="keyword").results
                rows.append(judge(conv, [(r.path, r.chunk_start_line, r.chunk_end_line) for r in found], evidence))
        n = len(rows)
        out[label] = {
            "session_r@5": sum(r[0] for r in rows) / n,
            "turn_r@5": sum(r[1] for r in rows) / n,
            "turn_mrr@5": sum(r[2] for r in rows) / n,
        }
    for memory in memories:
        memory.close()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shares", default="0.5,0.2")
    parser.add_argument("--max-terms", default=str(keyword.MAX_SCORED_TERMS))
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    settings = [(float(s), int(m)) for s in args.shares.split(",") for m in args.max_terms.split(",")]
    default = (keyword.COMMON_TERM_SHARE, keyword.MAX_SCORED_TERMS)
    results: dict[str, Any] = {}
    try:
        for name in args.datasets.split(","):
            measure = _locomo if name == "locomo" else lambda work, s, name=name: _retrieval(name, work, s)
            results[name] = measure(args.workdir, settings)
            for label, figures in results[name].items():
                shown = ", ".join(f"{k} {v:.4f}" for k, v in figures.items())
                print(f"{name:16} {label:22}: {shown}", flush=True)
    finally:
        _apply(default)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
