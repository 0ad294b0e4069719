"""Fuse vector and keyword candidates into one ranked list.

Three rules: `weighted` (fixed weights over raw scores), `rrf` (reciprocal rank) and `adaptive`, the default,
which weighs the vector side by how clearly the model singled out its best chunks for this query (see
`vector_confidence`), so a model that does not know a language cannot drown a good keyword ranking.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memoryd.config import QueryConfig
    from memoryd.store.vectors import VectorScan

_NORMAL = NormalDist()
# Trust starts this many standard deviations below the noise ceiling (real distributions are not normal; measured
# over SciFact, XQuAD and LoCoMo with both local models: 0 distrusts good models, 1.5 trusts poor ones).
NOISE_MARGIN = 1.0


@dataclass
class Candidate:
    chunk_id: int
    vector_score: float | None = None  # similarity to the query, when the chunk has a vector (with its windows')
    chunk_score: float | None = None  # the chunk's own cosine, where its windows changed vector_score
    text_score: float | None = None  # BM25 scaled to (0, 1] by the query's best hit
    vector_rank: int | None = None  # 1-based rank among vector candidates
    text_rank: int | None = None  # 1-based rank among keyword candidates
    score: float = 0.0


def _effective_weights(
    vector_weight: float, text_weight: float, has_vector: bool, has_text: bool
) -> tuple[float, float]:
    """A side with no signal for this query (no embeddings, no keyword terms) gives its weight to the other."""
    wv = vector_weight if has_vector else 0.0
    wt = text_weight if has_text else 0.0
    total = wv + wt
    if total == 0:
        return (1.0, 0.0) if has_vector else (0.0, 1.0)
    return wv / total, wt / total


def weighted_fusion(
    candidates: list[Candidate], vector_weight: float, text_weight: float, *, has_vector: bool, has_text: bool
) -> None:
    wv, wt = _effective_weights(vector_weight, text_weight, has_vector, has_text)
    for c in candidates:
        c.score = wv * max(0.0, c.vector_score or 0.0) + wt * (c.text_score or 0.0)


def rrf_fusion(
    candidates: list[Candidate], vector_weight: float, text_weight: float, k: int, *, has_vector: bool, has_text: bool
) -> None:
    """Reciprocal-rank fusion, scaled so that rank 1 on every available side scores 1.0."""
    wv, wt = _effective_weights(vector_weight, text_weight, has_vector, has_text)
    best = (wv + wt) / (k + 1)
    for c in candidates:
        raw = 0.0
        if c.vector_rank is not None:
            raw += wv / (k + c.vector_rank)
        if c.text_rank is not None:
            raw += wt / (k + c.text_rank)
        c.score = raw / best


def noise_ceiling(count: int) -> float:
    """How many standard deviations above the mean the best of `count` unrelated scores is expected to land
    (Blom's approximation of the largest of `count` normal draws: 1.3 for 6 chunks, 3.1 for 600, 4.4 for 100k)."""
    count = max(count, 2)
    return _NORMAL.inv_cdf((count - 0.375) / (count + 0.25))


def vector_margin(scan: VectorScan | None, candidates: list[Candidate]) -> float | None:
    """How many standard deviations the query's best cosine stands past the noise ceiling of the whole index's
    cosine distribution; None where there is no distribution to measure."""
    if scan is None or scan.count < 2 or scan.std <= 1e-9:
        return None
    # the chunks' own cosines: the distribution it is measured against is theirs
    own = (c.vector_score if c.chunk_score is None else c.chunk_score for c in candidates)
    top = max((score for score in own if score is not None), default=scan.mean)
    return (top - scan.mean) / scan.std - noise_ceiling(scan.count)


def vector_confidence(scan: VectorScan | None, candidates: list[Candidate], span: float) -> float:
    """0..1: how far the query's best cosine stands out of the whole index's cosine distribution (in standard
    deviations), against where the best of that many unrelated chunks would land. Scale-free, so it holds for
    any model and any index size: a model that does not know the language scores every chunk alike and earns
    no trust; one that singles out a few chunks earns all of it."""
    margin = vector_margin(scan, candidates)
    if margin is None:
        return 1.0
    return min(1.0, max(0.0, (margin + NOISE_MARGIN) / span))


# The unearned keyword weight moves by the vector side's confidence to this power: below 1 a partly sure model
# takes more than its share, as it still ranks better than stray keyword matches; one that sees nothing
# (confidence 0) takes nothing over (python -m research.crosslingual_study --grid: 1.0, 0.75, 0.5, 0.25, 0; with
# window vectors 0.25 with evidence 0.4-1.0, docs/design.md)
TAKEOVER_POWER = 0.25
# A small index's vector side, scaled from the background's floor (search.background), spans at least this many
# standard deviations of its distribution (python -m bench small, docs/design.md "A small memory": 0 to 3 found the
# same notes and 4 or 5 fewer on LoCoMo; 3 showed a question about none of them the fewest notes of those)
BACKGROUND_WIDTH = 3.0


def adaptive_fusion(
    candidates: list[Candidate],
    vector_weight: float,
    text_weight: float,
    *,
    has_vector: bool,
    has_text: bool,
    scan: VectorScan | None,
    span: float,
    evidence: float | None = None,
    evidence_floor: float = 0.0,
    evidence_span: float = 0.0,
    takeover_power: float = TAKEOVER_POWER,
) -> None:
    """Both sides scaled to 0..1 per query (the keyword side by its best BM25, the vector side min-max over its
    candidates and the background a small index is filled with: search.background), the vector side weighted by
    its confidence; with `evidence_span`, the keyword side weighted by how much of the query its best hit holds,
    the weight it does not earn going to the vector side as far as that is confident (its confidence to
    `takeover_power`). In an index of several languages the evidence is measured per language, by the best hit in
    each (`keyword_reach`): a question holds the words of notes in its own language, and only names and numbers of
    notes in another."""
    if not has_text:  # vector search alone: rank by similarity, as the weighted rule does
        weighted_fusion(candidates, vector_weight, text_weight, has_vector=has_vector, has_text=has_text)
        return
    wv, wt = _effective_weights(vector_weight, text_weight, has_vector, has_text)
    # the weight an unsure vector side does not earn goes to the keyword side: with no confidence at all this is
    # keyword search, and a query nothing matches by keyword stays below min_score
    confidence = vector_confidence(scan, candidates, span)
    wv, wt = wv * confidence, wt + wv * (1.0 - confidence)
    measured = scan is not None and scan.count >= 2 and scan.std > 1e-9  # a confidence, not the default trust
    weighs_evidence = has_vector and measured and evidence is not None and evidence_span > 0

    def weights(held: float | None) -> tuple[float, float]:
        """The sides' weights given the keyword evidence: a question in another language shares only names and
        stray syllables with a note, keyword hits that the scaling to the best hit would present as perfect."""
        if not weighs_evidence or held is None:
            return wv, wt
        earned = min(1.0, max(0.0, (held - evidence_floor) / evidence_span))
        moved = wt * (1.0 - earned) * confidence**takeover_power
        return wv + moved, wt - moved

    overall = weights(evidence)
    reach = keyword_reach(candidates, scan) if weighs_evidence else {}
    per_language = {lang: weights(evidence * share) for lang, share in reach.items() if evidence is not None}
    language = scan.language if scan is not None else {}
    scores = [c.vector_score for c in candidates if c.vector_score is not None]
    floor, top = min(scores, default=0.0), max(scores, default=0.0)
    width = top - floor if top > floor else 1.0
    if scan is not None and scan.floor is not None:
        floor = min(floor, scan.floor)
        width = max(top - floor, BACKGROUND_WIDTH * scan.std) or 1.0  # every cosine alike (a zero query vector)
    for c in candidates:
        v = max(0.0, (c.vector_score - floor) / width) if c.vector_score is not None else 0.0
        vector_part, text_part = per_language.get(language.get(c.chunk_id, ""), overall)
        c.score = vector_part * v + text_part * (c.text_score or 0.0)


def keyword_reach(candidates: list[Candidate], scan: VectorScan | None) -> dict[str, float]:
    """Where the vector side read notes in several languages (memoryd.store.languages): how far keyword search
    reached into each, as its best hit there against its best overall (0 for a language it found nothing in;
    keyword search matches words, so a question finds little in another language but names and numbers)."""
    if scan is None or not scan.scales:
        return {}
    reach = dict.fromkeys(scan.scales, 0.0)
    for c in candidates:
        held = scan.language.get(c.chunk_id)
        if held in reach and c.text_score is not None:
            reach[held] = max(reach[held], c.text_score)
    return reach


def fuse(
    candidates: list[Candidate],
    fusion: str,
    cfg: QueryConfig,
    *,
    has_vector: bool,
    has_text: bool,
    scan: VectorScan | None = None,
    evidence: float | None = None,
) -> None:
    if fusion == "rrf":
        rrf_fusion(candidates, cfg.vector_weight, cfg.text_weight, cfg.rrf_k, has_vector=has_vector, has_text=has_text)
    elif fusion == "weighted":
        weighted_fusion(candidates, cfg.vector_weight, cfg.text_weight, has_vector=has_vector, has_text=has_text)
    else:
        adaptive_fusion(
            candidates,
            cfg.vector_weight,
            cfg.text_weight,
            has_vector=has_vector,
            has_text=has_text,
            scan=scan,
            span=cfg.confidence_span,
            evidence=evidence,
            evidence_floor=cfg.evidence_floor,
            evidence_span=cfg.evidence_span,
        )
