"""Process memory: how much is resident, and giving freed heap back to the operating system."""

from __future__ import annotations

import contextlib
import ctypes
import functools
from pathlib import Path


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only
        return libc
    except (OSError, AttributeError):
        return None  # not glibc (macOS, musl): freed memory goes back on its own terms


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # mallopt parameters (glibc's malloc.h)


def cap_arenas(count: int) -> bool:
    """At most `count` malloc arenas. glibc gives busy threads arenas of their own (up to 8 per core), and what
    a burst of concurrent searches freed in them stays scattered and is hard to hand back. Call before threads
    start. Returns whether the cap was set."""
    return _mallopt(M_ARENA_MAX, count)


def fix_thresholds(mmap_bytes: int, trim_bytes: int) -> bool:
    """Fixed thresholds: blocks of `mmap_bytes` or more get mappings of their own (unmapped when freed), and a
    thread arena's free top is cut back once it passes `trim_bytes`. glibc raises both after the first large
    block is freed (up to 32 and 64 MB), and malloc_trim never cuts a thread arena's top: after a reindex, up to
    50 MB of free top stayed resident in the embedding threads' arena at 100k chunks. Returns whether both held."""
    return _mallopt(M_MMAP_THRESHOLD, mmap_bytes) & _mallopt(M_TRIM_THRESHOLD, trim_bytes)


def _mallopt(param: int, value: int) -> bool:
    libc = _libc()
    if libc is None:
        return False
    with contextlib.suppress(OSError, AttributeError):
        return bool(libc.mallopt(param, value))
    return False


def give_back() -> None:
    """glibc keeps freed heap for reuse (llama.cpp's buffers, SQLite pages, numpy temporaries); hand it back."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(OSError):
            libc.malloc_trim(0)


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident memory of a process in MiB, from /proc (Linux); None where that cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


MADV_DONTNEED = 4  # Linux


def drop_file_pages(path: Path) -> int:
    """Unmap the resident pages of read-only mappings of `path` from this process (Linux); they stay in the
    page cache and come back by a minor fault on the next touch. llama.cpp maps a model with MAP_POPULATE, so the
    whole file is resident at load, though a query reads only the layers and a few rows of the token table.
    Returns the bytes of mappings advised."""
    libc = _libc()
    if libc is None:
        return 0
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return 0
    target = str(path.resolve())
    advised = 0
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[5] != target or "w" in fields[1]:
            continue  # only read-only mappings: they hold nothing that is not in the file
        start, end = (int(part, 16) for part in fields[0].split("-"))
        with contextlib.suppress(OSError, AttributeError):
            if libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_DONTNEED) == 0:
                advised += end - start
    return advised
