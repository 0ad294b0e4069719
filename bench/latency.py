"""Speed and footprint through the socket, with the local model, at 10k and 100k chunks.

python -m bench.latency                 # 10k and 100k chunks
python -m bench.latency --scales 10000  # one scale
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from bench.harness import median, percentile, start_daemon
from bench.synthetic import build, queries
from memoryd_client.stub import RemoteError
from tests.harness import Daemon

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "bench"
CLIENTS = 8


def _stats(latencies: list[float]) -> dict[str, float]:
    ms = [x * 1000 for x in latencies]
    return {"p50_ms": round(median(ms), 2), "p99_ms": round(percentile(ms, 99), 2), "n": len(ms)}


def sequential(daemon: Daemon, qs: list[str], mode: str) -> list[float]:
    out = []
    with daemon.client() as client:
        client.search(qs[0], mode=mode)
        for q in qs:
            started = time.perf_counter()
            client.search(q, mode=mode)
            out.append(time.perf_counter() - started)
    return out


def concurrent(
    daemon: Daemon, qs: list[str], mode: str, clients: int = CLIENTS
) -> tuple[list[float], float, float, dict[str, int]]:
    """Latencies of the searches answered with `clients` connections at once, the throughput of those, the
    daemon's peak RSS meanwhile, and the error codes of the searches that failed (a client goes on after one)."""
    latencies: list[float] = []
    failed: Counter[str] = Counter()
    lock = threading.Lock()
    done = threading.Event()
    peak = [daemon.rss_mb()]

    def worker(part: list[str]) -> None:
        mine = []
        errors: Counter[str] = Counter()
        with daemon.client() as client:
            for q in part:
                started = time.perf_counter()
                try:
                    client.search(q, mode=mode)
                except RemoteError as exc:
                    errors[exc.code] += 1
                    continue
                mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)
            failed.update(errors)

    def sampler() -> None:
        while not done.wait(0.1):
            peak.append(daemon.rss_mb())

    threads = [threading.Thread(target=worker, args=(qs[i::clients],)) for i in range(clients)]
    watcher = threading.Thread(target=sampler)
    watcher.start()
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    done.set()
    watcher.join()
    return latencies, len(latencies) / elapsed, max(peak), dict(failed)


def search_modes(daemon: Daemon, qs: list[str], label: str = "") -> dict[str, Any]:
    """Keyword and hybrid search, one client then CLIENTS at once: `search_keyword` and `search_hybrid`."""
    out: dict[str, Any] = {}
    for mode in ("keyword", "hybrid"):
        one = _stats(sequential(daemon, qs, mode))
        lat, qps, peak, failed = concurrent(daemon, qs, mode)
        out[f"search_{mode}"] = {
            "1_client": one,
            f"{CLIENTS}_clients": {**_stats(lat), "qps": round(qps, 1), **({"failed": failed} if failed else {})},
            "rss_peak_mb": round(peak, 1),
        }
        print(
            f"  {label}{mode}: p50 {one['p50_ms']} ms, p99 {one['p99_ms']} ms; {CLIENTS} clients p50 "
            f"{_stats(lat)['p50_ms']} ms, {qps:.0f} q/s; RSS peak {peak:.0f} MB",
            flush=True,
        )
    return out


def noop_sync(daemon: Daemon) -> dict[str, Any]:
    with daemon.client() as client:
        started = time.perf_counter()
        report = client.sync()["report"]
    return {"files": report["files_seen"], "seconds": round(time.perf_counter() - started, 3)}


def index_bytes(data: Path) -> int:
    """The main agent's index on disk, WAL and shared-memory files included."""
    index = data / "agents" / "main" / "index.sqlite"
    return sum(p.stat().st_size for p in index.parent.glob("index.sqlite*"))


def memctl_wall(daemon: Daemon, runs: int = 15) -> float:
    exe = Path(sys.executable).with_name("memctl")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memoryd_client.memctl"]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [*cmd, "--socket", str(daemon.socket), "search", "insulin resistance"], check=True, capture_output=True
        )
        times.append(time.perf_counter() - started)
    return median(times) * 1000


def _until(predicate: Any, limit: float = 30.0) -> float:
    started = time.perf_counter()
    while not predicate():
        if time.perf_counter() - started > limit:
            return float("nan")
        time.sleep(0.02)
    return time.perf_counter() - started


