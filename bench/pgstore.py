"""The PostgreSQL store beside the SQLite store, in one run, through real daemons and a real PostgreSQL 16.

python -m bench.pgstore                                   # every part
python -m bench.pgstore --parts quality --sets scifact,xquad-zh
python -m bench.pgstore --parts freshness,failover --writes 100

- quality: each shared set is indexed by a daemon on the SQLite store (the default model) and queried keyword and
  hybrid; then moved with `memoryd store migrate` (its embedding cache comes along: nothing is embedded again) and
  queried the same way through a daemon on the PostgreSQL store. Also: each side's per-query latency.
- freshness: a note written through daemon A, searched for through daemon B (standing by on the same namespace)
  every 10 ms until found.
- failover: the writer killed with SIGKILL while a new note lands in both clones of the folder; time until the
  standby holds the lock, and until it finds the note.
- scaleout: 8 clients on one daemon, then 8 on each of two (one reading a streaming replica), on SciFact.
- reindex: an atomic reindex of SciFact's namespace under a steady search load (failed searches counted), then
  one killed with SIGKILL halfway: the old index must still answer and no staging schema be left.
- scale: keyword and hybrid latency (1 client, 8 clients) at 100k chunks through each store, on bench.scale's
  index (the real sync, model-free vectors, queries embedded by the real model), `store migrate`'s time, and the
  reindex part on that namespace."""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.beir import CACHE, RESULTS_PER_QUERY, load
from bench.conversations import Conversation, K, judge, load_locomo, score_rows, write_notes
from bench.datasets import dataset_workspace
from bench.harness import BenchAgent, Daemon, median, percentile, start_daemon
from bench.latency import reindex_under_load, search_modes
from bench.metrics import dedupe_docs, evaluate
from bench.pg import Cluster
from bench.scale import filled
from bench.synthetic import queries as synthetic_queries
from memoryd.store.postgres.schema import RETIRED_MARK, STAGING_MARK, hnsw_graph_bytes, schema_name

SETS = "scifact,xquad-vi,xquad-en,xquad-zh,xquad-th,locomo"
PARTS = "quality,freshness,failover,scaleout,reindex,scale"
# The scale part reindexes under load up to this size (the floor's); a million chunks would take hours here.
REINDEX_UP_TO = 100_000
MODES = ("keyword", "hybrid")
MEMORYD = str(Path(sys.executable).with_name("memoryd"))


def _pg_lines(url: str, namespace: str, extra: str = "") -> str:
    return f'store = "{url}"\nnamespace = "{namespace}"\n{extra}'


def _ms(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"p50_ms": round(median(ms), 2), "p95_ms": round(percentile(ms, 95), 2), "n": len(ms)}


# -- quality ---------------------------------------------------------------------------------------------------
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
        out[mode] = {**figures, **_ms(latencies)}
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
        agents = [BenchAgent(a.id, a.workspace, extra=_pg_lines(url, f"{name}-{a.id}"[:32])) for a in workload.agents]
        daemon = start_daemon(agents[0].workspace, workload.root / "data-pg", agents=agents)
        try:
            pg_side = _measure(workload, daemon)
        finally:
            daemon.stop()
        out[name] = {"sqlite": sqlite_side, "postgresql": pg_side, "migrate": moved}
        for mode in MODES:
            print(f"  {mode:8s} sqlite {sqlite_side[mode]}\n  {'':8s} pg     {pg_side[mode]}", flush=True)
    return out


# -- two daemons on one namespace -------------------------------------------------------------------------------
class Pair:
    """Two daemons configured for one namespace, each with its own clone of the folder: A writes, B stands by."""

    def __init__(self, cluster: Cluster, work: Path, namespace: str) -> None:
        self.url, self.namespace, self.root = cluster.url(), namespace, work / "pair" / namespace
        shutil.rmtree(self.root, ignore_errors=True)
        seed = self.root / "a" / "ws" / "MEMORY.md"
        seed.parent.mkdir(parents=True)
        seed.write_text("# Team\n\nThe deploy agent moved the cache to Valkey after the Redis outage.\n")
        shutil.copytree(self.root / "a" / "ws", self.root / "b" / "ws")
        self.daemons = {side: self.start(side) for side in ("a", "b")}

    def start(self, side: str) -> Daemon:
        ws = self.root / side / "ws"
        agent = BenchAgent("team", ws, extra=_pg_lines(self.url, self.namespace))
        daemon = start_daemon(ws, self.root / side / "data", agents=[agent])
        daemon.wait_idle()
        return daemon

    def role(self, side: str) -> str:
        try:
            return self.daemons[side].status()["role"]
        except Exception:
            return "down"

    def finds(self, side: str, word: str) -> bool:
        with self.daemons[side].client(timeout=10) as client:
            return bool(client.search(word, mode="keyword").results)

    def close(self) -> None:
        for daemon in self.daemons.values():
            daemon.stop()


