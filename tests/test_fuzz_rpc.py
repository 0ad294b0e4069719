"""Property-based fuzzing of every RPC method over a real socket: any answer is fine except internal_error."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd_client.protocol.schema import METHODS

from . import daemon as d
from .conftest import write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model

PARAM_NAMES = sorted(
    {
        "query",
        "max_results",
        "min_score",
        "mode",
        "sources",
        "fusion",
        "agent",
        "path",
        "after",
        "before",
        "type",
        "explain",
        "mmr",
        "decay",
        "from",
        "lines",
        "text",
        "importance",
        "force",
        "wait",
        "timeout",
    }
)

packable_ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what msgpack can carry
scalars = (
    st.none()
    | st.booleans()
    | packable_ints
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
    | st.binary(max_size=40)
    | st.sampled_from(["hybrid", "keyword", "vector", "memory", "sessions", "MEMORY.md", "memory/x.md", "main", "*"])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | packable_ints, inner, max_size=4),
    max_leaves=12,
)
named = st.dictionaries(st.sampled_from(PARAM_NAMES) | st.text(max_size=10), values, max_size=6).map(lambda m: [m])
params = named | st.lists(values, max_size=5) | values
methods = st.sampled_from(sorted(METHODS)) | st.text(max_size=12) | packable_ints | st.none()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[d.Daemon]:
    tmp = tmp_path_factory.mktemp("fuzz")
    workspace = tmp / "ws"
    write(workspace / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    write(workspace / "memory" / "x.md", "# X\nThe payment_processor retries three times.\n")
    daemon = d.start(tmp, workspace)
    yield daemon
    d.cleanup(daemon)


class Connection:
    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(str(path))
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)

    def call(self, msgid: int, method: object, params: object) -> list[object]:
        self.sock.sendall(msgpack.packb([0, msgid, method, params], use_bin_type=True))
        while True:
            for message in self.unpacker:
                return message
            data = self.sock.recv(1 << 16)
            assert data, "the daemon closed the connection"
            self.unpacker.feed(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=methods, args=params)
def test_no_rpc_input_is_an_internal_error(running: d.Daemon, method: object, args: object) -> None:
    conn = Connection(running.socket)
    try:
        reply = conn.call(7, method, args)
    finally:
        conn.sock.close()
    assert reply[:2] == [1, 7], reply
    error = reply[2]
    if error is not None:
        assert isinstance(error, dict) and error["code"] != "internal_error", (method, args, error)
    assert running.proc.poll() is None
