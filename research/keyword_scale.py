"""Keyword search on the scaling curve's index, in-process: the default rules against the same ranked with FTS5's
own bm25() in place of bm25_topk (memoryd/store/fts5_topk.c), without the bound that the chunks holding every term
set (MaxScore, see keyword.FTS5_K1), and ranking every chunk that holds any term (common terms recruiting too), for
speed and for how many queries keep the same top 10 by score.

python -m research.keyword_scale --chunks 1000000      # the index `python -m bench.scale --scales 1000000` builds

Ties are common in the synthetic index (its sections reuse SciFact sentences), so two rankings agree when their
top-10 scores are the same, whichever of the tied chunks they name. Short queries (a third of them) are reported
apart: they are the ones the bound serves.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.beir import CACHE
from bench.synthetic import queries
from memoryd.search import keyword
from memoryd.store.sqlite import Store

RULES = ("default", "bm25()", "without the bound", "every term recruits")


@contextmanager
def _rule(store: Store, name: str) -> Iterator[None]:
    recruit, expected = keyword.RECRUIT_POSTINGS, keyword._expected_complete
    store.rank_with_topk = name != "bm25()"
    if name in ("without the bound", "every term recruits"):
        keyword._expected_complete = lambda weighed, chunks: 0.0  # type: ignore[assignment]
    if name == "every term recruits":
        keyword.RECRUIT_POSTINGS = float("inf")  # type: ignore[assignment]
    try:
        yield
    finally:
        keyword.RECRUIT_POSTINGS, keyword._expected_complete = recruit, expected  # type: ignore[assignment]
        store.rank_with_topk = True


def _timed(store: Store, query: str, rule: str) -> tuple[float, list[float]]:
    with _rule(store, rule):
        started = time.perf_counter()
        hits = keyword.keyword_search(store, query, 24)
        return time.perf_counter() - started, [round(h.bm25, 6) for h in hits[:10]]


def _line(label: str, values: list[float]) -> str:
    ordered = sorted(values)
    p50, p99 = statistics.median(ordered) * 1000, ordered[int(0.99 * (len(ordered) - 1))] * 1000
    return f"{label:22s} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  mean {statistics.mean(ordered) * 1000:6.1f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    index = args.workdir / f"scale-fill-{args.chunks}" / "data" / "agents" / "main" / "index.sqlite"
    if not index.exists():
        raise SystemExit(f"no index at {index}: run python -m bench.scale --scales {args.chunks} first")
    store = Store(index)
    if store.ranking_error:
        raise SystemExit(store.ranking_error)
    qs = queries(args.queries)
    times: dict[str, list[float]] = {rule: [] for rule in RULES}
    short: dict[str, list[float]] = {rule: [] for rule in RULES}
    same = dict.fromkeys(RULES[1:], 0)
    try:
        for query in qs[:20]:  # warm the page caches for every rule
            for rule in RULES:
                _timed(store, query, rule)
        for i, query in enumerate(qs):  # interleaved, each rule first in turn: all see the same machine and caches
            top = {}
            for rule in RULES[i % len(RULES) :] + RULES[: i % len(RULES)]:
                spent, top[rule] = _timed(store, query, rule)
                times[rule].append(spent)
                if len(query.split()) <= 2:
                    short[rule].append(spent)
            for rule in RULES[1:]:
                same[rule] += top[rule] == top["default"]
    finally:
        store.close()
    print(f"{store.chunk_count()} chunks, {len(qs)} queries ({len(short['default'])} short), limit 24")
    for rule in RULES:
        print("  " + _line(rule, times[rule]) + ("" if rule == "default" else f"  same top 10: {same[rule]}/{len(qs)}"))
    print("  short queries only:")
    for rule in RULES:
        print("    " + _line(rule, short[rule]))


if __name__ == "__main__":
    main()
