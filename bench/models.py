"""The local models side by side, through the daemon: the default (multilingual-e5-small) and the stronger, opt-in
EmbeddingGemma-300M, on every shared set, each part run for each model in one go.

- crosslingual: XQuAD's questions in vi, en, zh, th asked of each language's paragraphs (every ordered pair, the
  within-language pairs among them), and of notes in two languages at once (`bench.crosslingual`), hybrid only (the
  keyword and vector sides alone: `python -m bench crosslingual --model`);
- scifact: the full corpus, nDCG@10 (`bench.quality`);
- locomo: the five conversations as notes and as transcripts, turn and session R@5 (`bench.conversations`);
- speed: first index of the synthetic 10k-chunk workspace (chunks per second, RSS), then search latency
  (`bench.latency`).

Indexes are kept under the bench cache, one per model, so a part interrupted midway (EmbeddingGemma embeds at about
a fifth of the default's speed) goes on where it stopped when run again.

python -m bench.models [--models multilingual-e5-small,embeddinggemma-300m] [--parts crosslingual,scifact,locomo,speed]
python -m bench models                  # the same, kept for `python -m bench report`
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench.beir import CACHE
from bench.knowledge import model_file

MODELS = ("multilingual-e5-small", "embeddinggemma-300m")
PARTS = ("crosslingual", "scifact", "locomo", "speed")
STRONG = "embeddinggemma-300m"


def _crosslingual(model: str, work: Path) -> dict[str, Any]:
    from bench import crosslingual

    mixes = crosslingual.MIXED.split(",")
    return crosslingual.measure(crosslingual.LANGS.split(","), work, ("hybrid",), mixes, True, model)


def _scifact(model: str, work: Path) -> dict[str, Any]:
    from bench.datasets import load_scifact
    from bench.quality import through_rpc

    found, _, _ = through_rpc(load_scifact(), work, model, ("keyword", "vector", "hybrid"))
    return found


def _locomo(model: str, work: Path) -> dict[str, Any]:
    from bench.conversations import measure

    path = model_file(model)
    return {layout: measure(layout, ["keyword", "hybrid"], work, path) for layout in ("notes", "transcripts")}


def _speed(model: str, work: Path) -> dict[str, Any]:
    from bench.latency import measure

    return measure(10_000, work / "models-speed" / model, reindex=False, model_path=model_file(model))


RUNNERS = {"crosslingual": _crosslingual, "scifact": _scifact, "locomo": _locomo, "speed": _speed}


def run(models: tuple[str, ...] = MODELS, parts: tuple[str, ...] = PARTS, work: Path = CACHE) -> dict[str, Any]:
    from memoryd.embeddings.models.prepare import verify

    missing = [m for m in models if not verify(model_file(m))]
    if missing:
        raise SystemExit(f"bench models: prepare {', '.join(missing)} first (memoryd model prepare --model NAME)")
    out: dict[str, Any] = {}
    for part in parts:
        for model in models:
            started = time.perf_counter()
            print(f"[{part}] {model}", flush=True)
            out.setdefault(part, {})[model] = RUNNERS[part](model, work)
            out[part][model]["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _pairs(found: dict[str, Any], model: str) -> dict[str, dict[str, Any]]:
    return {pair: row for pair, row in found.get("crosslingual", {}).get(model, {}).items() if isinstance(row, dict)}


def _across(found: dict[str, Any], model: str) -> list[dict[str, Any]]:
    return [
        row["hybrid"]
        for pair, row in _pairs(found, model).items()
        if "+" not in pair and pair.split("->")[0] != pair.split("->")[1] and "hybrid" in row
    ]


def _within_gap(found: dict[str, Any]) -> float | None:
    """The strong model's within-language hybrid MRR@10 minus the default's, at the pair where it is lowest."""
    strong, default = _pairs(found, STRONG), _pairs(found, MODELS[0])
    gaps = [
        strong[p]["hybrid"]["mrr@10"] - default[p]["hybrid"]["mrr@10"]
        for p in strong
        if "+" not in p and p.split("->")[0] == p.split("->")[1] and p in default
    ]
    return round(min(gaps), 3) if gaps else None


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


TARGETS = {
    "EmbeddingGemma cross-lingual hybrid MRR@10, worst pair": (">=", 0.90),
    "EmbeddingGemma cross-lingual hybrid R@10, worst pair": (">=", 0.98),
    "EmbeddingGemma within-language hybrid MRR@10 - e5-small's, worst": (">=", 0.0),
    "EmbeddingGemma scifact hybrid nDCG@10": (">=", 0.76),
    "EmbeddingGemma locomo notes hybrid session R@5": (">=", 0.95),
    "EmbeddingGemma hybrid p50 ms @10k": ("<=", 40.0),
}


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    across = _across(found, STRONG)
    return {
        "EmbeddingGemma cross-lingual hybrid MRR@10, worst pair": min((r["mrr@10"] for r in across), default=None),
        "EmbeddingGemma cross-lingual hybrid R@10, worst pair": min((r["recall@10"] for r in across), default=None),
        "EmbeddingGemma within-language hybrid MRR@10 - e5-small's, worst": _within_gap(found),
        "EmbeddingGemma scifact hybrid nDCG@10": _get(found, "scifact", STRONG, "hybrid", "ndcg@10"),
        "EmbeddingGemma locomo notes hybrid session R@5": _get(
            found, "locomo", STRONG, "notes", "hybrid", "session_r@5"
        ),
        "EmbeddingGemma hybrid p50 ms @10k": _get(found, "speed", STRONG, "search_hybrid", "1_client", "p50_ms"),
    }


def _cell(value: Any) -> str:
    return "–" if value is None else str(value)


def markdown(found: dict[str, Any]) -> list[str]:
    models = [m for m in MODELS if any(m in found.get(part, {}) for part in PARTS)]
    lines = [
        "## The local models side by side (`python -m bench models`)",
        "",
        "multilingual-e5-small (the default) and EmbeddingGemma-300M (opt-in), the same benches through the daemon,",
        "default settings otherwise. Cross-lingual cells: hybrid Recall@10 / MRR@10.",
        "",
        "| figure | " + " | ".join(models) + " |",
        "|---|" + "---|" * len(models),
    ]
    pairs = sorted({p for m in models for p in _pairs(found, m)}, key=lambda p: ("+" in p, p))
    for pair in pairs:
        cells = []
        for model in models:
            row = _pairs(found, model).get(pair, {}).get("hybrid")
            cells.append(f"{row['recall@10']} / {row['mrr@10']}" if row else "–")
        lines.append(f"| {pair.replace('->', ' → ')} | " + " | ".join(cells) + " |")
    rows = {
        "SciFact hybrid nDCG@10": ("scifact", "hybrid", "ndcg@10"),
        "SciFact vector nDCG@10": ("scifact", "vector", "ndcg@10"),
        "LoCoMo notes hybrid session R@5": ("locomo", "notes", "hybrid", "session_r@5"),
        "LoCoMo notes hybrid turn R@5": ("locomo", "notes", "hybrid", "turn_r@5"),
        "LoCoMo transcripts hybrid session R@5": ("locomo", "transcripts", "hybrid", "session_r@5"),
        "hybrid p50 ms @10k": ("speed", "search_hybrid", "1_client", "p50_ms"),
        "first index chunks/s @10k": ("speed", "first_index", "chunks_per_s"),
        "idle RSS MB @10k": ("speed", "rss_idle_mb"),
    }
    for label, (part, *path) in rows.items():
        cells = [_cell(_get(found, part, model, *path)) for model in models]
        if any(cell != "–" for cell in cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.models", description=__doc__)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    found = run(tuple(args.models.split(",")), tuple(args.parts.split(",")), args.workdir)
    print("\n".join(markdown(found)))
    if args.json:
        args.json.write_text(json.dumps(found, indent=2))
    return found


if __name__ == "__main__":
    main()
