"""The local model on a busy machine: query latency and indexing speed with the cores idle and with other
processes keeping every core busy, for OpenMP spin settings (llama.cpp's CPU threads are OpenMP's).

python -m research.contention                       # the daemon's setting against libgomp's default
python -m research.contention --spins default,0,1000,10000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

PROBE = r"""
import json, os, sys, time
from memoryd.config import default_data_dir, default_model_path
from memoryd.embeddings.local import LocalEmbedder
model = LocalEmbedder(default_model_path(default_data_dir()))
queries = [f"what did we decide about the auth tokens, case {i}?" for i in range(150)]
docs = [("The heron dataset moved to a new bucket after the outage review. " * 12) + str(i) for i in range(24)]
model.embed_query("warm up"); model.embed_documents(docs[:2])
times = []
for q in queries:
    started = time.perf_counter(); model.embed_query(q); times.append((time.perf_counter() - started) * 1000)
times.sort()
started = time.perf_counter(); model.embed_documents(docs)
rate = len(docs) / (time.perf_counter() - started)
print(json.dumps({"query_p50_ms": round(times[75], 1), "query_p99_ms": round(times[148], 1),
                  "documents_per_s": round(rate, 2), "spin": os.environ.get("GOMP_SPINCOUNT", "default")}))
"""
BUSY = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"


def probe(spin: str) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("GOMP_SPINCOUNT", None)
    if spin != "default":
        env["GOMP_SPINCOUNT"] = spin
    else:
        env["GOMP_SPINCOUNT"] = "300000"  # libgomp's own default (memoryd would otherwise set its own)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["spin"] = spin
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spins", default="default,1000")
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 1, help="busy processes while loaded")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    spins = args.spins.split(",")
    results: dict[str, Any] = {"idle": [probe(s) for s in spins]}
    burners = [
        subprocess.Popen([sys.executable, "-c", BUSY.format(seconds=60 * len(spins) + 60)]) for _ in range(args.busy)
    ]
    try:
        time.sleep(0.5)
        results["busy"] = [probe(s) for s in spins]
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    for state in ("idle", "busy"):
        for row in results[state]:
            print(
                f"{state:5s} spin={row['spin']:8s} query p50 {row['query_p50_ms']} ms, p99 {row['query_p99_ms']} ms; "
                f"documents {row['documents_per_s']}/s"
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return results


if __name__ == "__main__":
    main()
