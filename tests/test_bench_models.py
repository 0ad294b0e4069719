"""bench.models' figures: the strong model's worst cross-language pair, its within-language gap to the default, and
the side-by-side table, from a run's results."""

from __future__ import annotations

from bench import models


def _row(recall: float, mrr: float) -> dict[str, dict[str, float]]:
    return {"hybrid": {"recall@10": recall, "mrr@10": mrr}}


FOUND = {
    "crosslingual": {
        "multilingual-e5-small": {
            "vi->vi": _row(1.0, 0.95),
            "en->en": _row(1.0, 0.96),
            "vi->en": _row(0.94, 0.79),
            "en->vi": _row(0.97, 0.83),
            "en->en+zh": _row(0.99, 0.9),
            "seconds": 12.0,
        },
        "embeddinggemma-300m": {
            "vi->vi": _row(1.0, 0.97),
            "en->en": _row(1.0, 0.95),
            "vi->en": _row(0.99, 0.93),
            "en->vi": _row(0.998, 0.97),
            "en->en+zh": _row(1.0, 0.5),  # notes in two languages: not a cross-language pair
            "seconds": 60.0,
        },
    },
    "locomo": {"embeddinggemma-300m": {"notes": {"hybrid": {"session_r@5": 0.96, "turn_r@5": 0.93}}}},
}


def test_the_headline_takes_the_worst_pair_and_the_worst_within_language_gap() -> None:
    figures = models.headline(FOUND)
    assert figures["EmbeddingGemma cross-lingual hybrid MRR@10, worst pair"] == 0.93
    assert figures["EmbeddingGemma cross-lingual hybrid R@10, worst pair"] == 0.99
    assert figures["EmbeddingGemma within-language hybrid MRR@10 - e5-small's, worst"] == -0.01
    assert figures["EmbeddingGemma locomo notes hybrid session R@5"] == 0.96
    assert figures["EmbeddingGemma scifact hybrid nDCG@10"] is None
    assert set(figures) == set(models.TARGETS)


def test_the_table_puts_the_models_side_by_side() -> None:
    table = "\n".join(models.markdown(FOUND))
    assert "| vi → en | 0.94 / 0.79 | 0.99 / 0.93 |" in table
    assert "| en → en+zh | 0.99 / 0.9 | 1.0 / 0.5 |" in table
    assert "| LoCoMo notes hybrid session R@5 | – | 0.96 |" in table
    assert "SciFact" not in table  # no run measured it
