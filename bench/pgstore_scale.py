"""The pgstore bench's parts that reindex and scale (see bench/pgstore.py): an atomic reindex under a steady
search load, then one killed halfway; and search latency at 100k chunks and more through each store, on
bench.scale's index, with `store migrate`'s time and the reindex part on that namespace."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import BenchAgent, start_daemon
from bench.latency import reindex_under_load, search_modes
from bench.pgstore_quality import migrate, pg_lines
from bench.scale import filled
from bench.synthetic import queries as synthetic_queries
from memoryd.store.postgres.schema import RETIRED_MARK, STAGING_MARK, hnsw_graph_bytes, schema_name
from tests.harness import Daemon
from tests.pg import Cluster

# The scale part reindexes under load up to this size (the floor's); a million chunks would take hours here.
REINDEX_UP_TO = 100_000


def reindex(cluster: Cluster, start: Callable[[], Daemon], namespace: str, queries: list[str]) -> dict[str, Any]:
    """An atomic reindex under a steady hybrid search load (failed searches counted), then one killed with SIGKILL
    halfway: after a restart the old index answers and no staging or retired schema is left."""
    daemon = start()
    out: dict[str, Any] = {}
    try:
        daemon.wait_idle()
        out.update(reindex_under_load(daemon, queries))
        chunks = daemon.status()["chunks"]
        with daemon.client(timeout=60) as client:
            client.reindex(wait=False)
        time.sleep(out["seconds"] / 2)
        daemon.stop(signal.SIGKILL)
        daemon = start()
        state = daemon.wait_idle()
        with daemon.client() as client:
            answered = bool(client.search(queries[0], mode="keyword").results)
        schema = schema_name(namespace)
        leftovers = cluster.sql(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s) OR starts_with(nspname, %s)",
            (f"{schema}{STAGING_MARK}", f"{schema}{RETIRED_MARK}"),
        )
        out["killed_mid_reindex"] = {
            "answers_after_restart": answered,
            "chunks_before": chunks,
            "chunks_after": state["chunks"],
            "staging_schemas_left": [r[0] for r in leftovers],
        }
    finally:
        daemon.stop()
    print(f"  reindex {out}", flush=True)
    return out


def held_in_daemon(daemon: Daemon, timeout: float = 1800.0) -> float:
    """Seconds until the daemon holds the postings and the vectors (loaded in the background at start: the server
    ranks until then), so that the searches measured are the steady state's."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        state = daemon.status()
        if state.get("keyword_ranking") == "bm25 (in the daemon)" and state.get("vectors_searched") == "in the daemon":
            return round(time.monotonic() - started, 1)
        time.sleep(0.5)
    raise TimeoutError(f"postings or vectors not held after {timeout} s: {daemon.status()}")


def scale(cluster: Cluster, work: Path, chunks: int, n_queries: int) -> dict[str, Any]:
    """Search latency at `chunks` chunks through each store (bench.scale's index: the real sync with model-free
    vectors, queries embedded by the real model), the migration's time, and a reindex under load in PostgreSQL."""
    out: dict[str, Any] = {"chunks": chunks}
    root, workspace, data = filled(chunks, work, out)
    qs = synthetic_queries(n_queries)
    daemon = start_daemon(workspace, data)
    try:
        dims = int(daemon.wait_idle()["dims"])
        out["sqlite"] = search_modes(daemon, qs, f"[{chunks} sqlite] ")
    finally:
        daemon.stop()
    namespace = f"scale-{chunks}"
    held = cluster.sql("SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema_name(namespace),))[0][0]
    if held and cluster.sql(f'SELECT count(*) FROM "{schema_name(namespace)}".chunks')[0][0] >= chunks:
        out["migrate"] = {"reused": True}  # a kept cluster (--pg-root) that already holds it
    else:
        # as docs/postgresql.md asks of a server whose namespaces pass 450,000 chunks: the HNSW build stays in memory
        memory = max(64 << 20, hnsw_graph_bytes(chunks, dims)) >> 10
        cluster.sql(f"ALTER SYSTEM SET maintenance_work_mem = '{memory}kB'")
        cluster.sql("SELECT pg_reload_conf()")
        out["migrate"] = migrate(daemon, "main", cluster.url(), namespace)
    print(f"  [{chunks}] moved: {out['migrate']}", flush=True)
    agent = [BenchAgent("main", workspace, extra=pg_lines(cluster.url(), namespace))]

    def start() -> Daemon:
        return start_daemon(workspace, root / "data-pg", agents=agent)

    daemon = start()
    try:
        daemon.wait_idle()
        out["postgresql_held_s"] = held_in_daemon(daemon)
        out["postgresql"] = search_modes(daemon, qs, f"[{chunks} pg] ")
    finally:
        daemon.stop()
    one = "1_client"
    out["hybrid_p50_ratio"] = round(
        out["postgresql"]["search_hybrid"][one]["p50_ms"] / out["sqlite"]["search_hybrid"][one]["p50_ms"], 2
    )
    if chunks <= REINDEX_UP_TO:
        out["reindex"] = reindex(cluster, start, namespace, qs)
    return out
