"""Clients of the memoryd daemon: the Python stub and memctl. They import only memoryd.protocol and msgpack (click for
memctl's full command line), never the daemon's dependencies."""

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
