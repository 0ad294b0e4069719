"""Vector candidates scored by their windows too: a question often matches one sentence of a chunk, which the
chunk's one vector blurs (memoryd.ingest.windows; docs/design.md, "Vectors for parts of a chunk")."""

from __future__ import annotations

import numpy as np

from memoryd.search.fusion import Candidate
from memoryd.store.interface import MemoryStore
from memoryd.store.vectors import VectorScan


def blend_windows(
    store: MemoryStore,
    query_vector: np.ndarray,
    candidates: dict[int, Candidate],
    weight: float,
    scan: VectorScan | None = None,
) -> None:
    """Each vector candidate's similarity from its own cosine and its best window's (`weight` of it), and the
    vector ranks by that. A chunk that is one window, or whose windows have no vectors yet, keeps its own cosine;
    `chunk_score` keeps the chunk's own where it changed (fusion's confidence is measured on those). A window's
    cosine is read on the scale of `scan`'s hits, as its chunk's is (memoryd.store.languages)."""
    own = {cid: c.vector_score for cid, c in candidates.items() if c.vector_score is not None}
    for chunk_id, matrix in store.window_vectors(list(own)).items():
        if not len(matrix) or matrix.shape[1] != query_vector.shape[0]:
            continue
        best = float((matrix @ query_vector).max())
        if scan is not None:
            best = scan.calibrated(chunk_id, best)
        cand = candidates[chunk_id]
        cand.chunk_score = own[chunk_id]
        cand.vector_score = (1 - weight) * own[chunk_id] + weight * best
    ranked = [c for c in candidates.values() if c.vector_rank is not None]
    ranked.sort(key=lambda c: -(c.vector_score or 0.0))
    for rank, cand in enumerate(ranked, 1):
        cand.vector_rank = rank
