"""Vectors for parts of a chunk, offline: does scoring a chunk by its best window (a few sentences) beside its own
vector find notes better, within languages and across them?

Each data set's notes are chunked as memoryd chunks them; each chunk is cut again into windows of about
`--window` tokens (the same chunker, no overlap). Queries, chunks and windows are embedded with the default model
(vectors cached under the bench cache), and every rule ranks the notes by vector alone:
- `chunk`: the chunk's own vector (what memoryd does today);
- `window`: the best window's;
- `mix`: half of each (a chunk with one window scores as `chunk`).
XQuAD's questions in each language are asked of every language's paragraphs; SciFact and LoCoMo (sessions as
notes) stand beside them. Reports MRR@10 and nDCG@10 of the notes (LoCoMo: the sessions that hold an evidence
turn, and the share of questions whose top 5 chunks hold one).

python -m research.window_study [--langs vi,en,zh,th] [--sets xquad,scifact,locomo] [--window 64] [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.beir import CACHE
from bench.crosslingual import positional
from bench.datasets import load_scifact, load_xquad
from bench.metrics import evaluate

RULES = ("chunk", "window", "mix")


@dataclass
class Notes:
    """One set's notes as chunks and windows, with their vectors."""

    chunk_doc: list[str] = field(default_factory=list)  # doc id of each chunk
    chunk_lines: list[tuple[int, int]] = field(default_factory=list)
    chunk_text: list[str] = field(default_factory=list)
    window_chunk: list[int] = field(default_factory=list)  # chunk index of each window
    chunks: np.ndarray | None = None
    windows: np.ndarray | None = None


class Vectors:
    """Embeddings by text, cached on disk between runs."""

    def __init__(self, path: Path) -> None:
        from memoryd.config import DEFAULT_LOCAL_MODEL, default_data_dir
        from memoryd.embeddings.local import LocalEmbedder
        from memoryd.embeddings.models.prepare import model_path

        self.path = path
        self.known: dict[str, np.ndarray] = pickle.loads(path.read_bytes()) if path.exists() else {}
        self.model = LocalEmbedder(model_path(default_data_dir(), DEFAULT_LOCAL_MODEL))

    def _get(self, texts: list[str], role: str, embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        keys = [hashlib.sha256(f"{role}\0{t}".encode()).hexdigest() for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self.known}.items())
        for start in range(0, len(missing), 256):
            part = missing[start : start + 256]
            for (key, _), vector in zip(part, embed([t for _, t in part]), strict=True):
                self.known[key] = np.asarray(vector, dtype=np.float32)
            print(f"    embedded {min(start + 256, len(missing))}/{len(missing)} {role}s", flush=True)
        if missing:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.known))
        return np.stack([self.known[k] for k in keys]) if keys else np.zeros((0, 1), dtype=np.float32)

    def documents(self, texts: list[str]) -> np.ndarray:
        return self._get(texts, "document", self.model.embed_documents)

    def queries(self, texts: list[str]) -> np.ndarray:
        return self._get(texts, "query", lambda batch: np.stack([self.model.embed_query(t) for t in batch]))


def chunk_notes(docs: dict[str, str], window: int, vectors: Vectors) -> Notes:
    from memoryd.sources.markdown import chunk_markdown, embed_input

    notes = Notes()
    chunk_inputs, window_inputs = [], []
    for doc_id, text in docs.items():
        for chunk in chunk_markdown(text):
            index = len(notes.chunk_doc)
            notes.chunk_doc.append(doc_id)
            notes.chunk_lines.append((chunk.start_line, chunk.end_line))
            notes.chunk_text.append(chunk.text)
            chunk_inputs.append(chunk.embed_input)
            parts = chunk_markdown(chunk.text, max_tokens=window, overlap_tokens=0)
            if len(parts) > 1:
                for part in parts:
                    context = chunk.heading if not part.text.lstrip().startswith("#") else chunk.context
                    window_inputs.append(embed_input(context, part.text))
                    notes.window_chunk.append(index)
    notes.chunks = _unit(vectors.documents(chunk_inputs))
    notes.windows = _unit(vectors.documents(window_inputs)) if window_inputs else None
    print(f"  {len(docs)} notes, {len(chunk_inputs)} chunks, {len(window_inputs)} windows", flush=True)
    return notes


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def chunk_scores(queries: np.ndarray, notes: Notes) -> dict[str, np.ndarray]:
    """Each rule's score of every chunk for every query (queries x chunks)."""
    assert notes.chunks is not None
    own = queries @ notes.chunks.T
    best = own.copy()
    if notes.windows is not None:
        sims = queries @ notes.windows.T
        owners = np.asarray(notes.window_chunk)
        best = np.full_like(own, -np.inf)
        for column in range(sims.shape[1]):  # a chunk's best window
            np.maximum(best[:, owners[column]], sims[:, column], out=best[:, owners[column]])
        best = np.where(np.isfinite(best), best, own)
    return {"chunk": own, "window": best, "mix": 0.5 * own + 0.5 * best}


