"""How should the warm vector matrix be stored and scanned: float32, float16 or int8?

python -m research.matrix [--rows 10000 100000 1000000] [--dims 384] [--blocks 512 1024 8192]

Per size and format: bytes per vector, median time of one full scan for a query, and how many of float32's
top 24 (the candidate pool of a 6-result search) the format finds. `int8` is the daemon's scan (SimSIMD int8
products with the query quantized too, its top rescored against the float32 query, in two halves from
PARALLEL_ROWS); `int8/numpy` turns BLOCK rows at a time back into float32 for a BLAS product, as the daemon did
before. `--blocks` adds numpy scans that convert that many rows at a time.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.harness import median
from memoryd.store.sqlite.matrix import RESCORE_FACTOR, _approximate, _best

POOL = 24
BLOCK = 2048


def _blockwise(stored: np.ndarray, scale: np.ndarray | None, rows: int = BLOCK) -> Callable[[np.ndarray], np.ndarray]:
    def scan(query: np.ndarray) -> np.ndarray:
        out = np.empty(len(stored), dtype=np.float32)
        for start in range(0, len(stored), rows):
            block = stored[start : start + rows].astype(np.float32)
            out[start : start + rows] = block @ query
        return out if scale is None else out * scale

    return scan


def measure(rows: int, dims: int, queries: int = 30, blocks: tuple[int, ...] = ()) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((rows, dims)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    probes = matrix[rng.choice(rows, queries, replace=False)] + 0.05 * rng.standard_normal((queries, dims)).astype(
        np.float32
    )
    scale = np.abs(matrix).max(axis=1) / 127.0
    int8 = np.round(matrix / scale[:, None]).astype(np.int8)
    scale = scale.astype(np.float32)

    def daemon(query: np.ndarray) -> np.ndarray:
        scores = _approximate(int8, scale, rows, query)
        top = _best(scores, POOL * RESCORE_FACTOR)
        scores[top] = (int8[top].astype(np.float32) @ query) * scale[top]
        return scores

    formats: dict[str, tuple[int, Callable[[np.ndarray], np.ndarray]]] = {
        "float32": (4 * dims, lambda q: matrix @ q),
        "float16": (2 * dims, _blockwise(matrix.astype(np.float16), None)),
        "int8": (dims + 4, daemon),
        "int8/numpy": (dims + 4, _blockwise(int8, scale)),
    }
    for rows_at_a_time in blocks:
        formats[f"int8/numpy/{rows_at_a_time}"] = (dims + 4, _blockwise(int8, scale.astype(np.float32), rows_at_a_time))
    exact = [set(np.argpartition(-(matrix @ q), POOL)[:POOL]) for q in probes]
    out: dict[str, Any] = {"rows": rows, "dims": dims}
    for name, (size, scan) in formats.items():
        times, overlap = [], []
        for query, truth in zip(probes, exact, strict=True):
            started = time.perf_counter()
            scores = scan(query)
            times.append(time.perf_counter() - started)
            overlap.append(len(truth & set(np.argpartition(-scores, POOL)[:POOL])) / POOL)
        out[name] = {
            "bytes_per_vector": size,
            "matrix_mb": round(rows * size / 2**20, 1),
            "scan_ms": round(median(times) * 1000, 2),
            f"top{POOL}_overlap": round(float(np.mean(overlap)), 4),
        }
    return out


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog="python -m research.matrix")
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--blocks", type=int, nargs="*", default=[])
    args = parser.parse_args(argv)
    results = [measure(rows, args.dims, blocks=tuple(args.blocks)) for rows in args.rows]
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
