"""Clients of the memoryd daemon: the Python stub and the memctl CLI. Importable without memoryd."""

from client.stub import (
    ClientError,
    DaemonNotRunning,
    MemoryClient,
    RemoteError,
    RPCTimeout,
    SearchHit,
    SearchResults,
)

__all__ = ["ClientError", "DaemonNotRunning", "MemoryClient", "RPCTimeout", "RemoteError", "SearchHit", "SearchResults"]
