"""The agent hooks' whole-process time (`memctl hook PLATFORM EVENT`, started as a platform starts it, prompt on
stdin) against every daemon behaviour of tests/hostile_daemons.py: healthy, down, a regular file or a dangling link
at the socket path, hung (SIGSTOPped), slow (1.8 s an answer), dribbling a byte a second, a notice every 0.5 s, a full
listen queue.

python -m bench.hooks [--runs 5] [--behaviours hung,notify] [--platforms claude-code,opencode] [--json FILE]

A healthy daemon's runs go one at a time (what a prompt pays); against the others, every event of a round starts at
once, 0.1 s apart (they spend their time waiting), so those figures include the start-up of eleven processes on the
same cores.
The floor: every run exits 0 within its platform's limit, with nothing on stdout but an answer (healthy or slow).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import stats
from memoryd_client.hooks import EVENTS
from tests.hostile_daemons import ANSWERING, BEHAVIOURS, HookRun, hook_env, hostile_daemon, run_hook, together

PROMPT = json.dumps({"session_id": "bench", "prompt": "what did we decide about the heron dataset?"}).encode()


def rounds(behaviour: str, events: list[tuple[str, str]], runs: int) -> dict[tuple[str, str], list[HookRun]]:
    """Each event's runs against one behaviour."""
    out: dict[tuple[str, str], list[HookRun]] = {e: [] for e in events}
    with tempfile.TemporaryDirectory() as data, hostile_daemon(behaviour) as socket:
        env = hook_env(socket, data)

        def one(event: tuple[str, str]) -> HookRun:
            return run_hook(*event, env, stdin=PROMPT, timeout=EVENTS[event[0]][event[1]][0] + 10)

        for _ in range(runs):
            if behaviour == "healthy":
                done = [one(e) for e in events]
            else:
                done = together([functools.partial(one, e) for e in events])
            for event, run in zip(events, done, strict=True):
                out[event].append(run)
    return out


def broken(behaviour: str, event: tuple[str, str], run: HookRun) -> str | None:
    """What a run did that a hook must not, or None."""
    limit = EVENTS[event[0]][event[1]][0]
    if run.code != 0:
        return f"exit {run.code}"
    if run.seconds >= limit:
        return f"{run.seconds:.2f} s against a limit of {limit} s"
    if behaviour not in ANSWERING and run.stdout:
        return f"printed {run.stdout[:80]!r}"
    if "Traceback" in run.stderr:
        return "a traceback"
    return None


def bench(behaviours: list[str], platforms: list[str], runs: int) -> dict[str, Any]:
    events = [(p, e) for p in platforms for e in EVENTS[p] if e != "stop"]
    cells, failures = [], []
    for behaviour in behaviours:
        for (platform, event), done in rounds(behaviour, events, runs).items():
            limit = EVENTS[platform][event][0]
            cell = {"platform": platform, "event": event, "behaviour": behaviour, "limit_s": limit}
            cells.append({**cell, **stats([r.seconds for r in done])})
            failures += [{**cell, "broke": why} for r in done if (why := broken(behaviour, (platform, event), r))]
            print(f"  {behaviour:11s} {platform} {event}: {cells[-1]}", flush=True)
    return {"runs": runs, "cells": cells, "failures": failures}


def table(results: dict[str, Any]) -> str:
    """p50 / p99 in seconds per event (rows) and behaviour (columns), beside the platform's limit."""
    behaviours = list(dict.fromkeys(c["behaviour"] for c in results["cells"]))
    rows: dict[tuple[str, str], dict[str, str]] = {}
    limits: dict[tuple[str, str], float] = {}
    for c in results["cells"]:
        key = (c["platform"], c["event"])
        rows.setdefault(key, {})[c["behaviour"]] = f"{c['p50_ms'] / 1000:.2f} / {c['p99_ms'] / 1000:.2f}"
        limits[key] = c["limit_s"]
    lines = [
        "| hook | limit s | " + " | ".join(behaviours) + " |",
        "|---|---:|" + "---:|" * len(behaviours),
    ]
    for key, row in rows.items():
        figures = " | ".join(row.get(b, "") for b in behaviours)
        lines.append(f"| {key[0]} {key[1]} | {limits[key]:g} | {figures} |")
    return "\n".join(lines)


TARGETS = {
    "hooks: slowest p99 / platform limit": ("<=", 1.0),
    "hooks: runs that broke the floor": ("<=", 0),
}


def headline(results: dict[str, Any]) -> dict[str, float | None]:
    cells = results.get("cells") or []
    if not cells:
        return dict.fromkeys(TARGETS)
    return {
        "hooks: slowest p99 / platform limit": round(max(c["p99_ms"] / 1000 / c["limit_s"] for c in cells), 3),
        "hooks: runs that broke the floor": len(results.get("failures", [])),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--behaviours", default=",".join(BEHAVIOURS))
    parser.add_argument("--platforms", default=",".join(EVENTS))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results = bench(args.behaviours.split(","), args.platforms.split(","), args.runs)
    print(f"\np50 / p99 whole-process seconds, {args.runs} runs each\n\n{table(results)}\n")
    for failure in results["failures"]:
        print(f"FLOOR BROKEN: {failure}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    sys.exit(1 if main()["failures"] else 0)
