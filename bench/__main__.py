"""One command for every benchmark: quality, speed and footprint, with a Markdown report and raw JSON.

python -m bench all                     # everything (make bench)
python -m bench quality | speed | hostile | pgstore | recall | openclaw | crosslingual | redaction | hooks | knowledge
python -m bench small                   # search in memories of 1 to 34 notes
python -m bench ui                      # the web page's load times at 100k chunks (--screenshots: bench.ui)
python -m bench models [--model-parts crosslingual,scifact,locomo,speed]   # e5-small beside EmbeddingGemma (hours;
                                        # not part of `all`)
python -m bench versus --base REV       # search, recall and write p50 beside an earlier commit's (not part of `all`)
python -m bench hostile --hostile-parts editor_race storm   # some of a part's parts
python -m bench all --quick             # SciFact only, 10k chunks only, no hostile requests
python -m bench all --compare bench/results/OLD.json
python -m bench report                  # docs/benchmarks.md (and its raw .json) from the newest results of each part
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import (
    conversations,
    crosslingual,
    hooks,
    hostile,
    knowledge,
    latency,
    models,
    openclaw,
    pgstore,
    quality,
    recall,
    redaction,
    small_memory,
    ui,
    versus,
)
from memoryd.config import DEFAULT_LOCAL_MODEL

RESULTS = Path(__file__).resolve().parent / "results"
TARGETS = {
    "scifact hybrid nDCG@10": (">=", 0.74),
    "keyword p50 ms @10k": ("<=", 5.0),
    "hybrid p50 ms @10k": ("<=", 25.0),
    "hybrid p50 ms @100k": ("<=", 45.0),
    "hybrid q/s @10k, 8 clients": (">=", 176.0),  # 1.5x the 117 q/s issue 13 started from
    "locomo notes hybrid turn R@5": (">=", 0.90),
    "locomo notes keyword turn R@5": (">=", 0.85),
    "locomo notes hybrid session R@5": (">=", 0.95),
    "locomo transcripts hybrid turn R@5": (">=", 0.90),
    "locomo transcripts hybrid session R@5": (">=", 0.95),
    "memctl search ms": ("<=", 50.0),
    "first index / bare model": (">=", 0.80),
    "no-op sync of 10k files s": ("<=", 2.0),
    "change-to-searchable s": ("<=", 2.5),
    "idle RSS MB @10k": ("<=", 300.0),
    "ping p99 ms during a 1M-character write": ("<=", 100.0),
    "ping p99 ms during 8 gets of a 50 MB note": ("<=", 100.0),
    "ping p99 ms during 10x64 unread gets": ("<=", 100.0),
    "SIGTERM s with unread replies": ("<=", 5.0),
    "write p50 ms @5k files": ("<=", 20.0),
    "vectors follow a write p99 ms": ("<=", 1000.0),
    "10k notes keyword-searchable s": ("<=", 30.0),
    "pg quality: largest gap to SQLite": ("<=", 0.01),
    "pg write on A found on B p95 s": ("<=", 2.0),
    "pg write on A found through a replica, embedding backlog, p95 s": ("<=", 2.0),
    "pg failover: standby indexes a new note s": ("<=", 10.0),
    "pg 2 daemons / 1 daemon q/s": (">=", 1.6),
    "pg 3 daemons / 1 daemon q/s": (">=", 2.2),
    "pg searches failed during a reindex": ("<=", 0),
    "pg / sqlite hybrid p50 @100000": ("<=", 1.5),
    "pg / sqlite hybrid p50 @1000000": ("<=", 2.0),
    "pg / sqlite hybrid q/s @100000, 8 clients": (">=", 0.7),
    **recall.TARGETS,
    **openclaw.TARGETS,
    **crosslingual.TARGETS,
    **redaction.TARGETS,
    **hostile.TARGETS,
    **hooks.TARGETS,
    **knowledge.TARGETS,
    **models.TARGETS,
    **ui.TARGETS,
    **versus.TARGETS,
}


def machine() -> dict[str, Any]:
    import apsw
    import llama_cpp
    import numpy

    import memoryd

    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "memoryd": memoryd.__version__,
        "commit": _commit(),
        "llama_cpp_python": llama_cpp.__version__,
        "sqlite": apsw.sqlite_lib_version(),
        "numpy": numpy.__version__,
    }


def _get(data: dict[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def headline(results: dict[str, Any]) -> dict[str, float | None]:
    speed = results.get("speed", {})
    qual = {name: row.get(DEFAULT_LOCAL_MODEL, {}) for name, row in results.get("quality", {}).items()}
    talk = results.get("conversations", {})
    small, large = speed.get("10000", {}), speed.get("100000", {})
    first = _get(small, "first_index", "ratio_to_bare") or _get(large, "first_index", "ratio_to_bare")
    return {
        "scifact hybrid nDCG@10": _get(qual, "scifact", "hybrid", "ndcg@10"),
        "scifact keyword nDCG@10": _get(qual, "scifact", "keyword", "ndcg@10"),
        "scifact vector nDCG@10": _get(qual, "scifact", "vector", "ndcg@10"),
        "scifact seed hybrid nDCG@10": _get(qual, "scifact", "seed_hybrid", "ndcg@10"),
        "scifact seed keyword nDCG@10": _get(qual, "scifact", "seed_keyword", "ndcg@10"),
        "xquad-vi hybrid Recall@10": _get(qual, "xquad-vi", "hybrid", "recall@10"),
        "xquad-vi seed hybrid Recall@10": _get(qual, "xquad-vi", "seed_hybrid", "recall@10"),
        "xquad-en hybrid Recall@10": _get(qual, "xquad-en", "hybrid", "recall@10"),
        "xquad-zh hybrid MRR@10": _get(qual, "xquad-zh", "hybrid", "mrr@10"),
        "xquad-th hybrid MRR@10": _get(qual, "xquad-th", "hybrid", "mrr@10"),
        "locomo notes hybrid turn R@5": _get(talk, "notes", "hybrid", "turn_r@5"),
        "locomo notes keyword turn R@5": _get(talk, "notes", "keyword", "turn_r@5"),
        "locomo notes plain FTS5 turn R@5": _get(talk, "notes", "plain_fts5_same_chunks", "turn_r@5"),
        "locomo notes hybrid session R@5": _get(talk, "notes", "hybrid", "session_r@5"),
        "locomo transcripts hybrid turn R@5": _get(talk, "transcripts", "hybrid", "turn_r@5"),
        "locomo transcripts hybrid session R@5": _get(talk, "transcripts", "hybrid", "session_r@5"),
        "keyword p50 ms @10k": _get(small, "search_keyword", "1_client", "p50_ms"),
        "hybrid p50 ms @10k": _get(small, "search_hybrid", "1_client", "p50_ms"),
        "hybrid p99 ms @10k": _get(small, "search_hybrid", "1_client", "p99_ms"),
        "keyword q/s @10k, 8 clients": _get(small, "search_keyword", "8_clients", "qps"),
        "hybrid q/s @10k, 8 clients": _get(small, "search_hybrid", "8_clients", "qps"),
        "keyword p50 ms @100k": _get(large, "search_keyword", "1_client", "p50_ms"),
        "hybrid p50 ms @100k": _get(large, "search_hybrid", "1_client", "p50_ms"),
        "hybrid p50 ms @100k, 8 clients": _get(large, "search_hybrid", "8_clients", "p50_ms"),
        "memctl search ms": _get(small, "memctl_search_ms"),
        "first index / bare model": first,
        "no-op sync of 10k files s": _get(large, "noop_sync", "seconds"),
        "change-to-searchable s": _get(small, "change_to_searchable", "indexed_by_watcher_s"),
        "idle RSS MB @10k": _get(small, "rss_idle_mb"),
        "idle RSS MB @100k": _get(large, "rss_idle_mb"),
        "index KB per 1k chunks": _get(large, "index_kb_per_1k_chunks") or _get(small, "index_kb_per_1k_chunks"),
        "ping p99 ms during a 1M-character write": _get(
            results, "hostile", "freeze", "write_1M_word", "ping", "p99_ms"
        ),
        "ping p99 ms during 8 gets of a 50 MB note": _get(
            results, "hostile", "freeze", "get_50MB_x8", "ping", "p99_ms"
        ),
        "ping p99 ms during 10x64 unread gets": _get(
            results, "hostile", "freeze", "unread_gets_10x64", "ping", "p99_ms"
        ),
        "SIGTERM s with unread replies": _get(results, "hostile", "freeze", "sigterm_with_hostile_connections_s"),
        "write p50 ms @5k files": _get(results, "hostile", "writes", "write", "p50_ms"),
        "vectors follow a write p99 ms": _get(results, "hostile", "writes", "vectors_follow", "p99_ms"),
        "10k notes keyword-searchable s": _get(results, "hostile", "first_index", "every_note_keyword_searchable_s"),
        **pgstore.headline(results.get("pgstore", {})),
        **recall.headline(results.get("recall", {})),
        **openclaw.headline(results.get("openclaw", {})),
        **crosslingual.headline(results.get("crosslingual", {})),
        **redaction.headline(results.get("redaction", {})),
        **hostile.headline(results.get("hostile", {})),
        **hooks.headline(results.get("hooks", {})),
        **knowledge.headline(results.get("knowledge", {})),
        **small_memory.headline(results.get("small", {})),
        **models.headline(results.get("models", {})),
        **ui.headline(results.get("ui", {})),
        **versus.headline(results.get("versus", {})),
    }


def _verdict(name: str, value: float | None) -> str:
    if name not in TARGETS or value is None:
        return ""
    op, bound = TARGETS[name]
    ok = value >= bound if op == ">=" else value <= bound
    return f"{'meets' if ok else 'MISSES'} {op} {bound}"


def markdown(results: dict[str, Any], old: dict[str, Any] | None, measured_only: bool = False) -> str:
    """The report; `measured_only` leaves out the headline figures no run here measured."""
    head = {k: v for k, v in headline(results).items() if v is not None or not measured_only}
    before = headline(old) if old else {}
    lines = ["# memoryd benchmark", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in results["machine"].items()]
    lines += [
        "",
        "| figure | value | target |" + (" previous | ratio |" if old else ""),
        "|---|---|---|" + ("---|---|" if old else ""),
    ]
    for name, value in head.items():
        row = f"| {name} | {value if value is not None else '-'} | {_verdict(name, value)} |"
        if old:
            prev = before.get(name)
            ratio = f"{value / prev:.2f}" if value is not None and prev else "-"
            row += f" {prev if prev is not None else '-'} | {ratio} |"
        lines.append(row)
    quality_rows = results.get("quality", {})
    if quality_rows:
        lines += [
            "",
            "## Quality (through the `search` RPC)",
            "",
            "| dataset | model | mode | nDCG@10 | Recall@10 | MRR@10 |",
            "|---|---|---|---|---|---|",
        ]
        for name, by_model in quality_rows.items():
            for model, row in by_model.items():
                for mode in (
                    "keyword",
                    "vector",
                    "hybrid",
                    "hybrid+mmr",
                    "hybrid+decay",
                    "seed_keyword",
                    "seed_hybrid",
                ):
                    if mode in row:
                        r = row[mode]
                        lines.append(
                            f"| {name} | {model} | {mode} | {r['ndcg@10']} | {r['recall@10']} | {r['mrr@10']} |"
                        )
    for layout, row in results.get("conversations", {}).items():
        lines += [
            "",
            f"## LoCoMo as {layout}",
            "",
            "| mode | session R@5 | turn R@5 | turn MRR@5 |",
            "|---|---|---|---|",
        ]
        for mode, r in row.items():
            if isinstance(r, dict):
                lines.append(f"| {mode} | {r['session_r@5']} | {r['turn_r@5']} | {r['turn_mrr@5']} |")
    for scale, row in results.get("speed", {}).items():
        lines += ["", f"## Speed and footprint at {scale} chunks", "", "```json", json.dumps(row, indent=2), "```"]
    if results.get("hostile"):
        curve = _get(results, "hostile", "first_index", "curve") or []
        lines += [
            "",
            "## One request against everyone else (`python -m bench hostile`)",
            "",
            "```json",
            json.dumps({k: v for k, v in results["hostile"].items() if k != "first_index"}, indent=2),
            "```",
            "",
            "First index of 10,000 notes: notes keyword-searchable and chunks embedded over time",
            "",
            "| s | files | chunks | embedded |",
            "|---|---|---|---|",
            *(f"| {p['t']} | {p['files']} | {p['chunks']} | {p['embedded']} |" for p in curve),
        ]
    if results.get("pgstore"):
        lines += ["", *pgstore.markdown(results["pgstore"])]
    if results.get("recall"):
        lines += ["", *recall.markdown(results["recall"])]
    if results.get("openclaw"):
        lines += ["", *openclaw.markdown(results["openclaw"])]
    if results.get("crosslingual"):
        lines += ["", *crosslingual.markdown(results["crosslingual"])]
    if results.get("redaction"):
        lines += ["", *redaction.markdown(results["redaction"])]
    if results.get("knowledge"):
        lines += ["", *knowledge.markdown(results["knowledge"])]
    if results.get("small"):
        lines += ["", *small_memory.markdown(results["small"])]
    if results.get("models"):
        lines += ["", *models.markdown(results["models"])]
    if results.get("versus"):
        lines += ["", *versus.markdown(results["versus"])]
    if results.get("ui"):
        lines += ["", *ui.markdown(results["ui"])]
    if results.get("hooks"):
        lines += [
            "",
            "## Agent hooks against a hostile daemon (`python -m bench hooks`)",
            "",
            "Whole-process p50 / p99 in seconds, beside each platform's time limit.",
            "",
            hooks.table(results["hooks"]),
        ]
    return "\n".join(lines) + "\n"


def _commit() -> str:
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        dirty = subprocess.run(  # the report itself does not count
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":!docs/benchmarks.md",
                ":!docs/benchmarks.json",
            ],
            cwd=root,
            capture_output=True,
        )
    except OSError:
        return "unknown"
    return head.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def _newest(folder: Path, pattern: str) -> dict[str, Any] | None:
    found = sorted(folder.glob(pattern))
    return json.loads(found[-1].read_text()) if found else None


def _newest_parts(folder: Path, committed: Path | None = None) -> dict[str, Any]:
    """The newest result of each part (quality, conversations, speed, hostile, pgstore), from whichever run made
    it: the runs behind the committed report first (`committed`, docs/benchmarks.json), then this machine's."""
    merged: dict[str, Any] = {}
    if committed is not None and committed.exists():
        kept = json.loads(committed.read_text())
        merged = {part: value for part, value in kept.items() if part != "machines"}
        merged["machines"] = dict(kept.get("machines", {}))
    runs = [
        sorted(folder.glob(f"{kind}-*.json"))
        for kind in (
            "bench",
            "hostile",
            "pgstore",
            "recall",
            "openclaw",
            "crosslingual",
            "redaction",
            "hooks",
            "knowledge",
            "small",
            "models",
            "ui",
            "versus",
        )
    ]
    for path in [path for kind in runs for path in kind]:
        run = json.loads(path.read_text())
        for part, value in run.items():
            if part == "machine":
                continue
            if part == "pgstore":  # its parts run alone too (--pg-parts scale): the newest of each, each named
                _merge_pgstore(merged, value, run.get("machine", {}))
                continue
            if part == "models":  # and these (--model-parts crosslingual): the newest of each part, both models
                merged["models"] = {**merged.get("models", {}), **value}
                merged.setdefault("machines", {}).update({f"models {sub}": run.get("machine", {}) for sub in value})
                continue
            if part == "hostile":  # so do these (--hostile-parts storm)
                merged["hostile"] = {**merged.get("hostile", {}), **value}
                merged.setdefault("machines", {}).update({f"hostile {sub}": run.get("machine", {}) for sub in value})
                continue
            merged[part] = value
            merged.setdefault("machines", {})[part] = run.get("machine", {})
    return merged


