"""Notes in several languages on one scale. A question's cosine is higher against every chunk in its own language
than against any chunk in another, so in an index holding English and Chinese notes a Chinese question ranked all
its Chinese chunks above the English one that answers it. Each language's cosines are mapped onto the scale of
the language the question scores highest on average: the affine map that gives both the same mean and spread
over their chunks (docs/design.md, "Notes in several languages"). An index in one language is left as it is."""

from __future__ import annotations

import numpy as np

MIN_GROUP = 32  # chunks a language needs before its scores are mapped (fewer say little of its spread)

Maps = dict[int, tuple[float, float]]  # language code -> (scale, shift): mapped = scale * cosine + shift


def big_groups(codes: np.ndarray) -> list[int]:
    """The language codes (>= 0; below 0 is unknown) that MIN_GROUP or more of `codes` carry."""
    known = codes[codes >= 0]
    if not len(known):
        return []
    counts = np.bincount(known)
    return [int(code) for code in np.flatnonzero(counts >= MIN_GROUP)]


def language_maps(scores: np.ndarray, codes: np.ndarray, groups: list[int]) -> Maps:
    """Each group's map onto the scale of the group with the highest mean score, from one query's `scores` over
    chunks whose languages are `codes` (the scores' finite entries only). Empty unless two groups can be
    measured."""
    if len(groups) < 2:
        return {}
    finite = np.isfinite(scores)
    stats: dict[int, tuple[float, float]] = {}
    for code in groups:
        members = scores[(codes == code) & finite]
        if len(members) >= MIN_GROUP:
            stats[code] = (float(members.mean()), max(float(members.std()), 1e-6))
    if len(stats) < 2:
        return {}
    reference_mean, reference_spread = max(stats.values(), key=lambda s: s[0])
    maps: Maps = {}
    for code, (mean, spread) in stats.items():
        scale = reference_spread / spread
        maps[code] = (scale, reference_mean - scale * mean)
    return maps


def apply_maps(scores: np.ndarray, codes: np.ndarray, maps: Maps) -> None:
    """Map `scores` in place, each by its language's map (others unchanged)."""
    for code, (scale, shift) in maps.items():
        members = codes == code
        scores[members] = scale * scores[members] + shift
