"""Keyword search on the scaling curve's index, in-process: the default rule against ranking every chunk that holds
any term (common terms recruiting too), for speed and for how many queries keep the same top 10 by score.

python -m bench.keyword_scale --chunks 1000000      # the index `python -m bench.scale --scales 1000000` builds

Ties are common in the synthetic index (its sections reuse SciFact sentences), so two rankings agree when their
top-10 scores are the same, whichever of the tied chunks they name.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench.beir import CACHE
from bench.synthetic import queries
from memoryd.index.store import Store
from memoryd.search import keyword


def _timed(store: Store, query: str, recruit: float) -> tuple[float, list[float]]:
    keyword.RECRUIT_POSTINGS = recruit  # type: ignore[assignment]
    started = time.perf_counter()
    hits = keyword.keyword_search(store, query, 24)
    return time.perf_counter() - started, [round(h.bm25, 6) for h in hits[:10]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    index = args.workdir / f"scale-fill-{args.chunks}" / "data" / "agents" / "main" / "index.sqlite"
    if not index.exists():
        raise SystemExit(f"no index at {index}: run python -m bench.scale --scales {args.chunks} first")
    default = keyword.RECRUIT_POSTINGS
    store = Store(index)
    qs = queries(args.queries)
    try:
        for query in qs[:20]:  # warm the page caches for both rules
            _timed(store, query, default)
            _timed(store, query, float("inf"))
        times: dict[str, list[float]] = {"default": [], "every term recruits": []}
        same = 0
        for query in qs:  # interleaved, so that both rules see the same machine
            spent, ours = _timed(store, query, default)
            times["default"].append(spent)
            spent, theirs = _timed(store, query, float("inf"))
            times["every term recruits"].append(spent)
            same += ours == theirs
    finally:
        keyword.RECRUIT_POSTINGS = default
        store.close()
    print(f"{store.chunk_count()} chunks, {len(qs)} queries, RECRUIT_POSTINGS {default}")
    for label, values in times.items():
        ordered = sorted(values)
        p50, p99 = statistics.median(ordered) * 1000, ordered[int(0.99 * (len(ordered) - 1))] * 1000
        print(f"  {label:20s} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms")
    print(f"  same top 10 by score: {same}/{len(qs)}")


if __name__ == "__main__":
    main()
