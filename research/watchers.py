"""watchdog (what memoryd uses) against watchfiles (Rust notify, batches and debounces itself) on one tree:
time to start watching, change-to-event latency, how a burst arrives, CPU while idle, and resident memory.

python -m research.watchers [--folders 2000] [--files 10000]     (watchfiles must be installed: pip install watchfiles)
"""

from __future__ import annotations

import argparse
import json
import queue
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.harness import median
from tests.harness import rss_mb


def build(root: Path, folders: int, files: int) -> list[Path]:
    made = []
    for i in range(folders):
        folder = root / "memory" / f"f{i // 50}" / f"g{i}"
        folder.mkdir(parents=True, exist_ok=True)
        made.append(folder)
    for i in range(files):
        (made[i % folders] / f"n{i}.md").write_text(f"# note {i}\nsome text\n")
    return made


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def with_watchdog(root: Path, events: queue.Queue[float]) -> tuple[float, Any]:
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if not event.is_directory and str(event.src_path).endswith(".md"):
                events.put(time.monotonic())

    started = time.monotonic()
    observer = Observer()
    observer.schedule(Handler(), str(root), recursive=True)
    observer.start()
    return time.monotonic() - started, lambda: (observer.stop(), observer.join())


def with_watchfiles(root: Path, events: queue.Queue[float]) -> tuple[float, Any]:
    import watchfiles

    stop = threading.Event()
    ready = threading.Event()
    started = time.monotonic()

    def run() -> None:
        ready.set()
        for batch in watchfiles.watch(root, stop_event=stop, debounce=50, step=10, yield_on_timeout=False):
            now = time.monotonic()
            for _ in batch:
                events.put(now)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait()
    time.sleep(0.3)  # watchfiles has no "armed" signal: give the Rust watcher time to register the tree
    return time.monotonic() - started - 0.3, lambda: (stop.set(), thread.join(5))


def measure(name: str, start: Any, root: Path, folders: list[Path]) -> dict[str, Any]:
    import os

    events: queue.Queue[float] = queue.Queue()
    rss_before = rss_mb(os.getpid())
    setup, stop = start(root, events)
    try:
        latencies = []
        for i in range(30):
            target = folders[(i * 37) % len(folders)] / f"touch{i}.md"
            written = time.monotonic()
            target.write_text("changed\n")
            latencies.append(events.get(timeout=10) - written)
            time.sleep(0.1)
            while not events.empty():
                events.get_nowait()
        burst_at = time.monotonic()
        for i in range(1000):
            (folders[i % len(folders)] / f"burst{i}.md").write_text("x\n")
        delivered, last = 0, burst_at
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                last = events.get(timeout=1.0)
                delivered += 1
            except queue.Empty:
                break
        cpu = _cpu()
        time.sleep(3)
        idle_cpu = (_cpu() - cpu) / 3
        return {
            "watcher": name,
            "setup_s": round(setup, 3),
            "latency_ms_p50": round(median(latencies) * 1000, 1),
            "burst_1000_events": delivered,
            "burst_last_event_s": round(last - burst_at, 3),
            "idle_cpu_share": round(idle_cpu, 4),
            "rss_added_mb": round(rss_mb(os.getpid()) - rss_before, 1),
        }
    finally:
        stop()


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog="python -m research.watchers", description=__doc__)
    parser.add_argument("--folders", type=int, default=2000)
    parser.add_argument("--files", type=int, default=10000)
    args = parser.parse_args(argv)
    out = []
    for name, start in (("watchdog", with_watchdog), ("watchfiles", with_watchfiles)):
        root = Path(tempfile.mkdtemp(prefix="watch-"))
        try:
            folders = build(root, args.folders, args.files)
            out.append(measure(name, start, root, folders))
            print(json.dumps(out[-1]), flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return out


if __name__ == "__main__":
    main()