def _until(predicate: Any, limit: float = 60.0, step: float = 0.01) -> float:
    started = time.perf_counter()
    while not predicate():
        if time.perf_counter() - started > limit:
            return float("nan")
        time.sleep(step)
    return time.perf_counter() - started


def freshness(cluster: Cluster, work: Path, writes: int) -> dict[str, Any]:
    pair = Pair(cluster, work, "fresh")
    try:
        assert pair.role("a") == "writer" and pair.role("b") == "standby", (pair.role("a"), pair.role("b"))
        seen: list[float] = []
        with pair.daemons["a"].client() as writer:
            for i in range(writes):
                token = f"zq{uuid.uuid4().hex[:10]}"
                started = time.perf_counter()
                writer.write(f"Probe {i}: the night agent chose {token} for the rollout.")
                _until(lambda token=token: pair.finds("b", token), step=0.01)
                seen.append(time.perf_counter() - started)
        deleted = pair.root / "a" / "ws" / "MEMORY.md"
        deleted.unlink()
        gone = _until(lambda: not pair.finds("b", "valkey"))
    finally:
        pair.close()
    out = {"writes": writes, "write_on_a_found_on_b": _ms(seen), "delete_on_a_gone_on_b_s": round(gone, 3)}
    print(f"  freshness {out}", flush=True)
    return out


def failover(cluster: Cluster, work: Path, trials: int) -> dict[str, Any]:
    pair = Pair(cluster, work, "failover")
    lock, indexed = [], []
    try:
        writer, standby = "a", "b"
        for trial in range(trials):
            assert pair.role(writer) == "writer" and pair.role(standby) == "standby"
            token = f"zf{uuid.uuid4().hex[:10]}"
            pair.daemons[writer].stop(signal.SIGKILL)
            started = time.perf_counter()
            for side in ("a", "b"):  # both clones of the folder get the note, as a synced folder would
                note = pair.root / side / "ws" / "memory" / f"failover-{trial}.md"
                note.parent.mkdir(exist_ok=True)
                note.write_text(f"# Failover {trial}\n\nAfter the writer died we picked {token}.\n")
            lock.append(_until(lambda s=standby: pair.role(s) == "writer"))
            found = _until(lambda s=standby, t=token: pair.finds(s, t))
            indexed.append(time.perf_counter() - started if found == found else float("nan"))
            pair.daemons[writer] = pair.start(writer)  # back as the standby
            writer, standby = standby, writer
    finally:
        pair.close()
    out = {"trials": trials, "standby_holds_lock_s": [round(x, 3) for x in lock],
           "standby_indexes_new_note_s": [round(x, 3) for x in indexed]}  # fmt: skip
    print(f"  failover {out}", flush=True)
    return out


# -- load on the SciFact namespace (made by the quality part) ---------------------------------------------------
def _reader(cluster: Cluster, work: Path, name: str, namespace: str, extra: str = "") -> Daemon:
    workload_ws = work / "scifact" / "workspace"
    agent = BenchAgent("main", workload_ws, extra=_pg_lines(cluster.url(), namespace, extra))
    return start_daemon(workload_ws, work / "scifact" / "pgstore" / f"data-{name}", agents=[agent])


def _cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot (/proc/stat; zeros where there is none)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return sum(fields) - idle, sum(fields)


def _load(daemons: list[Daemon], queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """`clients` connections per daemon searching (hybrid) for `seconds`; searches per second, failures, and how
    busy the machine's cores were meanwhile (scale-out cannot pass 1 / that share on the same cores)."""
    counts, failures, latencies = [0], [0], []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(daemon: Daemon, offset: int) -> None:
        done, failed, mine = 0, 0, []
        with daemon.client(timeout=60) as client:
            i = offset
            while time.monotonic() < stop:
                started = time.perf_counter()
                try:
                    client.search(queries[i % len(queries)], mode="hybrid")
                    done += 1
                    mine.append(time.perf_counter() - started)
                except Exception:
                    failed += 1
                i += clients
        with lock:
            counts[0] += done
            failures[0] += failed
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(d, i)) for d in daemons for i in range(clients)]
    began = time.perf_counter()
    busy_before, total_before = _cpu_times()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    busy, total = _cpu_times()
    cpu_busy = round((busy - busy_before) / (total - total_before), 3) if total > total_before else None
    return {"qps": round(counts[0] / elapsed, 1), "failed": failures[0], "cpu_busy": cpu_busy, **_ms(latencies)}


