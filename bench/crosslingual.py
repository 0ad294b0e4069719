"""Cross-lingual recall through the daemon: XQuAD is parallel (the same paragraphs and questions in every
language, in the same order), so each language's questions can be asked of every language's notes. For every
ordered pair of the languages, keyword, vector and hybrid Recall@10 / MRR@10, the within-language pairs beside
them, so that a gain across languages cannot hide a loss within one.

Notes in two languages at once (`--mixed en+zh`): paragraph i is written in the first language when i is even, in
the second when odd, so every answer exists once, in one of the two; each language's questions are asked of them.
A team's notes are often like this, and a question's own language must not outrank the answer written in the other.

python -m bench.crosslingual [--langs vi,en,zh,th] [--mixed en+zh,en+vi,vi+th] [--only-mixed] [--workdir DIR]
                             [--model embeddinggemma-300m] [--json OUT]
python -m bench crosslingual            # the same, kept for `python -m bench report`
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.beir import CACHE, RESULTS_PER_QUERY
from bench.datasets import Dataset, dataset_workspace, load_xquad
from bench.harness import start_daemon
from bench.metrics import dedupe_docs, evaluate

MODES = ("keyword", "vector", "hybrid")
LANGS = "vi,en,zh,th"
MIXED = "en+zh,en+vi,vi+th"


def positional(dataset: Dataset) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Questions and their paragraph by position (`q17`, `p3`): the same in every language."""
    order = {doc_id: f"p{i}" for i, doc_id in enumerate(dataset.docs)}
    queries, qrels = {}, {}
    for i, (qid, text) in enumerate(dataset.queries.items()):
        queries[f"q{i}"] = text
        qrels[f"q{i}"] = {order[d]: grade for d, grade in dataset.qrels[qid].items()}
    return queries, qrels


def mixed(first: Dataset, second: Dataset) -> Dataset:
    """XQuAD's paragraphs alternating between two languages (even positions in the first), questions left out."""
    paragraphs = zip(first.docs.values(), second.docs.values(), strict=True)
    docs = {f"p{i}": pair[i % 2] for i, pair in enumerate(paragraphs)}
    return Dataset(f"{first.name}+{second.name.removeprefix('xquad-')}", docs, {}, {})


def measure(
    langs: list[str],
    work: Path,
    modes: tuple[str, ...] = MODES,
    mixes: list[str] | None = None,
    single: bool = True,
    model_name: str = "",
) -> dict[str, Any]:
    from memoryd.config import DEFAULT_LOCAL_MODEL, default_data_dir
    from memoryd.embeddings.models.prepare import model_path

    model = model_path(default_data_dir(), model_name or DEFAULT_LOCAL_MODEL)
    sets = {lang: load_xquad(lang) for lang in {*langs, *(part for mix in mixes or [] for part in mix.split("+"))}}
    asked = {lang: positional(sets[lang]) for lang in langs}
    notes_sets = {lang: sets[lang] for lang in langs} if single else {}
    for mix in mixes or []:
        first, second = mix.split("+")
        notes_sets[mix] = mixed(sets[first], sets[second])
    out: dict[str, Any] = {}
    for notes, dataset in notes_sets.items():
        workspace, mapping = dataset_workspace(dataset, work)
        by_position = {path: f"p{list(dataset.docs).index(doc)}" for path, doc in mapping.items()}
        daemon = start_daemon(workspace, work / dataset.name / f"local-{model.stem}", model_path=model)
        try:
            daemon.wait_idle()
            with daemon.client() as client:
                for question in langs:
                    queries, qrels = asked[question]
                    row = out.setdefault(f"{question}->{notes}", {})
                    for mode in modes:
                        runs = {}
                        for qid, text in queries.items():
                            found = client.search(text, mode=mode, max_results=RESULTS_PER_QUERY, min_score=-1.0)
                            runs[qid] = dedupe_docs([r.path for r in found.results], by_position)
                        scores = evaluate(runs, qrels)
                        row[mode] = {"recall@10": round(scores["recall@10"], 3), "mrr@10": round(scores["mrr@10"], 3)}
                    print(f"{question} -> {notes}: " + "  ".join(f"{m} {row[m]}" for m in modes), flush=True)
        finally:
            daemon.stop()
    return out


def _is_mixed(pair: str) -> bool:
    return "+" in pair


def table(results: dict[str, Any]) -> str:
    lines = ["| question → notes | keyword | vector | hybrid |", "|---|---|---|---|"]
    for pair, row in results.items():
        cells = [f"{row[m]['recall@10']} / {row[m]['mrr@10']}" if m in row else "–" for m in MODES]
        lines.append(f"| {pair.replace('->', ' → ')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


TARGETS = {
    "cross-lingual hybrid MRR@10, worst pair": (">=", 0.85),
    "cross-lingual hybrid R@10, worst pair": (">=", 0.95),
    "cross-lingual hybrid MRR@10 - better side, worst pair": (">=", -0.01),
}


def _across(found: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        row
        for pair, row in found.items()
        if not _is_mixed(pair) and pair.split("->")[0] != pair.split("->")[1] and "hybrid" in row
    ]


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part (absent ones None)."""
    across = _across(found)
    sided = [row for pair, row in found.items() if not _is_mixed(pair) and all(m in row for m in MODES)]
    gaps = [r["hybrid"]["mrr@10"] - max(r["keyword"]["mrr@10"], r["vector"]["mrr@10"]) for r in sided]
    return {
        "cross-lingual hybrid MRR@10, worst pair": min((r["hybrid"]["mrr@10"] for r in across), default=None),
        "cross-lingual hybrid R@10, worst pair": min((r["hybrid"]["recall@10"] for r in across), default=None),
        "cross-lingual hybrid MRR@10 - better side, worst pair": round(min(gaps), 3) if gaps else None,
    }


def markdown(found: dict[str, Any]) -> list[str]:
    lines = [
        "## Across languages (`python -m bench crosslingual`)",
        "",
        "XQuAD's questions in each language asked of each language's paragraphs, through the daemon, default",
        "settings; Recall@10 / MRR@10. Pairs of one language are the within-language figures.",
        "",
        table({pair: row for pair, row in found.items() if not _is_mixed(pair)}),
    ]
    mixes = {pair: row for pair, row in found.items() if _is_mixed(pair)}
    if mixes:
        lines += [
            "",
            "Notes in two languages at once (`xquad-en+zh`: paragraph i in English when i is even, in Chinese when",
            "odd; every answer exists once), each language's questions asked of them:",
            "",
            table(mixes),
        ]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.crosslingual", description=__doc__)
    parser.add_argument("--langs", default=LANGS)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--mixed", default=MIXED, help="notes in two languages at once, e.g. en+zh ('' for none)")
    parser.add_argument("--only-mixed", action="store_true", help="ask only the notes in two languages")
    parser.add_argument("--model", default="", help="a prepared local model (default: multilingual-e5-small)")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    mixes = [mix for mix in args.mixed.split(",") if mix]
    modes = tuple(args.modes.split(","))
    results = measure(args.langs.split(","), args.workdir, modes, mixes, not args.only_mixed, args.model)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
