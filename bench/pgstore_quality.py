"""The pgstore bench's quality part, and what its other parts share: each shared set indexed by a daemon on the
SQLite store and queried keyword and hybrid, moved with `memoryd store migrate`, and queried the same way through
a daemon on the PostgreSQL store (see bench/pgstore.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.beir import RESULTS_PER_QUERY, load
from bench.conversations import Conversation, K, judge, load_locomo, score_rows, write_notes
from bench.datasets import dataset_workspace
from bench.harness import BenchAgent, median, percentile, start_daemon
from bench.metrics import dedupe_docs, evaluate
from tests.harness import Daemon
from tests.pg import Cluster

MODES = ("keyword", "hybrid")
MEMORYD = str(Path(sys.executable).with_name("memoryd"))


def pg_lines(url: str, namespace: str, extra: str = "") -> str:
    """The lines of an [[agents]] table that put its index in PostgreSQL, in `namespace`."""
    return f'store = "{url}"\nnamespace = "{namespace}"\n{extra}'


def timings(values: list[float]) -> dict[str, float]:
    """p50 and p95 of durations in seconds, in ms, and their count."""
    ms = [v * 1000 for v in values]
    return {"p50_ms": round(median(ms), 2), "p95_ms": round(percentile(ms, 95), 2), "n": len(ms)}


class Workload:
    """A shared set as agents (workspaces) and the questions asked of them, judged the set's own way."""

    def __init__(self, name: str, work: Path) -> None:
        self.name = name
        self.root = work / name / "pgstore"
        if name == "locomo":
            self.conversations: list[Conversation] = load_locomo()
            shutil.rmtree(self.root / "workspaces", ignore_errors=True)
            self.agents = []
            for conv in self.conversations:
                workspace = self.root / "workspaces" / conv.id
                write_notes(conv, workspace)
                self.agents.append(BenchAgent(conv.id, workspace))
        else:
            self.dataset = load(name)
            workspace, self.mapping = dataset_workspace(self.dataset, work)
            self.agents = [BenchAgent("main", workspace)]

    def ask(self, daemon: Daemon, mode: str) -> tuple[dict[str, float], list[float]]:
        latencies: list[float] = []
        with daemon.client() as client:

            def search(question: str, agent: str, limit: int) -> Any:
                started = time.perf_counter()
                found = client.search(question, agent=agent, mode=mode, max_results=limit, min_score=-1.0)
                latencies.append(time.perf_counter() - started)
                return found

            if self.name == "locomo":
                rows = []
                for conv in self.conversations:
                    for question, evidence in conv.questions:
                        found = search(question, conv.id, K)
                        places = [(r.path, r.chunk_start_line, r.chunk_end_line) for r in found.results]
                        rows.append(judge(conv, places, evidence))
                return score_rows(rows), latencies
            runs = {}
            for qid, text in self.dataset.queries.items():
                found = search(text, "main", RESULTS_PER_QUERY)
                runs[qid] = dedupe_docs([r.path for r in found.results], self.mapping)
            return {k: round(v, 4) for k, v in evaluate(runs, self.dataset.qrels).items()}, latencies


def _measure(workload: Workload, daemon: Daemon) -> dict[str, Any]:
    state = daemon.wait_idle()
    out: dict[str, Any] = {"chunks": state["chunks"]}
    for mode in MODES:
        figures, latencies = workload.ask(daemon, mode)
        out[mode] = {**figures, **timings(latencies)}
    return out


def migrate(daemon: Daemon, agent: str, url: str, namespace: str) -> dict[str, Any]:
    """`memoryd store migrate` as a user runs it, on the daemon's config; its summary line and how long it took."""
    started = time.perf_counter()
    done = subprocess.run(
        [MEMORYD, "store", "migrate", "--config", str(daemon.config), "--agent", agent, "--from", "sqlite",
         "--to", url, "--namespace", namespace],
        capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"migrate {agent} failed: {done.stderr[-2000:]}")
    return {"seconds": round(time.perf_counter() - started, 2), "said": done.stdout.splitlines()[0]}


def quality(cluster: Cluster, work: Path, sets: list[str]) -> dict[str, Any]:
    url = cluster.url()
    out: dict[str, Any] = {}
    for name in sets:
        workload = Workload(name, work)
        print(f"[{name}] SQLite store", flush=True)
        data = workload.root / "data-sqlite"
        daemon = start_daemon(workload.agents[0].workspace, data, agents=workload.agents)
        try:
            sqlite_side = _measure(workload, daemon)
        finally:
            daemon.stop()
        moved = {a.id: migrate(daemon, a.id, url, f"{name}-{a.id}"[:32]) for a in workload.agents}
        print(f"[{name}] moved: {next(iter(moved.values()))['said']}", flush=True)
        agents = [BenchAgent(a.id, a.workspace, extra=pg_lines(url, f"{name}-{a.id}"[:32])) for a in workload.agents]
        daemon = start_daemon(agents[0].workspace, workload.root / "data-pg", agents=agents)
        try:
            pg_side = _measure(workload, daemon)
        finally:
            daemon.stop()
        out[name] = {"sqlite": sqlite_side, "postgresql": pg_side, "migrate": moved}
        for mode in MODES:
            print(f"  {mode:8s} sqlite {sqlite_side[mode]}\n  {'':8s} pg     {pg_side[mode]}", flush=True)
    return out
