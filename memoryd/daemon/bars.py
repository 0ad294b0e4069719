"""Progress bars on a terminal for the `memoryd` command's long jobs."""

from __future__ import annotations

import sys
from typing import Any

import click


class Bars:
    """A progress bar on stderr per stage of a long job, called as progress(stage, done, total)."""

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        self.bar: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.bar is None or self.bar.label != self.labels[stage]:
            self.finish()
            self.bar = click.progressbar(length=max(total, 1), label=self.labels[stage], file=sys.stderr)
        self.bar.length = max(total, 1)
        self.bar.pos = done
        self.bar.render_progress()

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.render_finish()
            self.bar = None
