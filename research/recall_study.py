"""How automatic recall's gate was chosen, offline: for questions of every data set (prompts that need memory)
and every prompt of both no-memory sets (bench/data), asked of each data set's index, gather what the gate
weighs: the words' verdict (memoryd.recall.gate.prompt_topic), the vector's lean towards small talk
(ChatterCheck), the keyword evidence and vector margin of the search, and the hybrid results. Then score gates
over them: the share of no-memory prompts that get nothing, and of questions whose block holds an answer.
`python -m bench.recall` measures the chosen rule end to end through the daemon.

python -m research.recall_study gather        # writes .cache/bench/recall-study.pickle (about 5 minutes)
python -m research.recall_study grid          # gates over the gathered features, per data set
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
from pathlib import Path
from typing import Any

from bench.beir import CACHE, load, open_memory
from memoryd.config import EmbeddingConfig, QueryConfig, default_data_dir, quickstart_agent
from memoryd.embeddings.models.prepare import model_path
from memoryd.memory import AgentMemory
from memoryd.recall.gate import ChatterCheck, prompt_topic
from memoryd_client.protocol.schema import Search

PROMPT_SETS = ("no_memory_prompts", "no_memory_heldout")
OUT = CACHE / "recall-study.pickle"
RESULTS = 10
QUESTIONS_PER_SET = 300


CHATTER = ChatterCheck()


def features(memory: AgentMemory, prompt: str) -> dict[str, Any]:
    """What the gate weighs for one prompt (all of it, also what an earlier step of the gate would stop)."""
    embedded = memory.engine.query_vector(prompt)
    lean = CHATTER.lean(*embedded) if embedded else None
    found = memory.run_search(Search(query=prompt, max_results=RESULTS, min_score=0.0))
    return {
        "prompt": prompt,
        "lean": lean,
        "evidence": found.evidence or 0.0,
        "vector_margin": found.vector_margin,
        "results": [r.path for r in found.results],
    }


def gather_set(name: str, memory: AgentMemory, questions: list[tuple[str, Any]]) -> dict[str, Any]:
    from bench.recall import prompts

    print(f"  {name}: {len(questions)} questions", file=sys.stderr, flush=True)
    out: dict[str, Any] = {"positives": [(features(memory, q), truth) for q, truth in questions]}
    for prompt_set in PROMPT_SETS:
        out[prompt_set] = [features(memory, p) for p in prompts(prompt_set)]
    return out


def gather(workdir: Path) -> dict[str, Any]:
    from bench.conversations import load_locomo, write_notes

    sample = random.Random(7)
    out: dict[str, Any] = {}
    e5 = model_path(default_data_dir())
    for name in ("scifact", "xquad-vi", "xquad-en", "xquad-zh", "xquad-th"):
        dataset = load(name)
        memory, mapping = open_memory(dataset, "local", workdir, e5)
        with memory:
            memory.reindex() if memory.needs_reindex() else memory.sync()
            qids = sorted(dataset.queries)
            qids = sample.sample(qids, min(QUESTIONS_PER_SET, len(qids)))
            truth = {q: set(dataset.qrels.get(q, {})) for q in qids}
            by_path = {path: doc for path, doc in mapping.items()}
            out[name] = gather_set(name, memory, [(dataset.queries[q], truth[q]) for q in qids])
            out[name]["mapping"] = by_path
    for conv in load_locomo():
        workspace = workdir / "locomo" / "recall" / conv.id
        write_notes(conv, workspace)
        agent = quickstart_agent(
            workspace,
            workdir / "locomo" / "recall" / "data" / conv.id,
            embedding=EmbeddingConfig(provider="local", model_path=str(e5)),
            query=QueryConfig(),
        )
        with AgentMemory(agent) as memory:
            memory.reindex() if memory.needs_reindex() else memory.sync()
            sessions = [{conv.turn_at[e][0] for e in evidence if e in conv.turn_at} for _, evidence in conv.questions]
            got = gather_set(conv.id, memory, list(zip([q for q, _ in conv.questions], sessions, strict=True)))
            out[f"locomo/{conv.id}"] = got
    return out


def passes(row: dict[str, Any], lean: float, evidence: float, margin: float) -> bool:
    """The gate of memoryd.recall.answer with these thresholds."""
    if prompt_topic(row["prompt"]) is not None:
        return False
    if row["lean"] is not None and row["lean"] >= lean:
        return False
    return row["evidence"] >= evidence or (row["vector_margin"] is not None and row["vector_margin"] >= margin)


def answered(row: dict[str, Any], truth: set[str], mapping: dict[str, str] | None, k: int) -> bool:
    return any((mapping.get(p) if mapping else p) in truth for p in row["results"][:k])


def grid(data: dict[str, Any], k: int) -> None:
    """Per gate: the worst data set's share of questions answered in the block (top k), and each prompt set's
    worst share of prompts that got nothing."""
    print(f"lean  evid  margin | worst answered | worst quiet: {', '.join(PROMPT_SETS)} | per set answered")
    for lean in (0.03, 0.04, 0.05, 9.0):
        for evidence in (0.0, 0.2, 0.3, 0.4):
            for margin in (-1.0, 0.0, 0.5, 99.0):
                shares, quiet = {}, dict.fromkeys(PROMPT_SETS, 1.0)
                for name, rows in data.items():
                    mapping = rows.get("mapping")
                    good = [
                        passes(r, lean, evidence, margin) and answered(r, t, mapping, k) for r, t in rows["positives"]
                    ]
                    shares[name] = sum(good) / len(good)
                    for prompt_set in PROMPT_SETS:
                        kept = [not passes(r, lean, evidence, margin) for r in rows[prompt_set]]
                        quiet[prompt_set] = min(quiet[prompt_set], sum(kept) / len(kept))
                each = " ".join(f"{v:.3f}" for v in shares.values())
                quiets = " ".join(f"{v:.3f}" for v in quiet.values())
                print(f"{lean:4.2f}  {evidence:4.2f}  {margin:5.1f}  | {min(shares.values()):.3f} | {quiets} | {each}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("gather", "grid"))
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("-k", type=int, default=6, help="Results that fit the block (grid).")
    args = parser.parse_args(argv)
    if args.step == "gather":
        OUT.write_bytes(pickle.dumps(gather(args.workdir)))
        print(f"wrote {OUT}", file=sys.stderr)
    else:
        grid(pickle.loads(OUT.read_bytes()), args.k)


if __name__ == "__main__":
    main()
