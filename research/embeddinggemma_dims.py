"""EmbeddingGemma is trained so that its first 512, 256 or 128 dimensions still work (Matryoshka): should memoryd
keep fewer than 768?

Reads the vectors the cross-lingual bench stored (`python -m bench.crosslingual --model embeddinggemma-300m` first:
its XQuAD indexes under the bench cache), embeds each language's questions once (cached), and ranks every
language's paragraphs for every language's questions by vector alone, as memoryd's vector side scores a chunk
(its own cosine and its best window's, half each), at each truncation (the first d dimensions, normalised again).
Reports MRR@10 and R@10 per ordered pair.

python -m research.embeddinggemma_dims [--langs vi,en,zh,th] [--dims 768,512,256,128] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from bench.beir import CACHE
from bench.crosslingual import positional
from bench.datasets import dataset_workspace, load_xquad
from bench.metrics import dedupe_docs, evaluate

MODEL = "embeddinggemma-300m"
WINDOW_WEIGHT = 0.5  # memoryd's default `query.window_weight`


def _unit(matrix: np.ndarray, dims: int) -> np.ndarray:
    cut = np.asarray(matrix, dtype=np.float32)[..., :dims]
    return cut / np.maximum(np.linalg.norm(cut, axis=-1, keepdims=True), 1e-12)


def notes_of(lang: str, work: Path) -> tuple[list[str], np.ndarray, list[np.ndarray]]:
    """(each chunk's paragraph position, chunk vectors, window vectors per chunk) from the bench's index."""
    from memoryd.config import EmbeddingConfig, default_data_dir, quickstart_agent
    from memoryd.embeddings.models.prepare import model_path
    from memoryd.memory import AgentMemory

    dataset = load_xquad(lang)
    workspace, mapping = dataset_workspace(dataset, work)
    position = {path: f"p{list(dataset.docs).index(doc)}" for path, doc in mapping.items()}
    gguf = model_path(default_data_dir(), MODEL)
    data = work / dataset.name / f"local-{gguf.stem}"
    agent = quickstart_agent(workspace, data, embedding=EmbeddingConfig(provider="local", model_path=str(gguf)))
    with AgentMemory(agent) as memory:
        rows = memory.store.conn.execute(
            "SELECT chunks.id, files.path FROM chunks JOIN files ON files.id = chunks.file_id"
        )
        ids, paths = zip(*rows.fetchall(), strict=True)
        vectors = memory.vectors.vectors_of(list(ids))
        windows = memory.store.window_vectors(list(ids))
    kept = [i for i in ids if i in vectors]
    chunk_matrix = np.stack([vectors[i] for i in kept])
    window_list = [windows.get(i, vectors[i][None, :]) for i in kept]
    by_id = dict(zip(ids, paths, strict=True))
    return [position[by_id[i]] for i in kept], chunk_matrix, window_list


def questions(lang: str, cache: Path) -> tuple[list[str], np.ndarray, dict[str, dict[str, int]]]:
    from memoryd.config import default_data_dir
    from memoryd.embeddings.local import LocalEmbedder
    from memoryd.embeddings.models.prepare import model_path

    queries, qrels = positional(load_xquad(lang))
    path = cache / f"questions-{lang}.pickle"
    if path.exists():
        return list(queries), pickle.loads(path.read_bytes()), qrels
    embedder = LocalEmbedder(model_path(default_data_dir(), MODEL))
    try:
        matrix = np.stack([embedder.embed_query(text) for text in queries.values()])
    finally:
        embedder.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(matrix))
    return list(queries), matrix, qrels


def rank(
    qids: list[str], asked: np.ndarray, notes: tuple[list[str], np.ndarray, list[np.ndarray]], dims: int
) -> dict[str, list[str]]:
    positions, chunks, windows = notes
    q = _unit(asked, dims)
    whole = q @ _unit(chunks, dims).T
    best = np.stack([(q @ _unit(w, dims).T).max(axis=1) for w in windows], axis=1)
    scores = (1 - WINDOW_WEIGHT) * whole + WINDOW_WEIGHT * best
    order = np.argsort(-scores, axis=1)[:, :50]
    identity = {p: p for p in positions}
    return {qid: dedupe_docs([positions[i] for i in row], identity)[:10] for qid, row in zip(qids, order, strict=True)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m research.embeddinggemma_dims", description=__doc__)
    parser.add_argument("--langs", default="vi,en,zh,th")
    parser.add_argument("--dims", default="768,512,256,128")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    langs, sizes = args.langs.split(","), [int(d) for d in args.dims.split(",")]
    notes = {lang: notes_of(lang, args.workdir) for lang in langs}
    asked = {lang: questions(lang, args.workdir / "embeddinggemma-dims") for lang in langs}
    out: dict[str, Any] = {}
    for question in langs:
        qids, matrix, qrels = asked[question]
        for target in langs:
            row = out.setdefault(f"{question}->{target}", {})
            for dims in sizes:
                scores = evaluate(rank(qids, matrix, notes[target], dims), qrels)
                row[dims] = {"mrr@10": round(scores["mrr@10"], 3), "recall@10": round(scores["recall@10"], 3)}
            print(f"{question} -> {target}: " + "  ".join(f"{d}: {row[d]['mrr@10']}" for d in sizes), flush=True)
    for dims in sizes:
        across = [r[dims]["mrr@10"] for p, r in out.items() if p.split("->")[0] != p.split("->")[1]]
        within = [r[dims]["mrr@10"] for p, r in out.items() if p.split("->")[0] == p.split("->")[1]]
        print(f"{dims}: across mean {np.mean(across):.3f} worst {min(across):.3f}; within mean {np.mean(within):.3f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