def scaleout(cluster: Cluster, work: Path, seconds: float) -> dict[str, Any]:
    queries = list(load("scifact").queries.values())
    replica = cluster.add_replica()
    one = _reader(cluster, work, "one", "scifact-main")
    two = None
    try:
        one.wait_idle()
        alone = _load([one], queries, 8, seconds)
        two = _reader(cluster, work, "two", "scifact-main", f'read_url = "{replica}"\n')
        two.wait_idle()
        both = _load([one, two], queries, 8, seconds)
        lag = two.status().get("replica_lag_s")
    finally:
        one.stop()
        if two is not None:
            two.stop()
    out = {"one_daemon": alone, "two_daemons_one_on_replica": both, "ratio": round(both["qps"] / alone["qps"], 2),
           "replica_lag_s": lag}  # fmt: skip
    print(f"  scaleout {out}", flush=True)
    return out


def reindex(cluster: Cluster, start: Callable[[], Daemon], namespace: str, queries: list[str]) -> dict[str, Any]:
    """An atomic reindex under a steady hybrid search load (failed searches counted), then one killed with SIGKILL
    halfway: after a restart the old index answers and no staging or retired schema is left."""
    daemon = start()
    out: dict[str, Any] = {}
    try:
        daemon.wait_idle()
        out.update(reindex_under_load(daemon, queries))
        chunks = daemon.status()["chunks"]
        with daemon.client(timeout=60) as client:
            client.reindex(wait=False)
        time.sleep(out["seconds"] / 2)
        daemon.stop(signal.SIGKILL)
        daemon = start()
        state = daemon.wait_idle()
        with daemon.client() as client:
            answered = bool(client.search(queries[0], mode="keyword").results)
        schema = schema_name(namespace)
        leftovers = cluster.sql(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s) OR starts_with(nspname, %s)",
            (f"{schema}{STAGING_MARK}", f"{schema}{RETIRED_MARK}"),
        )
        out["killed_mid_reindex"] = {
            "answers_after_restart": answered,
            "chunks_before": chunks,
            "chunks_after": state["chunks"],
            "staging_schemas_left": [r[0] for r in leftovers],
        }
    finally:
        daemon.stop()
    print(f"  reindex {out}", flush=True)
    return out


