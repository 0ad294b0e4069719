"""The pgstore bench's parts with several daemons on one namespace (see bench/pgstore.py): freshness (a note written
through daemon A, searched for through daemon B standing by), failover (the writer killed, the standby takes
over), and scale-out (8 clients on one daemon, then on each of two, one reading a streaming replica)."""

from __future__ import annotations

import shutil
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from bench.beir import load
from bench.harness import BenchAgent, start_daemon
from bench.pgstore_quality import pg_lines, timings
from tests.harness import Daemon
from tests.pg import Cluster


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
        agent = BenchAgent("team", ws, extra=pg_lines(self.url, self.namespace))
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
    out = {"writes": writes, "write_on_a_found_on_b": timings(seen), "delete_on_a_gone_on_b_s": round(gone, 3)}
    print(f"  freshness {out}", flush=True)
    return out


def replica_freshness(cluster: Cluster, work: Path, writes: int, backlog: int = 400) -> dict[str, Any]:
    """A note written through A, found by keyword through C, which searches a streaming replica, while A's embedding
    lane works through a backlog (`backlog` SciFact abstracts dropped into A's folder first)."""
    replica = cluster.url(replica=True) if cluster.replica_socket else cluster.add_replica()
    root = work / "pair" / "replica-fresh"
    shutil.rmtree(root, ignore_errors=True)
    seed = root / "a" / "ws" / "MEMORY.md"
    seed.parent.mkdir(parents=True)
    seed.write_text("# Team\n\nThe deploy agent moved the cache to Valkey after the Redis outage.\n")
    shutil.copytree(root / "a" / "ws", root / "c" / "ws")
    daemons: dict[str, Daemon] = {}
    try:
        for side, extra in (("a", ""), ("c", f'read_url = "{replica}"\n')):
            agent = BenchAgent("team", root / side / "ws", extra=pg_lines(cluster.url(), "replicafresh", extra))
            daemons[side] = start_daemon(root / side / "ws", root / side / "data", agents=[agent])
            daemons[side].wait_idle()
        for doc_id, (title, text) in list(load("scifact").docs.items())[:backlog]:
            note = root / "a" / "ws" / "memory" / "backlog" / f"{doc_id}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"# {title or doc_id}\n\n{text}\n")
        waiting = _until(lambda: (daemons["a"].status().get("embedding") or {}).get("waiting", 0) > 0, step=0.1)
        seen: list[float] = []
        backlog_left = []
        with daemons["a"].client() as writer:
            for i in range(writes):
                token = f"zr{uuid.uuid4().hex[:10]}"
                started = time.perf_counter()
                writer.write(f"Probe {i}: the night agent chose {token} for the rollout.")
                _until(lambda token=token: _finds(daemons["c"], token), step=0.01)
                seen.append(time.perf_counter() - started)
                backlog_left.append((daemons["a"].status().get("embedding") or {}).get("waiting", 0))
        replica_state = (daemons["c"].status().get("replica") or {}).get("state")
    finally:
        for daemon in daemons.values():
            daemon.stop()
    out = {
        "writes": writes,
        "write_on_a_found_on_c_through_replica": timings(seen),
        "backlog_seen_s": round(waiting, 3),
        "embedding_backlog_during_probes": [min(backlog_left), max(backlog_left)] if backlog_left else None,
        "replica_state_after": replica_state,
    }
    print(f"  replica freshness {out}", flush=True)
    return out


def _finds(daemon: Daemon, word: str) -> bool:
    with daemon.client(timeout=10) as client:
        return bool(client.search(word, mode="keyword").results)


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
def reader(cluster: Cluster, work: Path, name: str, namespace: str, extra: str = "") -> Daemon:
    """A daemon on `namespace` over SciFact's workspace (the quality part made both), with a data folder of its own."""
    workload_ws = work / "scifact" / "workspace"
    agent = BenchAgent("main", workload_ws, extra=pg_lines(cluster.url(), namespace, extra))
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
    return {"qps": round(counts[0] / elapsed, 1), "failed": failures[0], "cpu_busy": cpu_busy, **timings(latencies)}


def scaleout(cluster: Cluster, work: Path, seconds: float) -> dict[str, Any]:
    queries = list(load("scifact").queries.values())
    replica = cluster.add_replica()
    one = reader(cluster, work, "one", "scifact-main")
    two = None
    try:
        one.wait_idle()
        alone = _load([one], queries, 8, seconds)
        two = reader(cluster, work, "two", "scifact-main", f'read_url = "{replica}"\n')
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