def change_to_searchable(daemon: Daemon, trials: int = 3) -> dict[str, float]:
    """File saved -> first search that returns it (the user's view), and -> indexed with no search at all."""
    user, watcher = [], []
    with daemon.client() as client:

        def sync_runs() -> int:
            return client.status()["agents"][0].get("sync_runs") or 0

        for trial in range(trials):
            note = daemon.workspace / "memory" / f"bench-change-{trial}.md"
            token = f"zq{uuid.uuid4().hex[:10]}"
            note.write_text(f"# Fresh\nThe marker {token} appears here.\n")
            user.append(_until(lambda t=token: bool(client.search(t, mode="keyword").results)))
            daemon.wait_idle()
            before = sync_runs()
            note.write_text(f"# Fresh\nThe marker zq{uuid.uuid4().hex[:10]} appears here.\n")
            watcher.append(_until(lambda b=before: sync_runs() > b))
            note.unlink()
            daemon.wait_idle()
    return {"search_finds_it_s": round(median(user), 3), "indexed_by_watcher_s": round(median(watcher), 3)}


def reindex_under_load(daemon: Daemon, qs: list[str]) -> dict[str, Any]:
    answered, failed, latencies = 0, 0, []
    with daemon.client() as control, daemon.client() as searcher:
        started = time.perf_counter()
        control.reindex()
        i = 0
        while (control.status()["agents"][0].get("reindex") or {}).get("state") == "running":
            t = time.perf_counter()
            try:
                searcher.search(qs[i % len(qs)], mode="hybrid")
                answered += 1
                latencies.append(time.perf_counter() - t)
            except Exception:
                failed += 1
            i += 1
        seconds = time.perf_counter() - started
        state = control.status()["agents"][0]["reindex"]
    return {
        "seconds": round(seconds, 2),
        "state": state["state"],
        "searches_answered": answered,
        "searches_failed": failed,
        "search_p50_ms_during": round(median([x * 1000 for x in latencies]), 2),
        "search_p99_ms_during": round(percentile([x * 1000 for x in latencies], 99), 2),
    }


def bare_model_rate(texts: list[str], model_path: Path | None = None) -> float:
    from bench.beir import bare_throughput
    from memoryd.config import default_data_dir, default_model_path

    return bare_throughput(model_path or default_model_path(default_data_dir()), texts)


def measure(
    chunks: int, work: Path, n_queries: int = 300, reindex: bool = True, model_path: Path | None = None
) -> dict[str, Any]:
    """`model_path`: another local model than the default (bench.models)."""
    root = work / f"synthetic-{chunks}"
    workspace = build(root / "workspace", chunks)
    data = root / "data"
    fresh = not (data / "agents" / "main" / "index.sqlite").exists()
    print(f"[{chunks} chunks] starting daemon ({'first index' if fresh else 'index reused'})", flush=True)
    daemon = start_daemon(workspace, data, model_path=model_path)
    out: dict[str, Any] = {"chunks": chunks}
    try:
        state = daemon.wait_idle()
        seconds = time.monotonic() - daemon.started
        out["files"], out["indexed_chunks"] = state["files"], state["chunks"]
        if fresh:
            rate = state["chunks"] / seconds
            sample = [p.read_text().split("\n\n")[0] for p in sorted(workspace.rglob("*.md"))[:300]]
            bare = bare_model_rate(sample, model_path)
            out["first_index"] = {
                "seconds": round(seconds, 1),
                "chunks_per_s": round(rate, 1),
                "bare_model_chunks_per_s": round(bare, 1),
                "ratio_to_bare": round(rate / bare, 3),
            }
            print(f"  first index {seconds:.0f}s, {rate:.0f} chunks/s (bare model {bare:.0f}/s)", flush=True)
        out["rss_idle_mb"] = round(daemon.rss_mb(), 1)
        qs = queries(n_queries)
        out.update(search_modes(daemon, qs))
        out["memctl_search_ms"] = round(memctl_wall(daemon), 1)
        out["noop_sync"] = noop_sync(daemon)
        out["change_to_searchable"] = change_to_searchable(daemon)
        size = index_bytes(data)
        out["index_mb"] = round(size / 2**20, 1)
        out["index_kb_per_1k_chunks"] = round(size / 1024 / max(state["chunks"], 1) * 1000, 1)
        if reindex:
            out["reindex"] = reindex_under_load(daemon, qs)
        daemon.wait_idle()
        out["rss_after_mb"] = round(daemon.rss_mb(), 1)
        print(
            f"  memctl {out['memctl_search_ms']} ms; no-op sync {out['noop_sync']}; change "
            f"{out['change_to_searchable']}; RSS idle {out['rss_idle_mb']} MB",
            flush=True,
        )
    finally:
        daemon.stop()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-reindex", action="store_true")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = {str(n): measure(int(n), args.workdir, args.queries, not args.no_reindex) for n in args.scales.split(",")}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
