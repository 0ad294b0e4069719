"""OpenClaw with memoryd's memory plugin beside OpenClaw's built-in memory, on the same XQuAD paragraphs, through
the same command: `openclaw memory search --json`, each call a whole process, as a user or a script runs it.

For each language, memoryd answers every one of QUESTIONS questions (Recall@10, MRR@10 by paragraph); the built-in
memory (keyword search: no embedding provider is configured here, as on a fresh install) answers a sample of them,
interleaved with memoryd's answers to the same questions, so both whole-process times come from the same minutes.
Node 24 and openclaw come from `make node-deps`.

python -m bench.openclaw [--langs zh,th] [--questions 199] [--builtin-sample 30] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.beir import CACHE
from bench.datasets import dataset_workspace, load_xquad
from bench.harness import median, start_daemon
from bench.metrics import dedupe_docs

ROOT = Path(__file__).resolve().parents[1]
NODE_PATH = os.pathsep.join(
    [str(ROOT / "tools" / "node" / "node_modules" / ".bin"), str(ROOT / "node_modules" / ".bin")]
)
PLUGIN = ROOT / "memoryd" / "client" / "assets" / "openclaw"
K = 10


def openclaw(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    full = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{NODE_PATH}{os.pathsep}{os.environ.get('PATH', '')}",
        **(env or {}),
    }
    started = time.perf_counter()
    done = subprocess.run(["openclaw", *args], capture_output=True, text=True, env=full, timeout=600)
    return done, time.perf_counter() - started


def ranked(done: subprocess.CompletedProcess[str], mapping: dict[str, str]) -> list[str]:
    try:
        results = json.loads(done.stdout)["results"]
    except (ValueError, KeyError, TypeError):
        return []
    return dedupe_docs([r["path"] for r in results], mapping)[:K]


def score(runs: list[tuple[list[str], set[str]]]) -> dict[str, float]:
    recall = sum(any(d in truth for d in docs) for docs, truth in runs) / max(len(runs), 1)
    mrr = sum(next((1 / i for i, d in enumerate(docs, 1) if d in truth), 0.0) for docs, truth in runs) / max(
        len(runs), 1
    )
    return {"recall@10": round(recall, 4), "mrr@10": round(mrr, 4), "questions": len(runs)}


def measure(lang: str, questions: int, sample: int, work: Path) -> dict[str, Any]:
    dataset = load_xquad(lang)
    root = work / f"openclaw-{lang}"
    workspace, mapping = dataset_workspace(dataset, root)
    qids = random.Random(7).sample(sorted(dataset.queries), min(questions, len(dataset.queries)))
    truth = {q: set(dataset.qrels.get(q, {})) for q in qids}
    builtin_home, plugin_home = root / "home-builtin", root / "home-memoryd"
    for home in (builtin_home, plugin_home):
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
    daemon = start_daemon(workspace, root / "data")
    env = {"MEMORYD_SOCKET": str(daemon.socket)}
    out: dict[str, Any] = {"paragraphs": len(dataset.docs)}
    try:
        daemon.wait_idle()
        openclaw(builtin_home, "config", "set", "agents.defaults.workspace", str(workspace))
        _, seconds = openclaw(builtin_home, "memory", "index")
        out["builtin_index_s"] = round(seconds, 1)
        for step in (
            ("plugins", "install", "--force", "--accept-capabilities", "--link", str(PLUGIN)),
            ("plugins", "enable", "memoryd"),
            ("config", "set", "plugins.slots.memory", "memoryd"),
        ):
            done, _ = openclaw(plugin_home, *step)
            if done.returncode != 0:
                raise SystemExit(f"openclaw {' '.join(step[:2])} failed: {done.stderr[-400:]}")
        ours, theirs, ours_s, theirs_s = [], [], [], []
        for i, qid in enumerate(qids):
            query = dataset.queries[qid]
            done, seconds = openclaw(plugin_home, "memory", "search", "--json", "--max-results", str(K), query, env=env)
            ours.append((ranked(done, mapping), truth[qid]))
            ours_s.append(seconds)
            if i < sample:
                done, seconds = openclaw(builtin_home, "memory", "search", "--json", "--max-results", str(K), query)
                theirs.append((ranked(done, mapping), truth[qid]))
                theirs_s.append(seconds)
        out["memoryd"] = {**score(ours), "p50_s": round(median(ours_s), 2)}
        out["memoryd_on_builtin_sample"] = {**score(ours[:sample]), "p50_s": round(median(ours_s[:sample]), 2)}
        out["builtin"] = {**score(theirs), "p50_s": round(median(theirs_s), 2)}
        out["speed_ratio_builtin_over_memoryd"] = round(median(theirs_s) / median(ours_s[:sample]), 2)
        print(f"  [{lang}] {json.dumps(out)}", flush=True)
    finally:
        daemon.stop()
    return out


TARGETS = {
    "openclaw+memoryd XQuAD zh R@10": (">=", 0.98),
    "openclaw+memoryd XQuAD th R@10": (">=", 0.98),
    "openclaw memory search: built-in s / memoryd s": (">=", 1.0),
}


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part (absent ones None)."""
    ratios = [
        row["speed_ratio_builtin_over_memoryd"] for row in found.values() if "speed_ratio_builtin_over_memoryd" in row
    ]
    return {
        "openclaw+memoryd XQuAD zh R@10": found.get("zh", {}).get("memoryd", {}).get("recall@10"),
        "openclaw+memoryd XQuAD th R@10": found.get("th", {}).get("memoryd", {}).get("recall@10"),
        "openclaw memory search: built-in s / memoryd s": min(ratios) if ratios else None,
    }


def markdown(found: dict[str, Any]) -> list[str]:
    lines = [
        "## OpenClaw with memoryd's plugin beside its built-in memory (`python -m bench.openclaw`)",
        "",
        "| lang | memory | questions | R@10 | MRR@10 | whole `openclaw memory search` p50 s |",
        "|---|---|---|---|---|---|",
    ]
    for lang, row in found.items():
        for name, label in (
            ("memoryd", "memoryd plugin"),
            ("memoryd_on_builtin_sample", "memoryd plugin, same sample"),
            ("builtin", "built-in (keyword)"),
        ):
            r = row.get(name)
            if r:
                lines.append(
                    f"| {lang} | {label} | {r['questions']} | {r['recall@10']} | {r['mrr@10']} | {r['p50_s']} |"
                )
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--langs", default="zh,th")
    parser.add_argument("--questions", type=int, default=199)
    parser.add_argument("--builtin-sample", type=int, default=30)
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = {lang: measure(lang, args.questions, args.builtin_sample, args.workdir) for lang in args.langs.split(",")}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return results


if __name__ == "__main__":
    main()
