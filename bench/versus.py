"""This checkout's search, recall and write speed beside another commit's, in one run, on dated daily notes.

A dated note (`memory/2025-03-04.md`) is what most workspaces hold and what the ranking by time reads (the
newest statement first, the time a question asks about): an undated workspace would not show its cost. Both
daemons index their own copy of the same notes (SciFact sentences, `synthetic.build(dated=True)`), then answer the
same calls one after the other, call by call and in turns first, so that whatever else the machine does falls on
both alike (a write's vectors are embedded before the other side's call: one side's background work is not timed
on the other's). Each query is asked once a run: a repeated query's vector is cached, and with a mix of cached and
embedded queries the hybrid p50 falls between the two (5 and 15 ms), where one run's ratio of identical code swung by
a fifth.

python -m bench.versus --base adf9e6d                 # 10k chunks, 5 rounds
python -m bench.versus --base main --chunks 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import median, start_daemon
from bench.synthetic import build, queries
from tests.harness import Daemon

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "bench" / "versus"
SEARCHES, RECALLS, WRITES = 60, 30, 15  # per round and side
OPERATIONS = ("search_keyword", "search_hybrid", "recall", "write")


def checkout(rev: str, folder: Path) -> tuple[Path, str]:
    """A worktree of `rev` (its compiled FTS5 helper copied from this checkout), and the commit it is."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    tree = folder / commit
    if not tree.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), commit], check=True)
    for helper in (ROOT / "memoryd" / "store").glob("_fts5_topk*.so"):
        shutil.copy2(helper, tree / "memoryd" / "store" / helper.name)
    return tree, commit


def start(code: Path, workspace: Path, data: Path) -> Daemon:
    """A daemon of the code at `code`, and of its client: they come first on the daemon's import path, and the
    directory it is started from does not (`python -m` puts it first otherwise: the base would run this checkout)."""
    path = os.pathsep.join((str(code), str(code / "client")))
    where = _importing(path)
    if not all(Path(found).resolve().is_relative_to(code.resolve()) for found in where):
        raise SystemExit(f"bench versus: the daemon for {code} would import {where}")
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "PYTHONSAFEPATH")}
    os.environ.update(PYTHONPATH=path, PYTHONSAFEPATH="1")
    try:
        return start_daemon(workspace, data)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _importing(path: str) -> list[str]:
    """Where memoryd and its client are imported from with this import path."""
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "import memoryd, memoryd_client; print(memoryd.__file__); print(memoryd_client.__file__)",
        ],
        env={**os.environ, "PYTHONPATH": path, "PYTHONSAFEPATH": "1"},
        check=True,
        capture_output=True,
        text=True,
    )
    return found.stdout.split()


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def one_round(daemons: dict[str, Daemon], qs: list[str], round_no: int) -> dict[str, dict[str, list[float]]]:
    """Each side's durations (seconds) of each operation for one round: searches in both modes, recalls, writes of
    new lines. The sides answer call by call, the same call one after the other and in turns first, so that what
    else the machine does in a moment falls on both alike (a round a side measured the machine's moods)."""
    sides = list(daemons)
    picked = qs[(round_no * SEARCHES) % len(qs) :][:SEARCHES] or qs[:SEARCHES]
    found: dict[str, dict[str, list[float]]] = {side: {op: [] for op in OPERATIONS} for side in sides}
    with contextlib.ExitStack() as stack:
        clients = {side: stack.enter_context(daemons[side].client()) for side in sides}
        for client in clients.values():
            client.search(qs[0], mode="keyword")
        calls: list[tuple[str, Callable[[Any, str], object]]] = [
            *(("search_keyword", lambda c, s, q=q: c.search(q, mode="keyword")) for q in picked),
            *(("search_hybrid", lambda c, s, q=q: c.search(q, mode="hybrid")) for q in picked),
            *(
                ("recall", lambda c, s, q=q: c.recall(f"Remind me: {q}", session=f"versus-{s}"))
                for q in picked[:RECALLS]
            ),
            *(
                ("write", lambda c, s, i=i, q=q: c.write(f"Decided in round {round_no}, item {i}: {q}"))
                for i, q in enumerate(picked[:WRITES])
            ),
        ]
        for turn, (op, call) in enumerate(calls):
            for side in sides if (turn + round_no) % 2 == 0 else reversed(sides):
                found[side][op].append(_timed(functools.partial(call, clients[side], side)))
                if op == "write":  # its vectors are embedded in the background: not while the other side answers
                    daemons[side].wait_idle()
    for daemon in daemons.values():
        daemon.wait_idle()  # the writes' vectors, before the next round
    return found


