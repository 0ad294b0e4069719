"""The memoryd client: the wire protocol, the Python stub, memctl, the agent hooks and the MCP bridge. Its own
distribution (memoryd-client), which the daemon depends on; it never imports the daemon. The names below are
imported on first use: `memctl hook` and `memctl recall` start a process for every prompt, and pay only for the
modules they use."""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memoryd_client.protocol.results import GetResult, SearchHit, SearchResults, WriteResult
    from memoryd_client.stub import (
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
        from memoryd_client.protocol import results

        return getattr(results, name)
    if name in __all__:
        from memoryd_client import stub

        return getattr(stub, name)
    raise AttributeError(f"module 'memoryd_client' has no attribute {name!r}")
