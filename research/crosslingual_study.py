"""Fusion rules offline, across languages and within them: each question's keyword and vector candidates (and how
much of it the best keyword hit holds, `keyword_evidence`) are gathered once through the engine, then fused every
way and scored. XQuAD's questions in each language are asked of every language's paragraphs (16 pairs); SciFact
and LoCoMo (notes) stand beside them, so a rule that helps across languages cannot hide a loss within one.

python -m research.crosslingual_study [--langs vi,en,zh,th] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.beir import CACHE, load, open_memory
from bench.crosslingual import positional
from bench.datasets import load_xquad
from bench.metrics import dedupe_docs, evaluate
from memoryd.config import DEFAULT_LOCAL_MODEL, EmbeddingConfig, QueryConfig, default_data_dir, quickstart_agent
from memoryd.embeddings.models.prepare import model_path
from memoryd.memory import AgentMemory
from memoryd.search.filters import Filters
from memoryd.search.fusion import Candidate, adaptive_fusion, fuse
from memoryd.store.vectors import VectorScan
from research import fusion_study

POOL = 200  # what a 50-result search gathers (max_results x candidate_multiplier)
# in the cached files' names: what a candidate records changed (v2: the chunk's own cosine beside its blend)
GATHERED = "xl-gathered-v2"
NO_FILTER = Filters.parse(None, None, None, None, None)
# (candidates, vector scan, keyword evidence, share of the query's terms that some chunk holds)
Rule = Callable[[list[Candidate], VectorScan | None, float | None, float], None]


def _record(memory: AgentMemory, text: str) -> tuple[list[tuple], tuple | None, float | None, float]:
    got = memory.engine.gather(text, "hybrid", POOL, NO_FILTER)
    scan = got.vector_scan
    rows = [
        (c.chunk_id, c.text_score, c.vector_score, c.text_rank, c.vector_rank, c.chunk_score) for c in got.candidates
    ]
    return rows, (scan.mean, scan.std, scan.count) if scan else None, got.evidence, known_share(memory, text)


def known_share(memory: AgentMemory, text: str) -> float:
    """The share of the query's terms that some chunk holds (a question in another language holds few)."""
    from memoryd.sources.analyzer import query_terms

    terms = query_terms(text)
    frequencies = memory.store.document_frequencies(t for term in terms for t in term.phrase)
    known = [all(frequencies.get(t, 0) > 0 for t in term.phrase) for term in terms]
    return sum(known) / len(known) if known else 1.0


def _current(memory: AgentMemory) -> None:
    """The index as the daemon would serve it: rebuilt when its chunking (or model) changed, else synced."""
    if memory.needs_reindex():
        memory.reindex()
    else:
        memory.sync()


