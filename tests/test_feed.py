"""The change feed: watcher events arrive as debounced batches of (path, kind), at once when urgent."""

from __future__ import annotations

import queue
import time

from memoryd.ingest.feed import Batch, ChangeFeed, Kind


def _feed(debounce: float, urgent: set[str] | None = None) -> tuple[ChangeFeed, queue.Queue[Batch]]:
    batches: queue.Queue[Batch] = queue.Queue()
    feed = ChangeFeed(batches.put, lambda kind: debounce, lambda path, kind: path in (urgent or set()))
    return feed, batches


def test_events_in_a_burst_arrive_as_one_batch_with_their_kinds() -> None:
    feed, batches = _feed(0.2)
    try:
        started = time.monotonic()
        for i in range(50):
            feed.add(f"/ws/memory/{i % 5}.md", "note")
        feed.add("/ws/sessions/a.jsonl", "transcript")
        feed.add("/ws/memory/people", "folder")
        feed.add("/ws/memory/people", "note")  # a folder stays a folder: it must be walked
        batch = batches.get(timeout=5)
        assert time.monotonic() - started >= 0.2
        assert batch == {
            **{f"/ws/memory/{i}.md": "note" for i in range(5)},
            "/ws/sessions/a.jsonl": "transcript",
            "/ws/memory/people": "folder",
        }
        assert not feed.pending and batches.empty()
    finally:
        feed.close()


def test_a_steady_stream_is_delivered_within_five_debounces() -> None:
    feed, batches = _feed(0.1)
    try:
        started = time.monotonic()
        while batches.empty() and time.monotonic() - started < 5:
            feed.add("/ws/memory/busy.md", "note")  # never quiet for a whole debounce
            time.sleep(0.02)
        assert batches.get(timeout=1) == {"/ws/memory/busy.md": "note"}
        assert time.monotonic() - started < 0.1 * 5 + 0.3
    finally:
        feed.close()


def test_an_urgent_change_goes_out_at_once_and_flush_delivers_on_the_callers_thread() -> None:
    feed, batches = _feed(60.0, urgent={"/ws/sessions/grown.jsonl"})
    try:
        feed.add("/ws/memory/a.md", "note")
        assert feed.pending
        feed.flush()  # a search that must see every change does not wait a minute
        assert batches.get_nowait() == {"/ws/memory/a.md": "note"}
        kind: Kind = "transcript"
        feed.add("/ws/sessions/grown.jsonl", kind)
        assert batches.get(timeout=5) == {"/ws/sessions/grown.jsonl": "transcript"}
    finally:
        feed.close()
