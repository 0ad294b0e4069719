"""The PostgreSQL store beside the SQLite store, in one run, through real daemons and a real PostgreSQL 16.

python -m bench.pgstore                                   # every part
python -m bench.pgstore --parts quality --sets scifact,xquad-zh
python -m bench.pgstore --parts freshness,replica-freshness,failover --writes 100

- quality: each shared set is indexed by a daemon on the SQLite store (the default model) and queried keyword and
  hybrid; then moved with `memoryd store migrate` (its embedding cache comes along: nothing is embedded again) and
  queried the same way through a daemon on the PostgreSQL store. Also: each side's per-query latency.
- freshness: a note written through daemon A, searched for through daemon B (standing by on the same namespace)
  every 10 ms until found.
- replica-freshness: the same, found through daemon C, which searches a streaming replica, while A's embedding lane
  works through a backlog of 400 SciFact abstracts.
- failover: the writer killed with SIGKILL while a new note lands in both clones of the folder; time until the
  standby holds the lock, and until it finds the note.
- scaleout: on simulated hosts (bench/pgstore_hosts.py: a CPU quota each for every daemon with its clients, the
  primary and two streaming replicas), 8 clients on one daemon, then on each of two and three (each past the first
  reading a replica of its own), on SciFact; where hosts cannot be simulated (not root, no cgroup v1 cpu
  controller), on one daemon and two sharing the machine's cores.
- reindex: an atomic reindex of SciFact's namespace under a steady search load (failed searches counted), then
  one killed with SIGKILL halfway: the old index must still answer and no staging schema be left.
- scale: keyword and hybrid latency (1 client, 8 clients) at 100k chunks through each store, on bench.scale's
  index (the real sync, model-free vectors, queries embedded by the real model), `store migrate`'s time, and the
  reindex part on that namespace.

The parts live in bench/pgstore_quality.py, bench/pgstore_shared.py (freshness, failover, scaleout) and
bench/pgstore_scale.py (reindex, scale); this module runs them and reports."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench.beir import CACHE, load
from bench.pgstore_hosts import scaleout as on_hosts
from bench.pgstore_quality import MODES, quality
from bench.pgstore_scale import reindex, scale
from bench.pgstore_shared import failover, freshness, reader, replica_freshness, scaleout
from tests.pg import Cluster

SETS = "scifact,xquad-vi,xquad-en,xquad-zh,xquad-th,locomo"
PARTS = "quality,freshness,replica-freshness,failover,scaleout,reindex,scale"


def _gaps(quality_part: dict[str, Any]) -> list[float]:
    gaps = []
    for row in quality_part.values():
        for mode in MODES:
            ours, theirs = row["sqlite"][mode], row["postgresql"][mode]
            gaps += [abs(ours[k] - theirs[k]) for k in ours if "@" in k and k in theirs]
    return gaps


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part (absent ones None)."""
    gaps = _gaps(found.get("quality", {}))
    fresh = found.get("freshness", {}).get("write_on_a_found_on_b", {})
    replica = found.get("replica_freshness", {}).get("write_on_a_found_on_c_through_replica", {})
    indexed = found.get("failover", {}).get("standby_indexes_new_note_s") or []
    reindexes = [found.get("reindex")] + [row.get("reindex") for row in found.get("scale", {}).values()]
    failed = [r["searches_failed"] for r in reindexes if r and "searches_failed" in r]
    return {
        "pg quality: largest gap to SQLite": round(max(gaps), 4) if gaps else None,
        "pg write on A found on B p95 s": round(fresh["p95_ms"] / 1000, 3) if fresh else None,
        "pg write on A found through a replica, embedding backlog, p95 s": (
            round(replica["p95_ms"] / 1000, 3) if replica else None
        ),
        "pg failover: standby indexes a new note s": max(indexed) if indexed else None,
        "pg 2 daemons / 1 daemon q/s": found.get("scaleout", {}).get("ratio_2", found.get("scaleout", {}).get("ratio")),
        "pg 3 daemons / 1 daemon q/s": found.get("scaleout", {}).get("ratio_3"),
        "pg searches failed during a reindex": sum(failed) if failed else None,
        **{
            f"pg / sqlite hybrid p50 @{row['chunks']}": row.get("hybrid_p50_ratio")
            for row in sorted(found.get("scale", {}).values(), key=lambda row: row["chunks"])
        },
        **{
            f"pg / sqlite hybrid q/s @{row['chunks']}, 8 clients": _throughput_ratio(row)
            for row in sorted(found.get("scale", {}).values(), key=lambda row: row["chunks"])
        },
    }


