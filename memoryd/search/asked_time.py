"""A question that says when ("last week", "in March", "tuần trước", "上个月", "before the migration") favours the
memories of that time: their scores are raised, when the search found any; a search that found none of that time
is left as it was (a question about "last week" of a conversation held years ago must still find it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memoryd.search.temporal import TimeQuery
from memoryd.store.rows import ChunkRow

IN_TIME = 1.5  # a memory of the time asked about, against the others
DAY = 86_400.0


def boost_asked_time(
    scores: dict[int, float],
    rows: Mapping[int, ChunkRow],
    asked: TimeQuery,
    anchor_time: Callable[[str], float | None],
) -> dict[int, str]:
    """Raise the scores of the candidates dated inside the time asked about; a note per candidate raised."""
    start, end = asked.start, asked.end
    if not asked.has_range and asked.anchor and (asked.anchor_side == "before" or asked.past):
        moment = anchor_time(asked.anchor)
        if moment is None:
            return {}
        day = moment - moment % DAY
        start, end = (None, day) if asked.anchor_side != "after" else (day + DAY, None)
    if start is None and end is None:
        return {}
    inside = [
        cid
        for cid in scores
        if cid in rows and (start is None or rows[cid].when >= start) and (end is None or rows[cid].when < end)
    ]
    if not inside or len(inside) == len(scores):
        return {}
    shown = asked.phrase or f"{asked.anchor_side} {asked.anchor}"
    for cid in inside:
        scores[cid] *= IN_TIME
    return dict.fromkeys(inside, f"in the time asked about ({shown})")
