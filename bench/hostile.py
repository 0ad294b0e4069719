"""What one request can do to everyone else, and how soon a note is findable (issue 27's floors).

python -m bench.hostile                         # every part
python -m bench.hostile --parts freeze writes   # some

- freeze: while one huge or hostile request runs (a 1,000,000-character one-word write, eight gets of a 50 MB
  note, 10 connections each sending 64 gets of a 1 MB note and never reading), another client pings every
  20 ms: p50/p99/max of those pings, how long the request took, and how long SIGTERM takes with the hostile
  connections still open.
- writes: 20 writes to one note in a 5,000-note workspace with the real model: each answer's latency (the note
  is keyword-searchable when it returns; checked) and how long until its vectors followed.
- first_index: 10,000 notes, a fresh daemon: keyword-searchable and embedded counts over time (`status`,
  every 0.5 s), and the moment every note could be found by a keyword search.
- editor_race: an editor saving over a note (read, wait up to 10 ms, write back by rename or in place) beside
  `write` calls to the same note, 1,000 rounds for each way of saving: how many acknowledged writes the note lost.
- storm: one process connects and closes in a loop for 10 s while another client asks for recalls: that client's
  p50/p99, its failures, the storm's connections and how many log lines it caused.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgpack

from bench.harness import start_daemon, stats
from memoryd_client.stub import MemoryClient

PARTS = ("freeze", "writes", "first_index", "editor_race", "storm")


class Pinger:
    """Pings on its own connection every `every` seconds and records how long each answer took."""

    def __init__(self, path: Path, every: float = 0.02) -> None:
        self.path, self.every = path, every
        self.times: list[float] = []
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Pinger:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with MemoryClient(self.path, timeout=120) as client:
            while not self._stop.is_set():
                started = time.perf_counter()
                try:
                    client.ping()
                    self.times.append(time.perf_counter() - started)
                except Exception:
                    self.failures += 1
                self._stop.wait(self.every)


def _raw(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    return sock


def freeze(work: Path) -> dict[str, Any]:
    workspace = work / "freeze-ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Auth\nWe decided to use JWT with 24h expiry.\n")
    line = "lorem ipsum dolor sit amet consectetur " * 25 + "\n"
    (workspace / "memory" / "wide.md").write_text(line * (1_000_000 // len(line)))
    huge_lines = 50 * (1_000_000 // len(line))
    with (workspace / "memory" / "huge.md").open("w") as fh:
        for _ in range(50):
            fh.write(line * (1_000_000 // len(line)))
    daemon = start_daemon(workspace, work / "freeze-data")
    out: dict[str, Any] = {}
    hostile: list[socket.socket] = []
    try:
        daemon.wait_idle()
        with Pinger(daemon.socket) as pings, daemon.client() as client:
            started = time.perf_counter()
            written = client.write("w" * 999_000, "memory/blob.md")
            out["write_1M_word"] = {"seconds": round(time.perf_counter() - started, 3), "indexed": written["indexed"]}
        out["write_1M_word"]["ping"] = stats(pings.times)
        with Pinger(daemon.socket) as pings:
            times: list[float] = []

            def get_huge() -> None:
                with daemon.client() as client:
                    begun = time.perf_counter()
                    client.get("memory/huge.md", huge_lines - 49, 50)  # its end: the whole file is passed over
                    times.append(time.perf_counter() - begun)

            threads = [threading.Thread(target=get_huge) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        out["get_50MB_x8"] = {"get": stats(times), "ping": stats(pings.times)}
        request = b"".join(msgpack.packb([0, i, "get", [{"path": "memory/wide.md"}]]) for i in range(64))
        searches: list[float] = []
        rss_before, rss_peak = daemon.rss_mb(), 0.0
        with Pinger(daemon.socket) as pings:
            for _ in range(10):
                sock = _raw(daemon.socket)
                sock.sendall(request)
                hostile.append(sock)
            with daemon.client(timeout=60) as client:
                until = time.monotonic() + 5
                while time.monotonic() < until:
                    begun = time.perf_counter()
                    client.search("what did we decide about tokens?")
                    searches.append(time.perf_counter() - begun)
                    rss_peak = max(rss_peak, daemon.rss_mb())
        out["unread_gets_10x64"] = {
            "ping": stats(pings.times),
            "hybrid_search": stats(searches),
            "rss_before_mb": round(rss_before, 1),
            "rss_peak_mb": round(rss_peak, 1),
        }
        began = time.perf_counter()
        daemon.stop()
        out["sigterm_with_hostile_connections_s"] = round(time.perf_counter() - began, 3)
    finally:
        for sock in hostile:
            sock.close()
        daemon.stop()
    return out


def _notes(workspace: Path, count: int) -> None:
    for i in range(count):
        path = workspace / "memory" / f"n{i:05}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\nThe heron{i} survey counted {i % 97} birds near the lake on day {i % 31}.\n")


def writes(work: Path, files: int = 5000, count: int = 20) -> dict[str, Any]:
    workspace = work / "writes-ws"
    _notes(workspace, files)
    daemon = start_daemon(workspace, work / "writes-data")
    latencies: list[float] = []
    vector_lag: list[float] = []
    try:
        daemon.wait_idle()
        with daemon.client() as client:
            for i in range(count):
                begun = time.perf_counter()
                done = client.write(f"The avocet{i} nest count is {i + 3}, seen from the east hide.", "memory/birds.md")
                latencies.append(time.perf_counter() - begun)
                hits = client.search(f"avocet{i}", mode="keyword").results
                assert hits and hits[0].path == done["path"] and f"avocet{i} " in hits[0].snippet, (hits, done)
                while True:
                    agent = client.status()["agents"][0]
                    if agent["embedded_chunks"] == agent["chunks"]:
                        break
                    time.sleep(0.005)
                vector_lag.append(time.perf_counter() - begun)
                time.sleep(0.2)
    finally:
        daemon.stop()
    return {"files": files, "write": stats(latencies), "vectors_follow": stats(vector_lag)}


def first_index(work: Path, notes: int = 10_000, watch_seconds: float = 60.0) -> dict[str, Any]:
    workspace = work / "first-ws"
    _notes(workspace, notes)
    begun = time.monotonic()
    daemon = start_daemon(workspace, work / "first-data")
    curve: list[tuple[float, int, int, int]] = []
    all_found = None
    try:
        with daemon.client(timeout=60) as client:
            while time.monotonic() - begun < watch_seconds:
                agent = client.status()["agents"][0]
                elapsed = round(time.monotonic() - begun, 1)
                curve.append((elapsed, agent["files"], agent["chunks"], agent["embedded_chunks"]))
                if all_found is None and agent["files"] == notes:
                    probes = [0, notes // 3, notes // 2, notes - 1]
                    if all(client.search(f"heron{i}", mode="keyword").results for i in probes):
                        all_found = round(time.monotonic() - begun, 1)
                time.sleep(0.5)
            rate = (curve[-1][3] - curve[0][3]) / max(curve[-1][0] - curve[0][0], 1e-9)
    finally:
        daemon.stop()
    return {
        "notes": notes,
        "every_note_keyword_searchable_s": all_found,
        "embedded_per_s": round(rate, 1),
        "curve": [
            {"t": t, "files": f, "chunks": c, "embedded": e} for t, f, c, e in curve[:: max(1, len(curve) // 30)]
        ],
    }


def editor_race(work: Path, rounds: int = 1000) -> dict[str, Any]:
    from tests.test_trust import SAVE_STYLES, editor

    results: dict[str, Any] = {}
    for style in SAVE_STYLES:
        workspace = work / f"race-{style}"
        note = workspace / "memory" / "log.md"
        note.parent.mkdir(parents=True)
        note.write_text("# Log\nedited by hand\n")
        daemon = start_daemon(workspace, work / f"race-{style}-data", provider="hash")
        try:
            daemon.wait_idle()
            done = threading.Event()
            saver = threading.Thread(target=editor, args=(note, rounds, style, 3, done))
            saver.start()
            written: list[str] = []
            with daemon.client() as client:
                for n in range(rounds):
                    written.append(f"decision {n}: the queue for tenant {n * 7919} is durable")
                    client.write(written[-1], "memory/log.md")
            saver.join()
            lost_now = sum(1 for entry in written if entry not in note.read_text())
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(entry not in note.read_text() for entry in written):
                time.sleep(0.1)
            text = note.read_text()
            results[style] = {
                "rounds": rounds,
                "missing_when_the_editor_stopped": lost_now,
                "lost": sum(1 for entry in written if entry not in text),
                "doubled": sum(1 for entry in written if text.count(entry) > 1),
                "put_back_by_the_daemon": daemon.logs().count("appended it again"),
            }
        finally:
            daemon.stop()
    return results


STORM_SECONDS = 10.0


def storm(work: Path) -> dict[str, Any]:
    import subprocess
    import sys

    from tests.test_trust import STORM

    workspace = work / "storm-ws"
    _notes(workspace, 200)
    daemon = start_daemon(workspace, work / "storm-data")
    try:
        daemon.wait_idle()

        def recalls(seconds: float) -> tuple[list[float], int]:
            times, failures = [], 0
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                begun = time.perf_counter()
                try:
                    with MemoryClient(daemon.socket, timeout=10) as client:
                        client.recall("how many birds did the heron17 survey count?", client="bench")
                    times.append(time.perf_counter() - begun)
                except Exception:
                    failures += 1
                time.sleep(0.02)
            return times, failures

        quiet, _ = recalls(3.0)
        log_lines = len(daemon.logs().splitlines())
        flood = subprocess.Popen(
            [sys.executable, "-c", STORM, str(daemon.socket), str(STORM_SECONDS)], stdout=subprocess.PIPE, text=True
        )
        time.sleep(0.5)
        stormy, failures = recalls(STORM_SECONDS - 1.0)
        connects = int((flood.communicate()[0] or "0").strip() or 0)
        return {
            "recall_quiet": stats(quiet),
            "recall_during_storm": stats(stormy),
            "recall_failures": failures,
            "storm_connects": connects,
            "log_lines_from_storm": len(daemon.logs().splitlines()) - log_lines,
        }
    finally:
        daemon.stop()


TARGETS = {
    "editor race: acknowledged writes lost": ("<=", 0),
    "recall p99 ms during a connect/close storm": ("<=", 200.0),
}


def headline(results: dict[str, Any]) -> dict[str, float | None]:
    race = results.get("editor_race") or {}
    storm = results.get("storm") or {}
    return {
        "editor race: acknowledged writes lost": sum(s["lost"] for s in race.values()) if race else None,
        "editor race: writes the daemon put back": (
            sum(s["put_back_by_the_daemon"] for s in race.values()) if race else None
        ),
        "recall p99 ms during a connect/close storm": (storm.get("recall_during_storm") or {}).get("p99_ms"),
        "recall p99 ms, no storm": (storm.get("recall_quiet") or {}).get("p99_ms"),
        "connects/s of the storm": round(storm["storm_connects"] / STORM_SECONDS) if storm else None,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.hostile")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--notes", type=int, default=10_000, help="notes for the first-index curve")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    results: dict[str, Any] = {}
    try:
        if "freeze" in args.parts:
            results["freeze"] = freeze(work)
            print(json.dumps({"freeze": results["freeze"]}, indent=2), flush=True)
        if "writes" in args.parts:
            results["writes"] = writes(work)
            print(json.dumps({"writes": results["writes"]}, indent=2), flush=True)
        if "first_index" in args.parts:
            results["first_index"] = first_index(work, args.notes)
            print(json.dumps({"first_index": results["first_index"]}, indent=2), flush=True)
        for part, run in (("editor_race", editor_race), ("storm", storm)):
            if part in args.parts:
                results[part] = run(work)
                print(json.dumps({part: results[part]}, indent=2), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


if __name__ == "__main__":
    main()
