"""Clients of the memoryd daemon: the Python stub and the memctl CLI. Importable without memoryd."""

from client.stub import (
    ClientError,
    ConnectError,
    ConnectionLost,
    DaemonNotRunning,
    GetResult,
    MemoryClient,
    RemoteError,
    RequestTooLarge,
    RPCTimeout,
    SearchHit,
    SearchResults,
    UnencodableRequest,
    WriteResult,
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
