"""Automatic recall end to end, through a real daemon and `memctl recall`.

- relevance: every LoCoMo question (not the adversarial ones) as a prompt, each conversation its own agent (dated
  notes): does the injected block (budget 1,500 tokens) hold a memory of a session with an evidence turn?
- restraint: every prompt of bench/data/no_memory_prompts.txt and of the held-out no_memory_heldout.txt asked of
  every agent: how often is nothing injected?
- latency: `memctl recall` as a whole process on a 10k-chunk index (bench.scale's, model-free vectors; the
  prompts embedded by the real local model, each a new one), median, beside a bare `python -c pass`; then, on the
  same daemon, 20,000-character prompts (a question and pasted code, a log or a document) beside short ones, asked
  in turn, and `ping` and `status` after 20,000 client names and 4 MB session ids.
- long: every fourth LoCoMo question pasted into 20,000 characters of code, a log or a document, in four shapes:
  does the block still hold an evidence session, as it does for the question alone?

python -m bench.recall [--parts relevance,latency,long] [--json FILE]
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
from memoryd_client.stub import RemoteError
from tests.harness import Daemon

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
LONG_CHARS = 20_000
LONG_TEMPLATES = (
    "can you remind me what we noted on the {}?",
    "what went wrong with the {} the last time?",
    "who looked after the {} before?",
)
LONG_QUESTIONS = tuple(t.format(topic) for topic in TOPICS for t in LONG_TEMPLATES)
LONG_SAMPLE = 4  # every fourth LoCoMo question
SHAPES = ("question, then code", "code, then question", "log, then question", "prose, then question")
TABLE_CLIENTS = 20_000
TABLE_SESSIONS = 100
TABLE_SESSION_CHARS = 4 << 20


def prompts(name: str) -> list[str]:
    lines = (DATA / f"{name}.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def pasted_code(chars: int) -> str:
    """memoryd's own search code, as a user pastes a module: about `chars` characters of it."""
    folder = Path(__file__).resolve().parents[1] / "memoryd" / "search"
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py")))
    while len(text) < chars:
        text += "\n" + text
    return text[:chars].rsplit("\n", 1)[0]


def pasted_prose(chars: int) -> str:
    """memoryd's design notes, as a user pastes a document: about `chars` characters of them."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "design.md").read_text(encoding="utf-8")
    while len(text) < chars:
        text += "\n\n" + text
    return text[:chars].rsplit(" ", 1)[0]


def pasted_log(chars: int) -> str:
    """A service's log lines, as a user pastes them unfenced: about `chars` characters."""
    lines, size, i = [], 0, 0
    while size < chars:
        line = (
            f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z INFO worker-{i % 7} "
            f"batch={i} rows={(i * 37) % 1000} took_ms={(i * 13) % 400} status=ok"
        )
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)


def long_prompt(question: str, shape: str, chars: int = LONG_CHARS) -> str:
    """The question in about `chars` characters of pasted code, a log or a document, as SHAPES names them."""
    room = chars - len(question) - 40
    if shape == "question, then code":
        return f"{question}\n\n```python\n{pasted_code(room)}\n```"
    if shape == "code, then question":
        return f"Here is the module:\n\n```python\n{pasted_code(room)}\n```\n\n{question}"
    if shape == "prose, then question":
        return f"{pasted_prose(room)}\n\n{question}"
    return f"{pasted_log(room)}\n{question}"


def _locomo_daemon(work: Path) -> tuple[Daemon, list[Any]]:
    root = work / "locomo" / "recall-bench"
    conversations = load_locomo()
    agents = []
    for conv in conversations:
        workspace = root / "workspaces" / conv.id
        write_notes(conv, workspace)
        agents.append(BenchAgent(conv.id, workspace))
    return start_daemon(agents[0].workspace, root / "data", agents=agents), conversations


def relevance(work: Path) -> dict[str, Any]:
    daemon, conversations = _locomo_daemon(work)
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


def long(work: Path) -> dict[str, Any]:
    """Every LONG_SAMPLE-th LoCoMo question alone and in each long shape: the share whose block holds an evidence
    session, and the daemon's time for it (ms, p50)."""
    daemon, conversations = _locomo_daemon(work)
    out: dict[str, Any] = {"budget": BUDGET, "chars": LONG_CHARS, "sample": LONG_SAMPLE}
    try:
        daemon.wait_idle()
        with daemon.client() as client:
            for shape in ("question alone", *SHAPES):
                held, total, took = 0, 0, []
                for conv in conversations:
                    for question, evidence in conv.questions[::LONG_SAMPLE]:
                        sessions = {conv.turn_at[e][0] for e in evidence if e in conv.turn_at}
                        prompt = question if shape == "question alone" else long_prompt(question, shape)
                        answer = client.recall(prompt, agent=conv.id, budget=BUDGET)
                        total += 1
                        took.append(answer["took_ms"])
                        paths = {m["citation"].split("#", 1)[0] for m in answer["memories"]}
                        held += bool(paths & sessions)
                out[shape] = {"questions": total, "evidence_session_in_block": round(held / total, 4)}
                out[shape]["took_ms_p50"] = round(median(took), 1)
                print(f"  long prompts, {shape}: {out[shape]}", flush=True)
    finally:
        daemon.stop()
    return out