def doc_runs(scores: np.ndarray, qids: list[str], notes: Notes, k: int = 10) -> dict[str, list[str]]:
    runs = {}
    for row, qid in zip(scores, qids, strict=True):
        ranked, seen = [], set()
        for index in np.argsort(-row, kind="stable"):
            doc = notes.chunk_doc[index]
            if doc not in seen:
                seen.add(doc)
                ranked.append(doc)
                if len(ranked) == k:
                    break
        runs[qid] = ranked
    return runs


def measure(queries: dict[str, str], qrels: dict[str, dict[str, int]], notes: Notes, vectors: Vectors) -> dict:
    qids = list(queries)
    scores = chunk_scores(_unit(vectors.queries([queries[q] for q in qids])), notes)
    out = {}
    for rule, matrix in scores.items():
        figures = evaluate(doc_runs(matrix, qids, notes), qrels)
        out[rule] = {"mrr@10": round(figures["mrr@10"], 4), "ndcg@10": round(figures["ndcg@10"], 4)}
    return out


def xquad(langs: list[str], window: int, vectors: Vectors) -> dict[str, Any]:
    out: dict[str, Any] = {}
    asked = {lang: positional(load_xquad(lang)) for lang in langs}
    for notes_lang in langs:
        dataset = load_xquad(notes_lang)
        docs = {f"p{i}": f"# {title}\n\n{text}\n" for i, (title, text) in enumerate(dataset.docs.values())}
        notes = chunk_notes(docs, window, vectors)
        for question in langs:
            queries, qrels = asked[question]
            out[f"{question}->{notes_lang}"] = row = measure(queries, qrels, notes, vectors)
            print(f"  {question}->{notes_lang}: " + "  ".join(f"{r} {row[r]['mrr@10']}" for r in RULES), flush=True)
    return out


def scifact(window: int, vectors: Vectors) -> dict[str, Any]:
    dataset = load_scifact()
    docs = {doc: f"# {title}\n\n{text}\n" if title else f"{text}\n" for doc, (title, text) in dataset.docs.items()}
    row = measure(dataset.queries, dataset.qrels, chunk_notes(docs, window, vectors), vectors)
    print("  scifact: " + "  ".join(f"{r} {row[r]['ndcg@10']}" for r in RULES), flush=True)
    return row


def locomo(window: int, vectors: Vectors, work: Path) -> dict[str, Any]:
    from bench.conversations import load_locomo, write_notes

    totals: dict[str, list[float]] = {f"{rule}/{m}": [] for rule in RULES for m in ("session_mrr@10", "turn_hit@5")}
    for conv in load_locomo():
        workspace = work / "window-study" / "locomo" / conv.id
        write_notes(conv, workspace)
        docs = {
            path: (workspace / path).read_text(encoding="utf-8") for path in sorted(set(conv.session_path.values()))
        }
        notes = chunk_notes(docs, window, vectors)
        asked = [(q, ev) for q, ev in conv.questions if any(e in conv.turn_at for e in ev)]
        matrix = _unit(vectors.queries([q for q, _ in asked]))
        for rule, scores in chunk_scores(matrix, notes).items():
            qids = [str(i) for i in range(len(asked))]
            qrels = {
                qid: {conv.turn_at[e][0]: 1 for e in ev if e in conv.turn_at}
                for qid, (_, ev) in zip(qids, asked, strict=True)
            }
            figures = evaluate(doc_runs(scores, qids, notes), qrels)
            totals[f"{rule}/session_mrr@10"].extend([figures["mrr@10"]] * len(qids))
            for row, (_, evidence) in zip(scores, asked, strict=True):
                top = np.argsort(-row, kind="stable")[:5]
                lines = {conv.turn_at[e] for e in evidence if e in conv.turn_at}
                hit = any(
                    notes.chunk_doc[i] == path and notes.chunk_lines[i][0] <= line <= notes.chunk_lines[i][1]
                    for i in top
                    for path, line in lines
                )
                totals[f"{rule}/turn_hit@5"].append(float(hit))
    out = {key: round(float(np.mean(values)), 4) for key, values in totals.items()}
    print("  locomo: " + "  ".join(f"{k} {v}" for k, v in out.items()), flush=True)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m research.window_study", description=__doc__)
    parser.add_argument("--langs", default="vi,en,zh,th")
    parser.add_argument("--sets", default="xquad,scifact,locomo")
    parser.add_argument("--window", type=int, default=64, help="tokens per window (the chunker's estimate)")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    vectors = Vectors(args.workdir / "window-study" / "vectors.pickle")
    sets = args.sets.split(",")
    report: dict[str, Any] = {"window": args.window}
    if "xquad" in sets:
        report["xquad"] = xquad(args.langs.split(","), args.window, vectors)
    if "scifact" in sets:
        report["scifact"] = scifact(args.window, vectors)
    if "locomo" in sets:
        report["locomo"] = locomo(args.window, vectors, args.workdir)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
