"""Responsiveness and recovery under fault, against a real daemon with the default local model.

python -m research.faults [--notes 1500] [--parts bursts large_note first_index sigterm corrupt]

- bursts: RSS before and after rounds of idle connections (the daemon must give the memory back);
- large note: ping, keyword and hybrid latency while a 600 KB note is embedded;
- first index: hybrid latency while the first index of many notes runs;
- SIGTERM: seconds from SIGTERM to exit, with a first index, a waited reindex and a waited sync running;
- corrupt index: seconds until a daemon started on a corrupt index answers with every note again;
- cold: the first hybrid search after the idle model was unloaded, against a warm one, and RSS either way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.harness import median, start_daemon, stats
from memoryd_client.stub import ClientError, MemoryClient
from tests.harness import Daemon, indexing

PARTS = ("bursts", "large_note", "first_index", "sigterm", "corrupt", "cold")
QUERIES = ["what did we decide about tokens?", "lighthouse logbook", "heron survey birds", "JWT expiry"]


def _timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _notes(workspace: Path, count: int) -> None:
    for i in range(count):
        path = workspace / "memory" / f"n{i:05}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n" + f"The heron{i} survey counted {i % 97} birds near the lake.\n" * 20)


def _big_note(words: int = 100_000) -> str:
    parts = []
    for i in range(words // 400):
        parts.append(f"## Part {i}\n" + f"Paragraph {i} about the lighthouse logbook and the tide tables. " * 40)
    return "\n\n".join(parts)


def bursts(daemon: Daemon, rounds: int = 10, size: int = 2000) -> dict[str, Any]:
    """Open `size` idle connections at once, close them, `rounds` times; RSS before and after."""
    with daemon.client() as client:
        client.ping()
    before = daemon.rss_mb()
    peak = before
    refused = 0
    for _ in range(rounds):
        socks = []
        for _ in range(size):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(str(daemon.socket))
            except (BlockingIOError, OSError):
                refused += 1
            socks.append(sock)
        time.sleep(0.5)
        peak = max(peak, daemon.rss_mb())
        for sock in socks:
            sock.close()
        time.sleep(0.5)
    time.sleep(2.0)
    with daemon.client() as client:
        client.ping()
    after = daemon.rss_mb()
    return {
        "rounds": rounds,
        "connections_per_round": size,
        "connects_refused_by_the_os": refused,
        "rss_before_mb": round(before, 1),
        "rss_peak_mb": round(peak, 1),
        "rss_after_mb": round(after, 1),
        "after_over_before": round(after / before, 3),
    }


def large_note(daemon: Daemon) -> dict[str, Any]:
    """Latency of ping, keyword and hybrid search while one 600 KB note is embedded."""
    note = daemon.workspace / "memory" / "big.md"
    text = _big_note()
    note.write_text(text)
    pings: list[float] = []
    keyword: list[float] = []
    hybrid: list[float] = []
    deadline = time.monotonic() + 120
    with MemoryClient(daemon.socket, timeout=120) as client:
        while not indexing(client.status()["agents"][0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        while indexing(client.status()["agents"][0]) and time.monotonic() < deadline:
            pings.append(_timed(client.ping))
            keyword.append(_timed(lambda: client.search("JWT expiry", mode="keyword")))
            hybrid.append(_timed(lambda: client.search(QUERIES[len(hybrid) % len(QUERIES)] + f" {len(hybrid)}")))
            time.sleep(0.05)
    return {
        "note_kb": round(len(text.encode()) / 1024),
        "ping": stats(pings),
        "keyword": stats(keyword),
        "hybrid": stats(hybrid),
    }


def during_first_index(daemon: Daemon) -> dict[str, Any]:
    hybrid: list[float] = []
    keyword: list[float] = []
    with MemoryClient(daemon.socket, timeout=120) as client:
        while indexing(client.status()["agents"][0]):
            term = f"heron{len(hybrid) * 7}"
            hybrid.append(_timed(lambda q=term: client.search(f"{q} survey birds")))
            keyword.append(_timed(lambda q=term: client.search(q, mode="keyword")))
    return {"hybrid": stats(hybrid), "keyword": stats(keyword)}


def sigterm(daemon: Daemon) -> dict[str, Any]:
    """SIGTERM while the first index runs and clients wait on a sync and on reindex(wait=True)."""
    answers: list[str] = []

    def waiter(call: Any) -> None:
        try:
            with MemoryClient(daemon.socket, timeout=600) as client:
                call(client)
            answers.append("answered")
        except ClientError as exc:
            answers.append(type(exc).__name__ + ": " + str(exc)[:80])

    threads = [
        threading.Thread(target=waiter, args=(lambda c: c.sync(),)),
        threading.Thread(target=waiter, args=(lambda c: c.reindex(wait=True),)),
    ]
    for thread in threads:
        thread.start()
    time.sleep(3.0)
    started = time.monotonic()
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(120)
    seconds = time.monotonic() - started
    for thread in threads:
        thread.join(10)
    return {"seconds_to_exit": round(seconds, 2), "exit_code": daemon.proc.returncode, "waiting_clients": answers}


def corrupt(work: Path, notes: int) -> dict[str, Any]:
    data = work / "corrupt-data"
    workspace = work / "corrupt-ws"
    _notes(workspace, notes)
    daemon = start_daemon(workspace, data, provider="hash")
    daemon.wait_idle()
    daemon.stop()
    store = next(data.rglob("index.sqlite"))
    size = store.stat().st_size
    with store.open("r+b") as fh:
        fh.seek(4096)
        fh.write(os.urandom(size - 4096))
    started = time.monotonic()
    daemon = start_daemon(workspace, data, provider="hash")
    try:
        while True:
            try:
                with daemon.client() as client:
                    found = client.search(f"heron{notes - 1}", mode="keyword").results
                    if found and client.status()["agents"][0]["files"] == notes:
                        break
            except ClientError:
                pass
            time.sleep(0.05)
        return {"notes": notes, "seconds_to_whole_again": round(time.monotonic() - started, 2)}
    finally:
        daemon.stop()


def cold_search(work: Path, trials: int = 5) -> dict[str, Any]:
    """The price of unloading an idle model: the first hybrid search after an unload against a warm one."""
    workspace = work / "cold-ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Auth\nWe decided to use JWT with 24h expiry.\n")
    daemon = start_daemon(workspace, work / "cold-data", daemon_extra="model_idle_minutes = 0.02")
    cold: list[float] = []
    warm: list[float] = []
    loaded_rss: list[float] = []
    unloaded_rss: list[float] = []
    try:
        daemon.wait_idle()
        with daemon.client() as client:
            for i in range(trials):
                while client.status()["agents"][0]["model_loaded"]:
                    time.sleep(0.2)
                unloaded_rss.append(daemon.rss_mb())
                cold.append(_timed(lambda n=i: client.search(f"what did we decide about tokens {n}?")))
                warm.append(_timed(lambda n=i: client.search(f"which expiry did we choose {n}?")))
                loaded_rss.append(daemon.rss_mb())
    finally:
        daemon.stop()
    return {
        "cold_hybrid": stats(cold),
        "warm_hybrid": stats(warm),
        "rss_loaded_mb": round(median(loaded_rss), 1),
        "rss_unloaded_mb": round(median(unloaded_rss), 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m research.faults")
    parser.add_argument("--notes", type=int, default=1500, help="notes for the first-index and SIGTERM runs")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    args = parser.parse_args(argv)
    parts = set(args.parts)
    work = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    results: dict[str, Any] = {}
    try:
        workspace = work / "ws"
        (workspace / "memory").mkdir(parents=True)
        (workspace / "MEMORY.md").write_text("# Auth\nWe decided to use JWT with 24h expiry.\n")
        if parts & {"bursts", "large_note"}:
            daemon = start_daemon(workspace, work / "data")
            try:
                daemon.wait_idle()
                if "bursts" in parts:
                    results["bursts"] = bursts(daemon)
                if "large_note" in parts:
                    results["large_note"] = large_note(daemon)
            finally:
                daemon.stop()
        many = work / "many"
        _notes(many, args.notes)
        if "first_index" in parts:
            daemon = start_daemon(many, work / "many-data")
            try:
                results["during_first_index"] = during_first_index(daemon)
            finally:
                daemon.stop()
            shutil.rmtree(work / "many-data")
        if "sigterm" in parts:
            results["sigterm"] = sigterm(start_daemon(many, work / "sigterm-data"))
        if "corrupt" in parts:
            results["corrupt_index"] = corrupt(work, args.notes)
        if "cold" in parts:
            results["cold_search"] = cold_search(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
