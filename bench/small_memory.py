"""Search in a small memory: a workspace of 1 to 34 notes, as every user's memory starts.

In a small index the whole index is the candidate pool, so a rule that scales a side by its own candidates
(min-max) or weighs words by how rare they are (IDF: in two notes, a word both hold weighs nothing) has
little to measure against. Each shared set is cut into workspaces of SIZES notes, drawn at random among the
documents a question is about; every workspace is indexed in this process with the default local model and
asked, with the default max_results and min_score:
- a question about each of its notes ("found": the share of the notes it is about that are among the results;
  MRR of the first);
- as many questions about notes it does not hold ("stray": the share of the notes it could show, min(notes,
  max_results), that such a question still gets).

python -m bench.small_memory                        # SciFact, XQuAD en/vi/zh/th, LoCoMo sessions; keyword and hybrid
python -m bench.small_memory --sets xquad-th --workspaces 4
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.beir import load
from bench.datasets import Dataset
from memoryd.config import quickstart_agent
from memoryd.embeddings.base import Embedder
from memoryd.memory import AgentMemory
from memoryd.search import hybrid

SETS = "scifact,xquad-en,xquad-vi,xquad-zh,xquad-th,locomo"
SIZES = (1, 2, 3, 5, 8, 13, 21, 34)
WORKSPACES = 6  # per set and size
MODES = ("keyword", "hybrid")
UNPADDED = "hybrid, unpadded"  # --unpadded: hybrid as it was before search.background, for the design study
SEED = 20261128


class Remembering(Embedder):
    """The local model, each text embedded once for every workspace of the run."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.provider, self.model, self.dims = inner.provider, inner.model, inner.dims
        self.key_fingerprint = inner.key_fingerprint
        self.seen: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        fresh = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if fresh:
            self.seen.update(zip(fresh, self.inner.embed_documents(fresh, urgent=urgent), strict=True))
            self.dims = self.inner.dims
        return np.stack([self.seen[t] for t in texts]) if texts else np.zeros((0, self.dims), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        key = "\0query\0" + text
        if key not in self.seen:
            self.seen[key] = self.inner.embed_query(text)
        return self.seen[key]

    @property
    def prompts(self) -> tuple[str, str]:
        return self.inner.prompts


def locomo_sessions() -> list[Dataset]:
    """Each LoCoMo conversation as a set: one document per session, a question about the sessions its evidence
    is in."""
    from bench.conversations import load_locomo

    sets = []
    for conv in load_locomo():
        docs, session_of = {}, {}
        for session in conv.sessions:
            doc = f"{conv.id}-s{session.number}"
            title = f"{conv.speakers[0]} and {conv.speakers[1]}, session {session.number}"
            docs[doc] = (title, "\n".join(f"{t.speaker}: {t.text}" for t in session.turns))
            session_of.update({t.dia_id: doc for t in session.turns})
        queries, qrels = {}, {}
        for number, (question, evidence) in enumerate(conv.questions):
            held = {session_of[e]: 1 for e in evidence if e in session_of}
            if held:
                queries[f"q{number}"], qrels[f"q{number}"] = question, held
        sets.append(Dataset(f"locomo-{conv.id}", docs, queries, qrels))
    return sets


def workspaces(
    dataset: Dataset, rng: random.Random, size: int, count: int
) -> Iterator[tuple[list[str], dict[str, Any]]]:
    """`count` draws of `size` documents that questions are about: where the set has questions about several
    documents (LoCoMo, SciFact), each draw holds one such question's documents, the rest at random. A draw is
    asked a question about each of its documents, and as many about documents it does not hold."""
    about: dict[str, list[str]] = {}
    for qid, rels in dataset.qrels.items():
        if qid in dataset.queries:
            for doc in rels:
                about.setdefault(doc, []).append(qid)
    docs = sorted(d for d in about if d in dataset.docs)
    several = sorted(q for q, rels in dataset.qrels.items() if q in dataset.queries and len(set(rels) & set(docs)) > 1)
    for _ in range(count):
        chosen: list[str] = []
        related: dict[str, set[str]] = {}
        if several and size > 1:
            anchor = rng.choice(several)
            chosen = sorted(set(dataset.qrels[anchor]) & set(docs))[:size]
            related[anchor] = set(chosen)
        chosen += rng.sample([d for d in docs if d not in chosen], min(size - len(chosen), len(docs) - len(chosen)))
        held = set(chosen)
        for doc in chosen:
            if any(doc in rels for rels in related.values()):
                continue
            fitting = [q for q in about[doc] if q not in related]
            if fitting:
                question = rng.choice(fitting)
                related[question] = set(dataset.qrels[question]) & held
        outside = [q for q, rels in dataset.qrels.items() if q in dataset.queries and not set(rels) & held]
        unrelated = rng.sample(outside, min(len(related), len(outside)))
        yield chosen, {"related": related, "unrelated": unrelated}


@contextlib.contextmanager
def unpadded(label: str) -> Iterator[None]:
    """Hybrid search without the background, for the label UNPADDED."""
    if label != UNPADDED:
        yield
        return
    saved = hybrid.background_vectors
    hybrid.background_vectors = lambda embedder: None
    try:
        yield
    finally:
        hybrid.background_vectors = saved


def measure_set(
    dataset: Dataset, embedder: Remembering, root: Path, sizes: tuple[int, ...], count: int, labels: tuple[str, ...]
) -> dict:
    rng = random.Random(f"{SEED}-{dataset.name}")
    out: dict[str, Any] = {}
    for size in sizes:
        rows: dict[str, dict[str, list[float]]] = {m: {"found": [], "rr": [], "stray": []} for m in labels}
        for number, (chosen, asked) in enumerate(workspaces(dataset, rng, size, count)):
            workspace = root / f"{dataset.name}-{size}-{number}"
            folder = workspace / "memory"
            folder.mkdir(parents=True)
            path_of = {}
            for index, doc in enumerate(chosen):
                title, text = dataset.docs[doc]
                (folder / f"n{index:02d}.md").write_text(f"# {title}\n\n{text}\n" if title else f"{text}\n", "utf-8")
                path_of[f"memory/n{index:02d}.md"] = doc
            agent = quickstart_agent(workspace, workspace.with_name(workspace.name + "-data"))
            with AgentMemory(agent, embedder) as memory:
                memory.sync()
                for label in labels:
                    mode = label.split(",")[0]
                    with unpadded(label):
                        answers = {q: memory.search(dataset.queries[q], mode=mode).results for q in asked["related"]}
                        strays = [memory.search(dataset.queries[q], mode=mode).results for q in asked["unrelated"]]
                    for qid, docs in asked["related"].items():
                        found = [path_of[r.path] for r in answers[qid]]
                        rank = next((i for i, d in enumerate(dict.fromkeys(found), 1) if d in docs), None)
                        rows[label]["found"].append(len(docs & set(found)) / len(docs))
                        rows[label]["rr"].append(1.0 / rank if rank else 0.0)
                    shown = min(size, memory.agent.query.max_results)
                    rows[label]["stray"] += [len({r.path for r in got}) / shown for got in strays]
        out[str(size)] = {
            mode: {
                "found": round(float(np.mean(r["found"])), 4) if r["found"] else None,
                "mrr": round(float(np.mean(r["rr"])), 4) if r["rr"] else None,
                "stray": round(float(np.mean(r["stray"])), 4) if r["stray"] else None,
                "asked": len(r["found"]),
            }
            for mode, r in rows.items()
        }
        line = "  ".join(f"{m} found {v['found']} mrr {v['mrr']} stray {v['stray']}" for m, v in out[str(size)].items())
        print(f"  [{dataset.name}] {size:2d} notes: {line}", flush=True)
    return out


def _averaged(found: dict[str, dict], group: Callable[[str, str], str]) -> dict[str, dict[str, dict[str, float]]]:
    """The figures of every set and size averaged per group (`group(set name, size)`) and mode."""
    rows: dict[str, dict[str, dict[str, list[float]]]] = {}
    for name, by_sizes in found.items():
        for size, by_mode in by_sizes.items():
            for mode, row in by_mode.items():
                slot = rows.setdefault(group(name, size), {}).setdefault(mode, {"found": [], "mrr": [], "stray": []})
                for key in slot:
                    if row[key] is not None:
                        slot[key].append(row[key])
    return {
        key: {mode: {k: round(float(np.mean(v)), 4) for k, v in row.items() if v} for mode, row in modes.items()}
        for key, modes in rows.items()
    }


def summary(found: dict[str, dict]) -> dict[str, dict[str, dict[str, float]]]:
    """Per set family and mode, the figures over every size (LoCoMo's conversations as one set)."""
    return _averaged(found, lambda name, size: "locomo" if name.startswith("locomo-") else name)


def by_size(found: dict[str, dict]) -> dict[str, dict[str, dict[str, float]]]:
    """Per size and mode, the figures over every set (each LoCoMo conversation a set)."""
    return _averaged(found, lambda name, size: size)


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part."""
    summary_rows = found.get("summary", {})
    if not summary_rows:
        return {}
    hybrid = [modes["hybrid"] for modes in summary_rows.values() if "hybrid" in modes]
    return {
        "small memory: notes found, hybrid, worst set": min(row["found"] for row in hybrid),
        "small memory: notes an unrelated question gets, hybrid, mean": round(
            float(np.mean([row["stray"] for row in hybrid])), 4
        ),
    }


def markdown(found: dict[str, Any]) -> list[str]:
    """bench report's section."""
    summary_rows, sizes = found.get("summary", {}), by_size(found.get("sets", {}))
    labels = [label for label in (*MODES, UNPADDED) if any(label in modes for modes in summary_rows.values())]
    head = "| | " + " | ".join(labels) + " |"
    rule = "|---" * (len(labels) + 1) + "|"

    def cell(row: dict[str, float] | None) -> str:
        return "" if not row else f"{row['found']:.3f} / {row['mrr']:.3f} / {row['stray']:.3f}"

    lines = [
        "## A small memory (`python -m bench small`)",
        "",
        f"Workspaces of {', '.join(sizes)} notes cut from each shared set ({WORKSPACES} per size, default"
        " max_results and min_score). Each cell: found (share of the notes a question is about among its results)"
        " / MRR / stray (share of the notes it could show that a question about none of them still gets)."
        f" `{UNPADDED}` is hybrid search without search.background.",
        "",
        head.replace("| |", "| set |", 1),
        rule,
    ]
    lines += [
        f"| {name} | " + " | ".join(cell(modes.get(label)) for label in labels) + " |"
        for name, modes in summary_rows.items()
    ]
    lines += ["", head.replace("| |", "| notes |", 1), rule]
    lines += [
        f"| {size} | " + " | ".join(cell(modes.get(label)) for label in labels) + " |" for size, modes in sizes.items()
    ]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--workspaces", type=int, default=WORKSPACES)
    parser.add_argument(
        "--unpadded", action=argparse.BooleanOptionalAction, default=True, help="also hybrid without search.background"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from memoryd.config import default_data_dir, default_model_path
    from memoryd.embeddings.local import LocalEmbedder

    embedder = Remembering(LocalEmbedder(default_model_path(default_data_dir())))
    sizes = tuple(int(s) for s in args.sizes.split(","))
    labels = (*MODES, UNPADDED) if args.unpadded else MODES
    root = Path(tempfile.mkdtemp(prefix="memoryd-small-"))
    found: dict[str, Any] = {}
    try:
        for name in args.sets.split(","):
            for dataset in locomo_sessions() if name == "locomo" else [load(name)]:
                print(f"[{dataset.name}] {len(dataset.docs)} documents", flush=True)
                found[dataset.name] = measure_set(dataset, embedder, root, sizes, args.workspaces, labels)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        embedder.inner.close()
    results = {"sets": found, "summary": summary(found)}
    print(json.dumps(results["summary"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
