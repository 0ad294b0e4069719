"""The web page (issue 46) in Debian's chromium: how long each page takes to draw on a 100k-chunk index, and
screenshots of every page on a small demo memory.

Load time is the page's own clock: from the start of its navigation (a fresh load, the token already handed over)
to the moment it has drawn its data (`data-ready` on <body>, set by app.js after the RPC answers are in the page).
The index is the synthetic workspace of `bench.latency` (real SciFact sentences, ten chunks a file) with the
hashing embedder, so that building 100k chunks takes minutes, not the hours the local model would: the page's cost
is what is measured here; a search's own cost with the model is `bench latency`'s.

python -m bench.ui [--chunks 100000] [--loads 15] [--screenshots docs/ui]
python -m bench ui                      # the same, kept for `python -m bench report`
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from bench.beir import CACHE
from bench.harness import median, percentile, start_daemon
from bench.synthetic import build
from tests.browser import chromium, open_page
from tests.daemon import memctl
from tests.harness import Daemon

TARGETS = {"web page load p50 ms @100k, slowest page": ("<=", 300.0)}
PAGES = {  # route -> the page it draws
    "/status": "status",
    "/search?query=insulin+resistance+in+mice": "search",
    "/notes": "notes",
    "/note?path=memory%2F005%2Fnote-05000.md&from=3&to=4": "note",
    "/recall": "recall",
}


def _address(daemon: Daemon) -> tuple[str, str]:
    page = daemon.client().ping()["ui"]
    if not page.get("url"):
        raise SystemExit(f"bench ui: the daemon serves no page: {page.get('error')}")
    return page["url"], Path(page["token_file"]).read_text().strip()


def _recalls(daemon: Daemon, count: int) -> None:
    """Recall log entries, as a day of prompts would leave them (a session each ten prompts)."""
    client = daemon.client()
    for i in range(count):
        client.call(
            "recall", {"prompt": f"what do we know about insulin resistance, case {i}?", "session": f"s{i // 10}"}
        )


def measure(chunks: int = 100_000, loads: int = 15, work: Path = CACHE) -> dict[str, Any]:
    root = work / f"ui-{chunks}"
    workspace = build(root / "workspace", chunks)
    daemon = start_daemon(workspace, root / "data-hash", provider="hash")
    try:
        state = daemon.wait_idle()
        _recalls(daemon, 1000)  # the recall page loads the latest 1000
        url, token = _address(daemon)
        out: dict[str, Any] = {"chunks": state["chunks"], "files": state["files"], "loads": loads, "pages": {}}
        with chromium() as browser:
            open_page(browser, f"{url}#token={token}", "search")
            for route, page in PAGES.items():
                times = []
                for _ in range(loads):
                    open_page(browser, f"{url}#{route}", page, timeout=60)
                    times.append(float(browser.find_element("tag name", "body").get_attribute("data-ms-since-open")))
                out["pages"][page] = {"p50_ms": round(median(times), 1), "p95_ms": round(percentile(times, 95), 1)}
                print(
                    f"  {page}: p50 {out['pages'][page]['p50_ms']} ms, p95 {out['pages'][page]['p95_ms']} ms",
                    flush=True,
                )
        out["slowest_p50_ms"] = max(p["p50_ms"] for p in out["pages"].values())
        return out
    finally:
        daemon.stop()


DEMO = {
    "MEMORY.md": "# Decisions\n\n## Queue\nBilling uses RabbitMQ for its queue; retries back off exponentially.\n\n"
    "## Database\nPostgres 16 for the ledger service; the read replica serves reports.\n",
    "memory/2026-11-02.md": "# 2026-11-02\n\n- Billing's cache is Redis, one instance per region.\n"
    "- Alice owns the payment_processor retry policy.\n",
    "memory/2026-11-19.md": "# 2026-11-19\n\n- Switched the billing cache from Redis to Memcached after the incident "
    "review.\n- The heron dataset moved to the cold bucket.\n",
    "memory/projects/osprey.md": "# Osprey\n\nOsprey is the search rewrite. Its index is rebuilt nightly at 02:00 and "
    "served from two replicas.\n",
}


def screenshots(out_dir: Path, work: Path = CACHE) -> list[Path]:
    """Each page of a small demo memory, as PNGs in `out_dir` (a Claude Code prompt's recall in the log)."""
    root = work / "ui-demo"
    shutil.rmtree(root, ignore_errors=True)  # the same pictures each time: no recall log or index from before
    workspace = root / "workspace"
    for path, text in DEMO.items():
        target = workspace / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    daemon = start_daemon(workspace, root / "data", provider="hash")
    written = []
    try:
        daemon.wait_idle()
        hook = {
            "session_id": "demo-1",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Which cache does billing use?",
        }
        given = memctl(daemon, "hook", "claude-code", "UserPromptSubmit", stdin=json.dumps(hook))
        if not given.stdout:  # a hook always exits 0: no block means the recall log would be empty
            raise SystemExit(f"bench ui: the demo's hook recalled nothing ({given.stderr.strip()})")
        url, token = _address(daemon)
        out_dir.mkdir(parents=True, exist_ok=True)
        with chromium(1280, 860) as browser:
            open_page(browser, f"{url}#token={token}", "search")
            for name, route in (
                ("search", "/search?query=billing+cache"),
                ("note", "/note?path=memory%2F2026-11-19.md&from=3&to=3"),
                ("notes", "/notes?month=2026-11&day=2026-11-19"),
                ("recall", "/recall"),
                ("status", "/status"),
            ):
                open_page(browser, f"{url}#{route}", name)
                path = out_dir / f"{name}.png"
                browser.save_screenshot(str(path))
                written.append(path)
    finally:
        daemon.stop()
    return written


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    return {"web page load p50 ms @100k, slowest page": found.get("slowest_p50_ms")}


def markdown(found: dict[str, Any]) -> list[str]:
    lines = [
        "## The web page (`python -m bench ui`)",
        "",
        f"Each page loaded {found.get('loads')} times in Debian's chromium (headless), from navigation to its data",
        f"drawn (the page's own clock), on {found.get('chunks'):,} chunks in {found.get('files'):,} files (hashing",
        "embedder).",
        "",
        "| page | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {row['p50_ms']} | {row['p95_ms']} |" for name, row in found.get("pages", {}).items()]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.ui", description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--loads", type=int, default=15)
    parser.add_argument("--screenshots", type=Path, help="write each page's screenshot here, and measure nothing")
    args = parser.parse_args(argv)
    if args.screenshots:
        for path in screenshots(args.screenshots):
            print(f"wrote {path}")
        return {}
    return measure(args.chunks, args.loads)


if __name__ == "__main__":
    main()
