"""Automatic recall end to end, through a real daemon and `memctl recall`.

- relevance: every LoCoMo question (not the adversarial ones) as a prompt, each conversation its own agent (dated
  notes): does the injected block (budget 1,500 tokens) hold a memory of a session with an evidence turn?
- restraint: every prompt of bench/data/no_memory_prompts.txt and of the held-out no_memory_heldout.txt asked of
  every agent: how often is nothing injected?
- latency: `memctl recall` as a whole process on a 10k-chunk index (bench.scale's, model-free vectors; the
  prompts embedded by the real local model, each a new one), median, beside a bare `python -c pass`.

python -m bench.recall [--parts relevance,latency] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.beir import CACHE
from bench.conversations import load_locomo, write_notes
from bench.harness import BenchAgent, median, percentile, start_daemon

BUDGET = 1500  # the ceiling; the others show what a smaller default gives up
BUDGETS = (500, 1000, BUDGET)
DATA = Path(__file__).parent / "data"
PROMPT_SETS = ("no_memory_prompts", "no_memory_heldout")
LATENCY_CHUNKS = 10_000
TEMPLATES = ("what did we decide about the {}?", "how does the {} work again?", "why did we change the {}?")
TOPICS = (
    "heron dataset",
    "sensor calibration",
    "archive layout",
    "billing retries",
    "login flow",
    "cache eviction",
    "deploy window",
    "schema migration",
    "rate limiter",
    "nightly export",
    "search ranking",
)
# every run a prompt of its own: a repeated one would be answered from the daemon's query-vector cache
LATENCY_PROMPTS = tuple(t.format(topic) for topic in TOPICS for t in TEMPLATES)


def prompts(name: str) -> list[str]:
    lines = (DATA / f"{name}.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def relevance(work: Path) -> dict[str, Any]:
    root = work / "locomo" / "recall-bench"
    conversations = load_locomo()
    agents = []
    for conv in conversations:
        workspace = root / "workspaces" / conv.id
        write_notes(conv, workspace)
        agents.append(BenchAgent(conv.id, workspace))
    daemon = start_daemon(agents[0].workspace, root / "data", agents=agents)
    out: dict[str, Any] = {"budget": BUDGET}
    try:
        daemon.wait_idle()
        with daemon.client() as client:
            for budget in BUDGETS:
                held, tokens, skipped, total = 0, [], 0, 0
                for conv in conversations:
                    for question, evidence in conv.questions:
                        sessions = {conv.turn_at[e][0] for e in evidence if e in conv.turn_at}
                        answer = client.recall(question, agent=conv.id, budget=budget)
                        total += 1
                        if answer["skipped"]:
                            skipped += 1
                            continue
                        tokens.append(answer["tokens"])
                        paths = {m["citation"].split("#", 1)[0] for m in answer["memories"]}
                        held += bool(paths & sessions)
                row = {
                    "questions": total,
                    "evidence_session_in_block": round(held / total, 4),
                    "nothing_injected": round(skipped / total, 4),
                    "tokens_p50": median(tokens),
                    "tokens_p95": percentile(tokens, 95),
                    "tokens_max": max(tokens, default=0),
                }
                out.setdefault("locomo_by_budget", {})[str(budget)] = row
                print(f"  locomo, budget {budget}: {row}", flush=True)
            out["locomo"] = out["locomo_by_budget"][str(BUDGET)]
            print(f"  locomo: {out['locomo']}", flush=True)
            for name in PROMPT_SETS:
                quiet, asked, leaks = 0, 0, []
                for prompt in prompts(name):
                    for conv in conversations:
                        answer = client.recall(prompt, agent=conv.id, budget=BUDGET)
                        asked += 1
                        if answer["skipped"]:
                            quiet += 1
                        elif prompt not in leaks:
                            leaks.append(prompt)
                out[name] = {
                    "prompts": len(prompts(name)),
                    "asked": asked,
                    "nothing_injected": round(quiet / asked, 4),
                    "injected_for": leaks,
                }
                print(f"  {name}: nothing injected for {quiet}/{asked}; injected for {leaks}", flush=True)
    finally:
        daemon.stop()
    return out


def _wall(commands: list[list[str]], env: dict[str, str]) -> float:
    times = []
    for command in commands:
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - started)
    return round(median(times) * 1000, 1)


def latency(work: Path) -> dict[str, Any]:
    from bench.scale import filled

    out: dict[str, Any] = {"chunks": LATENCY_CHUNKS}
    _, workspace, data = filled(LATENCY_CHUNKS, work, out)
    daemon = start_daemon(workspace, data)
    try:
        daemon.wait_idle()
        env = dict(os.environ, MEMORYD_SOCKET=str(daemon.socket))
        memctl = str(Path(sys.executable).with_name("memctl"))
        half = len(LATENCY_PROMPTS) // 2
        with daemon.client() as client:
            client.recall("what did we note about the warm-up?")  # embeds the chatter phrases once
            out["daemon_recall_ms"] = median([client.recall(p)["took_ms"] for p in LATENCY_PROMPTS[half:]])
        out["python_pass_ms"] = _wall([[sys.executable, "-c", "pass"]] * half, env)
        out["memctl_recall_ms"] = _wall([[memctl, "recall", p] for p in LATENCY_PROMPTS[:half]], env)
        out["runs"] = half
        print(f"  latency: {out}", flush=True)
    finally:
        daemon.stop()
    return out


PARTS = {"relevance": relevance, "latency": latency}
TARGETS = {
    "recall: block holds an evidence session (LoCoMo)": (">=", 0.90),
    "recall: nothing injected, no-memory prompts": (">=", 0.95),
    "recall: nothing injected, held-out prompts": (">=", 0.95),
    "memctl recall ms @10k": ("<=", 60.0),
}


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part (absent ones None)."""
    relevance, speed = found.get("relevance", {}), found.get("latency", {})
    names = list(TARGETS)
    return {
        names[0]: relevance.get("locomo", {}).get("evidence_session_in_block"),
        names[1]: relevance.get("no_memory_prompts", {}).get("nothing_injected"),
        names[2]: relevance.get("no_memory_heldout", {}).get("nothing_injected"),
        names[3]: speed.get("memctl_recall_ms"),
    }