def _merge_pgstore(merged: dict[str, Any], found: dict[str, Any], machine: dict[str, Any]) -> None:
    """A pgstore run's parts over the ones kept, each part from its newest run; the scale part per index size
    (a run at a million chunks leaves the 100k figures of an earlier run standing), the quality part per set (the
    scale-out part's run measures SciFact alone)."""
    kept = merged.setdefault("pgstore", {})
    machines = merged.setdefault("machines", {})
    for sub, value in found.items():
        if sub == "scale":
            kept["scale"] = {**kept.get("scale", {}), **value}
            machines.pop("pgstore scale", None)
            machines.update({f"pgstore scale {size}": machine for size in value})
        elif sub == "quality":
            kept["quality"] = {**kept.get("quality", {}), **value}
            machines[f"pgstore {sub}"] = machine
        else:
            kept[sub] = value
            machines[f"pgstore {sub}"] = machine


def report(folder: Path, doc: Path) -> Path:
    """docs/benchmarks.md from the newest results of each part, with the date, commit and machine of each."""
    raw = doc.with_suffix(".json")
    results = _newest_parts(folder, raw)
    if not any(part != "machines" for part in results):
        raise SystemExit(f"no results in {folder}: run python -m bench all (or a part) first")
    raw.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    machines = results.pop("machines", {})
    results["machine"] = next(iter(machines.values()))
    body = markdown(results, None, measured_only=True).split("\n", 1)[1]
    machine_info = results["machine"]
    runs = ", ".join(
        f"{part} at {m.get('commit', 'an unrecorded commit')} ({m.get('date', '?')})" for part, m in machines.items()
    )
    head = [
        "# memoryd benchmarks",
        "",
        f"Written by `python -m bench report` on {dt.date.today().isoformat()} at commit {_commit()}, from the newest",
        f"run of each part: {runs}; on {machine_info.get('platform', '?')} with {machine_info.get('cpus', '?')} cores.",
        "Regenerate: `make bench && python -m bench report`. Figures are one run each, on a machine that may be noisy:",
        "read ratios and medians, not the last digit.",
    ]
    doc.write_text("\n".join(head) + "\n" + body)
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "part",
        choices=[
            "all",
            "quality",
            "speed",
            "hostile",
            "pgstore",
            "recall",
            "openclaw",
            "crosslingual",
            "redaction",
            "hooks",
            "knowledge",
            "small",
            "models",
            "ui",
            "versus",
            "report",
        ],
        nargs="?",
        default="all",
    )
    parser.add_argument("--doc", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md")
    parser.add_argument("--quick", action="store_true", help="SciFact only and 10k chunks only; knowledge: 40 facts")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--compare", type=Path, help="an earlier JSON report to compare with")
    parser.add_argument("--pg-parts", default=pgstore.PARTS, help="which parts of the pgstore bench run")
    parser.add_argument("--pg-root", type=Path, help="pgstore: keep its PostgreSQL cluster here, for the next run")
    parser.add_argument("--pg-scales", default="100000", help="pgstore: index sizes of its scale part")
    parser.add_argument("--hostile-parts", nargs="+", choices=hostile.PARTS, help="hostile: which of its parts run")
    parser.add_argument("--model-parts", default=",".join(models.PARTS), help="models: which of its parts run")
    parser.add_argument("--base", help="versus: the earlier commit to measure this checkout beside")
    args = parser.parse_args(argv)
    if args.part == "report":
        print(f"wrote {report(args.out, args.doc)}")
        return 0
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.part == "hostile" or (args.part == "all" and not args.quick):
        chosen = ["--parts", *args.hostile_parts] if args.hostile_parts else []
        found = {"machine": machine(), "hostile": hostile.main(chosen)}
        (args.out / f"hostile-{stamp}.json").write_text(json.dumps(found, indent=2))
        if args.part == "hostile":
            return 0
    for name, part in (
        ("recall", recall),
        ("openclaw", openclaw),
        ("crosslingual", crosslingual),
        ("redaction", redaction),
        ("hooks", hooks),
        ("small", small_memory),
        ("ui", ui),
    ):
        if args.part == name or (args.part == "all" and not args.quick):
            found = {"machine": machine(), name: part.main([])}
            (args.out / f"{name}-{stamp}.json").write_text(json.dumps(found, indent=2, ensure_ascii=False))
            if args.part == name:
                return 0
    if args.part == "knowledge" or (args.part == "all" and not args.quick):
        found = {"machine": machine(), "knowledge": knowledge.main(["--quick"] if args.quick else [])}
        (args.out / f"knowledge-{stamp}.json").write_text(json.dumps(found, indent=2, ensure_ascii=False))
        if args.part == "knowledge":
            return 0
    if args.part == "versus":  # beside a commit the caller names: run by name only, not by `all`
        if not args.base:
            parser.error("versus needs --base REV (the commit to measure this checkout beside)")
        found = {"machine": machine(), "versus": versus.main(["--base", args.base])}
        (args.out / f"versus-{stamp}.json").write_text(json.dumps(found, indent=2))
        return 0
    if args.part == "models":  # hours with EmbeddingGemma: run by name only, not by `all`
        found = {"machine": machine(), "models": models.main(["--parts", args.model_parts])}
        (args.out / f"models-{stamp}.json").write_text(json.dumps(found, indent=2, ensure_ascii=False))
        return 0
    if args.part == "pgstore" or (args.part == "all" and not args.quick):
        kept = ["--pg-root", str(args.pg_root)] if args.pg_root else []
        found = {
            "machine": machine(),
            "pgstore": pgstore.main(["--parts", args.pg_parts, "--scales", args.pg_scales, *kept]),
        }
        (args.out / f"pgstore-{stamp}.json").write_text(json.dumps(found, indent=2))
        if args.part == "pgstore":
            return 0

    results: dict[str, Any] = {"machine": machine()}
    if args.part in ("all", "quality"):
        names = ["scifact"] if args.quick else quality.DATASETS.split(",")
        model_names = [DEFAULT_LOCAL_MODEL] if args.quick else quality.MODELS.split(",")
        results["quality"] = {name: quality.measure(name, quality.CACHE, model_names) for name in names}
        if not args.quick:
            results["conversations"] = conversations.main([])
    if args.part in ("all", "speed"):
        scales = [10_000] if args.quick else [10_000, 100_000]
        results["speed"] = {str(n): latency.measure(n, latency.CACHE) for n in scales}
    old = json.loads(args.compare.read_text()) if args.compare else None
    (args.out / f"bench-{stamp}.json").write_text(json.dumps(results, indent=2))
    summary = markdown(results, old)
    (args.out / f"bench-{stamp}.md").write_text(summary)
    print()
    for name, value in headline(results).items():
        if value is not None:
            print(f"{name:34s} {value!s:>10}  {_verdict(name, value)}")
    print(f"\nreport: {args.out / f'bench-{stamp}.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