def long_latency(daemon: Daemon) -> dict[str, Any]:
    """New questions in turn short and LONG_CHARS long (the shapes in turn): the daemon's time and the caller's
    (ms, p50), and the long ones' over the short ones'."""
    short, long_, short_took, long_took = [], [], [], []
    with daemon.client() as client:
        for i, question in enumerate(LONG_QUESTIONS):
            prompt = question if i % 2 == 0 else long_prompt(question, SHAPES[(i // 2) % len(SHAPES)])
            started = time.perf_counter()
            took = client.recall(prompt)["took_ms"]
            wall = (time.perf_counter() - started) * 1000
            (short if i % 2 == 0 else long_).append(wall)
            (short_took if i % 2 == 0 else long_took).append(took)
    out = {
        "long_chars": LONG_CHARS,
        "short_wall_ms": round(median(short), 1),
        "long_wall_ms": round(median(long_), 1),
        "short_daemon_ms": round(median(short_took), 1),
        "long_daemon_ms": round(median(long_took), 1),
        "long_max_wall_ms": round(max(long_), 1),
        "runs": len(long_),
    }
    out["long_over_short"] = round(out["long_wall_ms"] / out["short_wall_ms"], 2)
    return out


def _timed(client: Any, method: str, runs: int = 20) -> tuple[float, float, int]:
    """A method's p50 and max time (ms) and its reply's size (bytes of JSON)."""
    times, size = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        reply = client.call(method)
        times.append((time.perf_counter() - started) * 1000)
        size = len(json.dumps(reply))
    return round(median(times), 2), round(max(times), 2), size


def tables(daemon: Daemon) -> dict[str, Any]:
    """`ping` and `status` after TABLE_CLIENTS client names and TABLE_SESSIONS recalls with session ids of
    TABLE_SESSION_CHARS characters (refused, or kept), and the daemon's RSS before and after."""
    out: dict[str, Any] = {"clients": TABLE_CLIENTS, "sessions": TABLE_SESSIONS, "session_chars": TABLE_SESSION_CHARS}
    out["rss_before_mb"] = round(daemon.rss_mb(), 1)
    refused = 0
    with daemon.client() as client:
        for i in range(TABLE_CLIENTS):
            client.call("recall", {"prompt": "hi", "client": f"bench-{i}"})
        for i in range(TABLE_SESSIONS):
            try:
                client.call("recall", {"prompt": LATENCY_PROMPTS[0], "session": f"{i}-" + "s" * TABLE_SESSION_CHARS})
            except RemoteError:
                refused += 1
        out["sessions_refused"] = refused
        out["ping_ms"], out["ping_max_ms"], out["ping_bytes"] = _timed(client, "ping")
        out["status_ms"], out["status_max_ms"], out["status_bytes"] = _timed(client, "status")
    out["rss_after_mb"] = round(daemon.rss_mb(), 1)
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
        out["long"] = long_latency(daemon)
        print(f"  long prompts' latency: {out['long']}", flush=True)
        out["tables"] = tables(daemon)
        print(f"  ping and status after many clients: {out['tables']}", flush=True)
    finally:
        daemon.stop()
    return out


PARTS = {"relevance": relevance, "latency": latency, "long": long}
TARGETS = {
    "recall: block holds an evidence session (LoCoMo)": (">=", 0.90),
    "recall: nothing injected, no-memory prompts": (">=", 0.95),
    "recall: nothing injected, held-out prompts": (">=", 0.95),
    "memctl recall ms @10k": ("<=", 60.0),
    "recall: 20,000-character prompt p50 over a short one's @10k": ("<=", 1.5),
    "recall: evidence session in block, question after 20,000 characters of code (LoCoMo)": (">=", 0.90),
    "ping ms after 20,000 client names": ("<=", 10.0),
}


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part (absent ones None)."""
    relevance, speed, long_ = found.get("relevance", {}), found.get("latency", {}), found.get("long", {})
    names = list(TARGETS)
    return {
        names[0]: relevance.get("locomo", {}).get("evidence_session_in_block"),
        names[1]: relevance.get("no_memory_prompts", {}).get("nothing_injected"),
        names[2]: relevance.get("no_memory_heldout", {}).get("nothing_injected"),
        names[3]: speed.get("memctl_recall_ms"),
        names[4]: speed.get("long", {}).get("long_over_short"),
        names[5]: long_.get(SHAPES[1], {}).get("evidence_session_in_block"),
        names[6]: speed.get("tables", {}).get("ping_ms"),
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
        lengthy, table = speed.get("long"), speed.get("tables")
        if lengthy:
            lines += [
                "",
                f"{lengthy['long_chars']:,}-character prompts (a question with pasted code, a log or a document) "
                f"beside short ones, {lengthy['runs']} new prompts each, asked in turn: p50 "
                f"{lengthy['long_wall_ms']} ms against {lengthy['short_wall_ms']} ms ({lengthy['long_over_short']}x; "
                "the daemon's part "
                f"{lengthy['long_daemon_ms']} against {lengthy['short_daemon_ms']} ms), slowest long one "
                f"{lengthy['long_max_wall_ms']} ms.",
            ]
        if table:
            lines += [
                "",
                f"After {table['clients']:,} client names and {table['sessions']} recalls with "
                f"{table['session_chars']:,}-character session ids ({table['sessions_refused']} refused): `ping` "
                f"p50 {table['ping_ms']} ms ({table['ping_bytes']:,} bytes), `status` p50 {table['status_ms']} ms "
                f"({table['status_bytes']:,} bytes); RSS {table['rss_before_mb']} MB before, "
                f"{table['rss_after_mb']} MB after.",
            ]
    long_ = found.get("long")
    if long_:
        shares = "; ".join(
            f"{shape} {long_[shape]['evidence_session_in_block']}" for shape in ("question alone", *SHAPES)
        )
        lines += [
            "",
            f"Every {long_['sample']}th LoCoMo question in {long_['chars']:,} characters of pasted code, a log or a "
            f"document (budget {long_['budget']}): the block holds an evidence session for: {shares}.",
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
