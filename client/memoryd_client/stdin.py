"""Standard input read to a deadline: `memctl recall -` and the hooks read their input this way, so that a writer
that never closes its end holds them no longer than their time limit."""

from __future__ import annotations

import os
import select
import sys
import time


def read_stdin(deadline: float, limit: int) -> bytes:
    """Standard input up to its end, or `limit` + 1 bytes (the caller sees it is over); TimeoutError at `deadline`
    (time.monotonic()), and b"" from a terminal or no stdin at all."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    if os.isatty(fd):
        return b""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
        except BlockingIOError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
