"""Query embeddings under concurrency: one search at a time against eight at once, through the local model.

python -m research.query_lanes [--queries 240] [--clients 8]

One client at a time uses the queries' context with every core, as one context did for every query before the
spare existed (so its rate is also what eight clients got then: they queued for that context). Eight clients at
once spread over it and the single-thread spare. Reports the median latency of one query alone, both rates and
their ratio. Distinct texts throughout: the search engine's query-vector cache is not involved.
"""

from __future__ import annotations

import argparse
import threading
import time

from bench.harness import median
from bench.synthetic import queries
from memoryd.config import default_data_dir, default_model_path
from memoryd.embeddings.local import LocalEmbedder


def rate(embedder: LocalEmbedder, texts: list[str], clients: int) -> float:
    """Queries per second with `clients` threads embedding their share of `texts` at once."""

    def run(k: int) -> None:
        for text in texts[k::clients]:
            embedder.embed_query(text)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(texts) / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=240)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args(argv)
    texts = [f"{q} ({i})" for i, q in enumerate(queries(3 * args.queries))]
    embedder = LocalEmbedder(default_model_path(default_data_dir()))
    try:
        for text in texts[:10]:
            embedder.embed_query(text)
        alone = []
        for text in texts[10:110]:
            started = time.perf_counter()
            embedder.embed_query(text)
            alone.append(time.perf_counter() - started)
        one = rate(embedder, texts[: args.queries], 1)
        many = rate(embedder, texts[args.queries : 2 * args.queries], args.clients)
    finally:
        embedder.close()
    out = {
        "alone_ms": round(median(alone) * 1000, 2),
        "one_client_qps": round(one, 1),
        f"{args.clients}_clients_qps": round(many, 1),
        "ratio": round(many / one, 2),
    }
    print(out)
    return out


if __name__ == "__main__":
    main()
