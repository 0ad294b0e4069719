"""Should vectors live in sqlite-vec's vec0 table or in a plain BLOB table, and should KNN run in SQL or in numpy?

python -m research.sqlite_vec [--rows 10000 100000] [--dims 384]

Per size: insert throughput, file size, time to load every vector into memory, and the time of one top-10
query by sqlite-vec's KNN (`MATCH ... AND k = 10`) and by a numpy scan of the float32 matrix.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

from bench.harness import median


def _connect(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def measure(rows: int, dims: int, work: Path, queries: int = 20) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((rows, dims)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    probes = matrix[rng.choice(rows, queries, replace=False)] + 0.01
    out: dict[str, Any] = {"rows": rows, "dims": dims}
    for backend in ("sqlite-vec", "blob"):
        path = work / f"{backend}-{rows}.sqlite"
        conn = _connect(path)
        if backend == "sqlite-vec":
            conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{dims}])")
            insert = "INSERT INTO v(rowid, embedding) VALUES (?, ?)"
            select = "SELECT rowid, embedding FROM v"
        else:
            conn.execute("CREATE TABLE v(id INTEGER PRIMARY KEY, vector BLOB NOT NULL)")
            insert = "INSERT INTO v(id, vector) VALUES (?, ?)"
            select = "SELECT id, vector FROM v"
        started = time.perf_counter()
        for start in range(0, rows, 1000):
            with conn:
                conn.executemany(insert, [(i + 1, matrix[i].tobytes()) for i in range(start, min(rows, start + 1000))])
        insert_s = time.perf_counter() - started
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        started = time.perf_counter()
        blobs = [blob for _, blob in conn.execute(select)]
        loaded = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims)
        load_s = time.perf_counter() - started
        row: dict[str, Any] = {
            "insert_rows_per_s": round(rows / insert_s),
            "file_mb": round(path.stat().st_size / 2**20, 1),
            "load_all_s": round(load_s, 3),
        }
        if backend == "sqlite-vec":
            times = []
            for probe in probes:
                started = time.perf_counter()
                conn.execute(
                    "SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = 10", (probe.tobytes(),)
                ).fetchall()
                times.append(time.perf_counter() - started)
            row["knn_sql_ms"] = round(median(times) * 1000, 2)
        times = []
        for probe in probes:
            started = time.perf_counter()
            scores = loaded @ probe
            np.argpartition(-scores, 10)[:10]
            times.append(time.perf_counter() - started)
        row["knn_numpy_ms"] = round(median(times) * 1000, 2)
        out[backend] = row
        conn.close()
    return out


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog="python -m research.sqlite_vec")
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--dims", type=int, default=384)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-vec-") as tmp:
        results = [measure(rows, args.dims, Path(tmp)) for rows in args.rows]
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
