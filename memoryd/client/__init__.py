"""Clients of the memoryd daemon: the Python stub and memctl. They import only memoryd.protocol and msgpack (click for
memctl's full command line), never the daemon's dependencies. The names below are imported on first use: memctl's
modules live in this package and must not pay for the stub when they do not use it."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memoryd.client.stub import (
        ClientError,
        ConnectError,
        ConnectionLost,
        DaemonNotRunning,
        MemoryClient,
        RemoteError,
        RequestTooLarge,
        RPCTimeout,
        UnencodableRequest,
    )
    from memoryd.protocol.results import GetResult, SearchHit, SearchResults, WriteResult

__all__ = [
    "ClientError",
    "ConnectError",
    "ConnectionLost",
    "DaemonNotRunning",
    "GetResult",
    "MemoryClient",
    "RPCTimeout",
    "RemoteError",
    "RequestTooLarge",
    "SearchHit",
    "SearchResults",
    "UnencodableRequest",
    "WriteResult",
]
_RESULTS = frozenset({"GetResult", "SearchHit", "SearchResults", "WriteResult"})


def __getattr__(name: str) -> object:
    if name in _RESULTS:
        from memoryd.protocol import results

        return getattr(results, name)
    if name in __all__:
        from memoryd.client import stub

        return getattr(stub, name)
    raise AttributeError(f"module 'memoryd.client' has no attribute {name!r}")