def _cached(path: Path, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    if path.exists():
        return pickle.loads(path.read_bytes())
    out = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def gather_pair(question: str, notes: str, work: Path) -> dict[str, Any]:
    def make() -> dict[str, Any]:
        dataset = load_xquad(notes)
        queries, qrels = positional(load_xquad(question))
        memory, mapping = open_memory(dataset, "local", work, model_path(default_data_dir(), DEFAULT_LOCAL_MODEL))
        order = {doc: f"p{i}" for i, doc in enumerate(dataset.docs)}
        with memory:
            _current(memory)
            gathered = {qid: _record(memory, text) for qid, text in queries.items()}
            ids = {row[0] for rows, *_ in gathered.values() for row in rows}
            paths = {cid: row.path for cid, row in memory.store.chunks_by_ids(list(ids)).items()}
        print(f"  gathered {question}->{notes}", flush=True)
        return {
            "queries": gathered,
            "paths": paths,
            "mapping": {p: order[d] for p, d in mapping.items()},
            "qrels": qrels,
        }

    return _cached(work / f"xquad-{notes}" / f"{GATHERED}-{question}.pickle", make)


def gather_beir(name: str, work: Path) -> dict[str, Any]:
    def make() -> dict[str, Any]:
        dataset = load(name)
        memory, mapping = open_memory(dataset, "local", work, model_path(default_data_dir(), DEFAULT_LOCAL_MODEL))
        with memory:
            _current(memory)
            gathered = {qid: _record(memory, text) for qid, text in dataset.queries.items()}
            ids = {row[0] for rows, *_ in gathered.values() for row in rows}
            paths = {cid: row.path for cid, row in memory.store.chunks_by_ids(list(ids)).items()}
        return {"queries": gathered, "paths": paths, "mapping": mapping, "qrels": dataset.qrels}

    return _cached(work / name / f"{GATHERED}.pickle", make)


def gather_locomo(work: Path) -> dict[str, Any]:
    from bench.conversations import load_locomo, write_notes

    def make() -> dict[str, Any]:
        queries, chunks, judges = {}, {}, {}
        for conv in load_locomo():
            workspace = work / "locomo" / "xl-study" / conv.id
            write_notes(conv, workspace)
            agent = quickstart_agent(
                workspace,
                work / "locomo" / "xl-study" / "data" / conv.id,
                embedding=EmbeddingConfig(
                    provider="local", model_path=str(model_path(default_data_dir(), DEFAULT_LOCAL_MODEL))
                ),
                query=QueryConfig(min_score=-1.0),
            )
            with AgentMemory(agent) as memory:
                _current(memory)
                for i, (question, evidence) in enumerate(conv.questions):
                    qid = f"{conv.id}/{i}"
                    queries[qid] = _record(memory, question)
                    for cid, row in memory.store.chunks_by_ids([r[0] for r in queries[qid][0]]).items():
                        chunks[f"{conv.id}/{cid}"] = (row.path, row.start_line, row.end_line)
                    judges[qid] = (conv.turn_at, evidence)
        return {"queries": queries, "chunks": chunks, "judges": judges}

    return _cached(work / "locomo" / f"{GATHERED}.pickle", make)


def _ranked(
    rows: list[tuple], stats: tuple | None, evidence: float | None, known: float, rule: Rule
) -> list[Candidate]:
    cands = [
        Candidate(cid, vector_score=v, text_score=t, vector_rank=vr, text_rank=tr, chunk_score=own)
        for cid, t, v, tr, vr, own in rows
    ]
    rule(cands, VectorScan([], *stats) if stats else None, evidence, known)
    cands.sort(key=lambda c: (-c.score, c.chunk_id))
    return cands


def score(gathered: dict[str, Any], rule: Rule) -> dict[str, float]:
    if "judges" in gathered:
        from bench.conversations import Conversation, judge, score_rows

        judged = []
        for qid, (rows, stats, evidence, known) in gathered["queries"].items():
            conv_id = qid.split("/")[0]
            turn_at, wanted = gathered["judges"][qid]
            ranked = _ranked(rows, stats, evidence, known, rule)[:5]
            found = [gathered["chunks"][f"{conv_id}/{c.chunk_id}"] for c in ranked]
            judged.append(judge(Conversation(conv_id, ("", ""), [], [], turn_at), found, wanted))
        scored = score_rows(judged)
        return {"mrr@10": scored["turn_mrr@5"], "recall@10": scored["turn_r@5"], "session_r@5": scored["session_r@5"]}
    runs = {}
    for qid, (rows, stats, evidence, known) in gathered["queries"].items():
        ranked = _ranked(rows, stats, evidence, known, rule)
        runs[qid] = dedupe_docs([gathered["paths"][c.chunk_id] for c in ranked], gathered["mapping"])
    return evaluate(runs, gathered["qrels"])


def side_only(side: str) -> Rule:
    """One side's own ranking (research.fusion_study's), evidence aside."""
    ranked = fusion_study.side_only(side)
    return lambda cands, scan, evidence, known: ranked(cands, scan)


def configured(power: float | None = None, **settings: Any) -> Rule:
    """The engine's fusion with these query settings (and `power`, adaptive fusion's takeover power)."""
    cfg = QueryConfig(**settings)

    def rule(cands: list[Candidate], scan: VectorScan | None, evidence: float | None, known: float) -> None:
        if power is None:
            fuse(cands, cfg.fusion, cfg, has_vector=True, has_text=True, scan=scan, evidence=evidence)
            return
        adaptive_fusion(
            cands, cfg.vector_weight, cfg.text_weight, has_vector=True, has_text=True, scan=scan,
            span=cfg.confidence_span, evidence=evidence, evidence_floor=cfg.evidence_floor,
            evidence_span=cfg.evidence_span, takeover_power=power,
        )  # fmt: skip

    return rule


def knowing(floor: float, span: float, **settings: Any) -> Rule:
    """The configured rule, with keyword evidence scaled by how much of the query the index knows at all: a
    query whose terms mostly occur in no chunk is in another language than the notes."""
    cfg = QueryConfig(**settings)

    def rule(cands: list[Candidate], scan: VectorScan | None, evidence: float | None, known: float) -> None:
        earned = min(1.0, max(0.0, (known - floor) / span)) if span > 0 else float(known >= floor)
        scaled = evidence * earned if evidence is not None else None
        fuse(cands, cfg.fusion, cfg, has_vector=True, has_text=True, scan=scan, evidence=scaled)

    return rule


def rules(grid: bool) -> dict[str, Rule]:
    out = {"keyword": side_only("text"), "vector": side_only("vector"), "default": configured()}
    if grid:
        for low in (0.1, 0.2, 0.3, 0.4, 0.5):
            for width in (0.1, 0.2, 0.3, 0.4, 0.5):
                for power in (1.0, 0.75, 0.5, 0.25, 0.0):
                    out[f"ev{low}+{width}^{power}"] = configured(power, evidence_floor=low, evidence_span=width)
        for floor in (0.3, 0.4, 0.5, 0.6, 0.7):
            for span in (0.0, 0.1, 0.2, 0.3):
                out[f"known{floor}+{span}"] = knowing(floor, span)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--langs", default="vi,en,zh,th")
    parser.add_argument("--others", default="scifact,locomo", help="within-language sets beside XQuAD")
    parser.add_argument(
        "--grid", action="store_true", help="every evidence floor, span and takeover power, and the known-share rules"
    )
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    langs = args.langs.split(",")
    sets: dict[str, dict[str, Any]] = {}
    for notes in langs:
        for question in langs:
            sets[f"{question}->{notes}"] = gather_pair(question, notes, args.workdir)
    for name in filter(None, args.others.split(",")):
        sets[name] = gather_locomo(args.workdir) if name == "locomo" else gather_beir(name, args.workdir)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for label, rule in rules(args.grid).items():
        table[label] = {name: {k: round(v, 4) for k, v in score(g, rule).items()} for name, g in sets.items()}
    cross = [n for n in sets if "->" in n and n.split("->")[0] != n.split("->")[1]]
    within = [n for n in sets if n not in cross]
    print(f"{'rule':14s} {'cross min MRR':>14s} {'cross mean':>11s} {'cross min R@10':>15s} {'within worst d':>15s}")
    for label, row in table.items():
        mrr = [row[n]["mrr@10"] for n in cross]
        drop = min(row[n]["mrr@10"] - table["default"][n]["mrr@10"] for n in within)
        print(
            f"{label:14s} {min(mrr, default=0):14.4f} {sum(mrr) / max(len(mrr), 1):11.4f} "
            f"{min((row[n]['recall@10'] for n in cross), default=0):15.4f} {drop:+15.4f}"
        )
    if args.json:
        args.json.write_text(json.dumps(table, indent=2))
    return table


if __name__ == "__main__":
    main()