def scale(cluster: Cluster, work: Path, chunks: int, n_queries: int) -> dict[str, Any]:
    """Search latency at `chunks` chunks through each store (bench.scale's index: the real sync with model-free
    vectors, queries embedded by the real model), the migration's time, and a reindex under load in PostgreSQL."""
    out: dict[str, Any] = {"chunks": chunks}
    root, workspace, data = filled(chunks, work, out)
    qs = synthetic_queries(n_queries)
    daemon = start_daemon(workspace, data)
    try:
        dims = int(daemon.wait_idle()["dims"])
        out["sqlite"] = search_modes(daemon, qs, f"[{chunks} sqlite] ")
    finally:
        daemon.stop()
    namespace = f"scale-{chunks}"
    held = cluster.sql("SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema_name(namespace),))[0][0]
    if held and cluster.sql(f'SELECT count(*) FROM "{schema_name(namespace)}".chunks')[0][0] >= chunks:
        out["migrate"] = {"reused": True}  # a kept cluster (--pg-root) that already holds it
    else:
        # as the README asks of a server whose namespaces pass 450,000 chunks: the HNSW build stays in memory
        memory = max(64 << 20, hnsw_graph_bytes(chunks, dims)) >> 10
        cluster.sql(f"ALTER SYSTEM SET maintenance_work_mem = '{memory}kB'")
        cluster.sql("SELECT pg_reload_conf()")
        out["migrate"] = migrate(daemon, "main", cluster.url(), namespace)
    print(f"  [{chunks}] moved: {out['migrate']}", flush=True)
    agent = [BenchAgent("main", workspace, extra=_pg_lines(cluster.url(), namespace))]

    def start() -> Daemon:
        return start_daemon(workspace, root / "data-pg", agents=agent)

    daemon = start()
    try:
        daemon.wait_idle()
        out["postgresql"] = search_modes(daemon, qs, f"[{chunks} pg] ")
    finally:
        daemon.stop()
    one = "1_client"
    out["hybrid_p50_ratio"] = round(
        out["postgresql"]["search_hybrid"][one]["p50_ms"] / out["sqlite"]["search_hybrid"][one]["p50_ms"], 2
    )
    if chunks <= REINDEX_UP_TO:
        out["reindex"] = reindex(cluster, start, namespace, qs)
    return out


# -- report ----------------------------------------------------------------------------------------------------
def _gaps(quality_part: dict[str, Any]) -> list[float]:
    gaps = []
    for row in quality_part.values():
        for mode in MODES:
            ours, theirs = row["sqlite"][mode], row["postgresql"][mode]
            gaps += [abs(ours[k] - theirs[k]) for k in ours if "@" in k and k in theirs]
    return gaps


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part (absent ones None)."""
    gaps = _gaps(found.get("quality", {}))
    fresh = found.get("freshness", {}).get("write_on_a_found_on_b", {})
    indexed = found.get("failover", {}).get("standby_indexes_new_note_s") or []
    reindexes = [found.get("reindex")] + [row.get("reindex") for row in found.get("scale", {}).values()]
    failed = [r["searches_failed"] for r in reindexes if r and "searches_failed" in r]
    return {
        "pg quality: largest gap to SQLite": round(max(gaps), 4) if gaps else None,
        "pg write on A found on B p95 s": round(fresh["p95_ms"] / 1000, 3) if fresh else None,
        "pg failover: standby indexes a new note s": max(indexed) if indexed else None,
        "pg 2 daemons / 1 daemon q/s": found.get("scaleout", {}).get("ratio"),
        "pg searches failed during a reindex": sum(failed) if failed else None,
        **{
            f"pg / sqlite hybrid p50 @{row['chunks']}": row.get("hybrid_p50_ratio")
            for row in sorted(found.get("scale", {}).values(), key=lambda row: row["chunks"])
        },
    }


def markdown(found: dict[str, Any]) -> list[str]:
    """bench report's section: quality and latency side by side, then the rest as measured."""
    lines = [
        "## PostgreSQL store beside SQLite (`python -m bench pgstore`)",
        "",
        "| set | mode | metric | SQLite | PostgreSQL | gap | p50 ms SQLite | p50 ms PostgreSQL |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in found.get("quality", {}).items():
        for mode in MODES:
            ours, theirs = row["sqlite"][mode], row["postgresql"][mode]
            for metric in (k for k in ours if "@" in k):
                lines.append(
                    f"| {name} | {mode} | {metric} | {ours[metric]} | {theirs[metric]} | "
                    f"{round(theirs[metric] - ours[metric], 4)} | {ours['p50_ms']} | {theirs['p50_ms']} |"
                )
    rest = {k: v for k, v in found.items() if k != "quality"}
    moved = {name: row.get("migrate") for name, row in found.get("quality", {}).items()}
    if moved:
        rest["migrate"] = moved
    if rest:
        lines += ["", "```json", json.dumps(rest, indent=2, ensure_ascii=False), "```"]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default=PARTS)
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long each scale-out load runs")
    parser.add_argument("--scales", default="100000", help="index sizes of the scale part")
    parser.add_argument("--queries", type=int, default=300, help="queries per mode in the scale part")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--pg-root", type=Path, help="keep the PostgreSQL cluster here (reused by the next run)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    root = args.pg_root or Path(tempfile.mkdtemp(prefix="pgb-", dir="/tmp"))
    cluster = Cluster(root)
    out: dict[str, Any] = {}
    try:
        sets = args.sets.split(",") if "quality" in parts else []
        if ("scaleout" in parts or "reindex" in parts) and "scifact" not in sets:
            sets.append("scifact")  # their load runs on SciFact's namespace, which the quality part makes
        if sets:
            out["quality"] = quality(cluster, args.workdir, sets)
        if "freshness" in parts:
            out["freshness"] = freshness(cluster, args.workdir, args.writes)
        if "failover" in parts:
            out["failover"] = failover(cluster, args.workdir, args.trials)
        if "scaleout" in parts:
            out["scaleout"] = scaleout(cluster, args.workdir, args.seconds)
        if "reindex" in parts:
            scifact = list(load("scifact").queries.values())
            out["reindex"] = reindex(
                cluster, lambda: _reader(cluster, args.workdir, "reindex", "scifact-main"), "scifact-main", scifact
            )
        if "scale" in parts:
            out["scale"] = {n: scale(cluster, args.workdir, int(n), args.queries) for n in args.scales.split(",")}
    finally:
        cluster.close()
        if args.pg_root is None:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