def _throughput_ratio(row: dict[str, Any]) -> float | None:
    """PostgreSQL's hybrid searches per second with 8 clients over SQLite's, on the same index."""
    try:
        ours, theirs = (row[store]["search_hybrid"]["8_clients"]["qps"] for store in ("postgresql", "sqlite"))
    except (KeyError, TypeError):
        return None
    return round(ours / theirs, 2) if theirs else None


def markdown(found: dict[str, Any]) -> list[str]:
    """bench report's section: quality and latency side by side, then the rest as measured."""
    lines = [
        "## PostgreSQL store beside SQLite (`python -m bench pgstore`)",
        "",
        "| set | mode | metric | SQLite | PostgreSQL | gap | p50 ms SQLite | p50 ms PostgreSQL |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in found.get("quality", {}).items():
        for mode in MODES:
            ours, theirs = row["sqlite"][mode], row["postgresql"][mode]
            for metric in (k for k in ours if "@" in k):
                lines.append(
                    f"| {name} | {mode} | {metric} | {ours[metric]} | {theirs[metric]} | "
                    f"{round(theirs[metric] - ours[metric], 4)} | {ours['p50_ms']} | {theirs['p50_ms']} |"
                )
    rest = {k: v for k, v in found.items() if k != "quality"}
    moved = {name: row.get("migrate") for name, row in found.get("quality", {}).items()}
    if moved:
        rest["migrate"] = moved
    if rest:
        lines += ["", "```json", json.dumps(rest, indent=2, ensure_ascii=False), "```"]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default=PARTS)
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long each scale-out load runs")
    parser.add_argument("--cores", type=float, default=0.3, help="each simulated host's CPU quota, in cores")
    parser.add_argument("--scales", default="100000", help="index sizes of the scale part")
    parser.add_argument("--queries", type=int, default=300, help="queries per mode in the scale part")
    parser.add_argument("--workdir", type=Path, default=CACHE)
    parser.add_argument("--pg-root", type=Path, help="keep the PostgreSQL cluster here (reused by the next run)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    root = args.pg_root or Path(tempfile.mkdtemp(prefix="pgb-", dir="/tmp"))
    cluster = Cluster(root)
    out: dict[str, Any] = {}
    try:
        sets = args.sets.split(",") if "quality" in parts else []
        if ("scaleout" in parts or "reindex" in parts) and "scifact" not in sets:
            sets.append("scifact")  # their load runs on SciFact's namespace, which the quality part makes
        if sets:
            out["quality"] = quality(cluster, args.workdir, sets)
        if "freshness" in parts:
            out["freshness"] = freshness(cluster, args.workdir, args.writes)
        if "replica-freshness" in parts:
            out["replica_freshness"] = replica_freshness(cluster, args.workdir, args.writes)
        if "failover" in parts:
            out["failover"] = failover(cluster, args.workdir, args.trials)
        if "scaleout" in parts:
            found = on_hosts(cluster, args.workdir, args.seconds, args.cores)
            if "skipped" in found:  # the machine's cores shared instead
                found = {**scaleout(cluster, args.workdir, args.seconds), **found}
            out["scaleout"] = found
        if "reindex" in parts:
            scifact = list(load("scifact").queries.values())
            out["reindex"] = reindex(
                cluster, lambda: reader(cluster, args.workdir, "reindex", "scifact-main"), "scifact-main", scifact
            )
        if "scale" in parts:
            out["scale"] = {n: scale(cluster, args.workdir, int(n), args.queries) for n in args.scales.split(",")}
    finally:
        cluster.close()
        if args.pg_root is None:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