def markdown(found: dict[str, Any]) -> list[str]:
    """bench report's section."""
    relevance, speed = found.get("relevance", {}), found.get("latency", {})
    lines = ["## Automatic recall (`python -m bench recall`)", ""]
    locomo = relevance.get("locomo")
    if locomo:
        lines += [
            f"LoCoMo, {locomo['questions']} questions as prompts (budget {relevance['budget']} tokens): the block "
            f"holds a memory of an evidence session for {locomo['evidence_session_in_block']}; nothing injected for "
            f"{locomo['nothing_injected']}; block tokens p50 {locomo['tokens_p50']}, p95 {locomo['tokens_p95']}, "
            f"max {locomo['tokens_max']}.",
            "",
        ]
        by_budget = relevance.get("locomo_by_budget", {})
        if by_budget:
            shares = ", ".join(f"{b} tokens {r['evidence_session_in_block']}" for b, r in by_budget.items())
            lines += [f"By budget, the share whose block holds an evidence session: {shares}.", ""]
        lines += [
            "| no-memory prompts | prompts | asked (x agents) | nothing injected | injected for |",
            "|---|---|---|---|---|",
        ]
        for name in PROMPT_SETS:
            row = relevance.get(name, {})
            if row:
                leaks = "; ".join(row["injected_for"]) or "–"
                lines.append(f"| {name} | {row['prompts']} | {row['asked']} | {row['nothing_injected']} | {leaks} |")
    if speed:
        lines += [
            "",
            f"`memctl recall` as a whole process on {speed['chunks']:,} chunks: p50 {speed['memctl_recall_ms']} ms "
            f"(bare `python -c pass`: {speed['python_pass_ms']} ms; the daemon's part: {speed['daemon_recall_ms']} "
            f"ms), {speed['runs']} new prompts each.",
        ]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = {part: PARTS[part](args.workdir) for part in args.parts.split(",")}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return results


if __name__ == "__main__":
    main()
