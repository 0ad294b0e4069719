"""Connecting to the daemon's socket in turn.

A socket with a timeout is non-blocking underneath, and a connect to a Unix socket whose listen queue is full then
fails at once (EAGAIN): the client can only poll, and a process that connects in a loop with a blocking connect
takes every free place before the poller's next try (a recall waited seconds for its connection). A blocking
connect waits in the kernel's queue beside the others; on Linux SO_SNDTIMEO bounds that wait."""

from __future__ import annotations

import _socket
import struct
import sys

BOUNDED_WAIT = sys.platform.startswith("linux")


def _timeval(seconds: float) -> bytes:
    return struct.pack("ll", int(seconds), int(seconds % 1 * 1_000_000))


def queue_connect(sock: _socket.socket, path: str, seconds: float) -> None:
    """Connect, waiting up to `seconds` while the listen queue is full; raises what connect raises (EAGAIN when the
    wait ran out). The socket's timeout is as it was afterwards."""
    previous = sock.gettimeout()
    if not BOUNDED_WAIT:
        sock.settimeout(seconds)
        try:
            sock.connect(path)
        finally:
            sock.settimeout(previous)
        return
    sock.settimeout(None)
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDTIMEO, _timeval(max(seconds, 0.001)))
    try:
        sock.connect(path)
    finally:
        sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDTIMEO, _timeval(0))
        sock.settimeout(previous)
