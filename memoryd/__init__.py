"""memoryd: a local, always-on memory service for AI agents."""

import os

from memoryd_client import __version__ as __version__  # one version for the daemon and its client

# numpy's OpenBLAS threads spin after every matrix-vector product and steal the cores llama.cpp needs for the
# next query embedding (measured: hybrid search 16.9 ms -> 5.2 ms on 2 cores). One BLAS thread is plenty for
# the exact vector scan. Must be set before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def __getattr__(name: str) -> object:
    """`memoryd.Memory`, imported on first use: clients import this package and must stay light."""
    if name == "Memory":
        from memoryd.library import Memory

        return Memory
    raise AttributeError(f"module 'memoryd' has no attribute {name!r}")
