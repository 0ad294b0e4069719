"""The pgstore bench's scale-out part on simulated hosts (bench/hosts.py): each daemon with its clients, the primary
and each streaming replica in a CPU quota of its own, all the same size. One daemon (on the primary), then two (the
second reading a replica), then three (the third reading a second replica) serve 8 clients each on SciFact's
namespace; searches per second are added up over the daemons under load.

Every daemon in every run asks questions no daemon was asked before (a daemon keeps the vectors of the questions it
embedded: asked again, they cost it less, and a later run would look faster), and all three run a warm-up load
together first, so that no server's cache is cold in one run and warm in the next."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import hosts
from bench.beir import load
from bench.pgstore_quality import timings
from bench.pgstore_shared import reader
from bench.synthetic import sentences
from tests.harness import Daemon
from tests.pg import Cluster

CLIENTS = 8
PER_LOAD = 600  # questions for one daemon's clients in one run (more than they ask in it)
WARM_UP_SECONDS = 15.0
NAMESPACE = "scifact-main"


def questions(count: int, seed: int = 5) -> list[str]:
    """`count` distinct questions: SciFact's claims, then sentences of its abstracts cut to a question's length."""
    claims = list(load("scifact").queries.values())
    cut = [" ".join(s.split()[:14]) for s in sentences()]
    random.Random(seed).shuffle(cut)
    return list(dict.fromkeys([*claims, *cut]))[:count]


def _loads(daemons: list[Daemon], where: list[hosts.Host], asked: list[Path], seconds: float) -> dict[str, Any]:
    """8 clients on each daemon, each daemon's clients in its host and with questions of their own, started
    together."""
    procs = []
    for daemon, host, queries in zip(daemons, where, asked, strict=True):
        request = {"socket": str(daemon.socket), "queries_file": str(queries), "clients": CLIENTS, "seconds": seconds}
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.hosts", json.dumps(request)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        host.add(proc.pid)
        procs.append(proc)
    throttled = [h.throttled_s() for h in where]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    found = []
    for proc in procs:
        assert proc.stdout is not None
        found.append(json.loads(proc.stdout.read()))
        proc.wait()
    latencies = [x for f in found for x in f["latencies"]]
    return {
        "qps": round(sum(f["searches"] / f["seconds"] for f in found), 2),
        "per_daemon_qps": [round(f["searches"] / f["seconds"], 2) for f in found],
        "failed": sum(f["failed"] for f in found),
        "clients_throttled_s": [round(h.throttled_s() - t, 1) for h, t in zip(where, throttled, strict=True)],
        **timings(latencies),
    }


def scaleout(cluster: Cluster, work: Path, seconds: float, cores: float) -> dict[str, Any]:
    why = hosts.available()
    if why is not None:
        return {"skipped": f"simulated hosts: {why}"}
    folder = Path(tempfile.mkdtemp(prefix="hosts-"))
    pool = questions(PER_LOAD * 9)  # a warm-up and three runs: 1 + 2 + 3 daemons, and 3 warming up
    slices: list[Path] = []
    for n in range(9):
        slices.append(folder / f"questions-{n}.json")
        slices[-1].write_text(json.dumps(pool[n * PER_LOAD : (n + 1) * PER_LOAD]))
    replicas = [cluster.add_replica(f"replica-{n}") for n in (1, 2)]
    servers = [cluster.root / "primary", *(cluster.root / f"replica-{n}" for n in (1, 2))]
    made: list[hosts.Host] = []
    daemons: list[Daemon] = []
    out: dict[str, Any] = {"cores_per_host": cores, "clients_per_daemon": CLIENTS, "seconds": seconds}
    try:
        for number, folder in enumerate(servers):
            host = hosts.Host(["primary", "replica-1", "replica-2"][number], cores)
            host.add(hosts.postmaster(folder))
            made.append(host)
        for number in range(3):
            extra = f'read_url = "{replicas[number - 1]}"\n' if number else ""
            daemon = reader(cluster, work, f"host-{number + 1}", NAMESPACE, extra)
            daemons.append(daemon)
            host = hosts.Host(f"daemon-{number + 1}", cores)
            host.add(daemon.proc.pid)
            made.append(host)
            daemon.wait_idle()
        daemon_hosts = made[3:]
        time.sleep(2)  # the replicas' replay of what the daemons' start wrote
        _loads(daemons, daemon_hosts, slices[:3], WARM_UP_SECONDS)
        used = 3
        for count in (1, 2, 3):
            asked = slices[used : used + count]
            out[f"{count}_daemons"] = _loads(daemons[:count], daemon_hosts[:count], asked, seconds)
            used += count
            print(f"  [hosts] {count} daemon(s): {out[f'{count}_daemons']['qps']} q/s", flush=True)
        one = out["1_daemons"]["qps"]
        out["ratio_2"] = round(out["2_daemons"]["qps"] / one, 2) if one else None
        out["ratio_3"] = round(out["3_daemons"]["qps"] / one, 2) if one else None
        out["servers_throttled_s"] = {h.name: round(h.throttled_s(), 1) for h in made[:3]}
    finally:
        for daemon in daemons:
            daemon.stop()
        for host in made:
            host.close()
    print(f"  scaleout on hosts: {out}", flush=True)
    return out