def run(base: str, chunks: int, rounds: int, work: Path) -> dict[str, Any]:
    tree, commit = checkout(base, work / "trees")
    notes = build(work / f"notes-{chunks}", chunks, dated=True)
    sides = {commit: tree, "checkout": ROOT}
    daemons: dict[str, Daemon] = {}
    durations: dict[str, dict[str, list[float]]] = {side: {op: [] for op in OPERATIONS} for side in sides}
    try:
        for side, code in sides.items():
            workspace = work / side / "workspace"
            if workspace.exists():
                shutil.rmtree(workspace)  # the writes of the last run
            shutil.copytree(notes, workspace)
            started = time.monotonic()
            daemons[side] = start(code, workspace, work / side / "data")
            daemons[side].wait_idle()
            print(f"[{side}] indexed in {time.monotonic() - started:.0f} s", flush=True)
        qs = queries(SEARCHES * rounds, repeated=False)
        if len(set(qs)) < len(qs):
            print(f"bench versus: {len(qs) - len(set(qs))} queries asked again; their vectors are cached", flush=True)
        for round_no in range(rounds):
            for side, ops in one_round(daemons, qs, round_no).items():
                for op, took in ops.items():
                    durations[side][op] += took
            print(f"  round {round_no + 1}/{rounds} done", flush=True)
    finally:
        for daemon in daemons.values():
            daemon.stop()
    p50 = {side: {op: round(median(took) * 1000, 2) for op, took in ops.items()} for side, ops in durations.items()}
    ratio = {op: round(p50["checkout"][op] / p50[commit][op], 3) for op in OPERATIONS}
    paired = {op: round(median(_per_call(durations["checkout"][op], durations[commit][op])), 3) for op in OPERATIONS}
    return {
        "base": commit,
        "chunks": chunks,
        "rounds": rounds,
        "p50_ms": p50,
        "ratio_to_base": ratio,
        "paired_ratio": paired,
    }


def _per_call(mine: list[float], theirs: list[float]) -> list[float]:
    """This checkout's time over the other's, for each call both answered."""
    return [a / b for a, b in zip(mine, theirs, strict=True)]


TARGETS = {f"{op.replace('_', ' ')} p50 / an earlier commit's, dated notes": ("<=", 1.1) for op in OPERATIONS}


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part: each operation's p50 over the earlier commit's."""
    ratios = found.get("ratio_to_base", {})
    return {name: ratios.get(op) for name, op in zip(TARGETS, OPERATIONS, strict=True)}


def markdown(found: dict[str, Any]) -> list[str]:
    """bench report's section."""
    base = found["base"]
    lines = [
        f"## Beside an earlier commit (`python -m bench versus --base {base}`)",
        "",
        f"{found['chunks']:,} chunks of dated daily notes, one daemon of each version on its own copy, "
        f"{found['rounds']} rounds, the two answering call by call in turns: p50 in ms. Floor (issue 45): search, "
        "recall and write within 1.1x of the commit before it. Call by call: the median, over the calls, of this "
        "checkout's time over the other's for the same call.",
        "",
        f"| operation | {base} | this checkout | ratio | call by call |",
        "|---|---|---|---|---|",
    ]
    paired = found.get("paired_ratio", {})
    for op in OPERATIONS:
        lines.append(
            f"| {op} | {found['p50_ms'][base][op]} | {found['p50_ms']['checkout'][op]} | {found['ratio_to_base'][op]} "
            f"| {paired.get(op, '')} |"
        )
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to measure beside this checkout")
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    found = run(args.base, args.chunks, args.rounds, args.workdir)
    for op in OPERATIONS:
        print(
            f"{op:15s} p50 {found['p50_ms'][found['base']][op]:8.2f} ms ({found['base']}) -> "
            f"{found['p50_ms']['checkout'][op]:8.2f} ms (checkout): {found['ratio_to_base'][op]:.3f}x, "
            f"call by call {found['paired_ratio'][op]:.3f}x"
        )
    if args.json:
        args.json.write_text(json.dumps(found, indent=2))
    return found


if __name__ == "__main__":
    main()
