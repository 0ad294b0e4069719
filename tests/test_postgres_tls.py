"""TLS to PostgreSQL with certificates made here: a writer, a standby and its listener reach the server only
through TLS (verify-full, a client certificate whose key is encrypted), the key's passphrase shown nowhere; a
server certificate another authority signed, or no client certificate, is refused with the reason said."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd_client.stub import RemoteError
from tests.conftest import write
from tests.daemon import cleanup, eventually, memctl
from tests.pg import Cluster
from tests.test_postgres import _agent_table, _daemon, _hits, _notes
from tests.test_postgres import cluster as cluster  # the module's PostgreSQL, as test_postgres makes it
from tests.test_postgres_faults import _doctor
from tests.tls import Authority, TlsFront

pytestmark = pytest.mark.slow

PASSPHRASE = "key-pass-7Yq2"


@pytest.fixture
def front(cluster: Cluster, tmp_path: Path) -> Iterator[TlsFront]:
    served = TlsFront(
        Authority(tmp_path / "pki"), next(str(p) for p in Path(cluster.socket_dir).glob(".s.PGSQL.*[0-9]"))
    )
    yield served
    served.close()


def _tls_url(front: TlsFront, authority: Path, cert: Path | None = None, key: Path | None = None) -> str:
    query = f"sslmode=verify-full&sslrootcert={authority}"
    if cert and key:
        query += f"&sslcert={cert}&sslkey={key}&sslpassword={PASSPHRASE}"
    return front.url("postgres", query)


def test_writer_standby_and_listener_work_over_tls_with_client_certificates(
    cluster: Cluster, front: TlsFront, tmp_path: Path
) -> None:
    cert, key = front.authority.issue("postgres", passphrase=PASSPHRASE)
    url = _tls_url(front, front.authority.path, cert, key)
    ws_a = _notes(tmp_path / "a" / "ws")
    ws_b = tmp_path / "b" / "ws"
    shutil.copytree(ws_a, ws_b)
    writer = standby = None
    try:
        writer = _daemon(tmp_path / "a", ws_a, _agent_table("main", ws_a, url, "tls"))
        assert _hits(writer, "valkey")
        standby = _daemon(tmp_path / "b", ws_b, _agent_table("main", ws_b, url, "tls"))
        assert standby.status()["role"] == "standby"
        write(ws_a / "memory" / "tls.md", "# Pangolin\n\nThe pangolin cache moved behind TLS.\n")
        eventually(lambda: _hits(standby, "pangolin"), timeout=10)
        assert front.refused == []  # nothing tried in clear, every handshake passed
        assert len(front.clients) >= 3 and set(front.clients) == {"postgres"}  # each showed the client certificate
        assert writer.status()["sessions"]["primary"] == {"tls": True, "host": "127.0.0.1", "local": True}
        shown = [json.dumps(d.status()) for d in (writer, standby)]
        shown += [_doctor(writer.config), memctl(writer, "status").stdout]
        shown += [p.read_text() for p in tmp_path.rglob("daemon-*.log")]
        assert all(PASSPHRASE not in text for text in shown)
        assert "primary sessions use TLS" in shown[2]
        assert "primary ok, TLS" in shown[3]
    finally:
        for daemon in (standby, writer):
            if daemon is not None:
                cleanup(daemon)


def test_tls_refused_says_why_and_serves_nothing(cluster: Cluster, front: TlsFront, tmp_path: Path) -> None:
    """A server certificate signed by an authority the URL does not trust, then a session without a client
    certificate: searches answer store_unavailable with libpq's reason, doctor says it, nothing is sent in clear."""
    cert, key = front.authority.issue("postgres", passphrase=PASSPHRASE)
    other = Authority(tmp_path / "other", name="another CA")
    ws = _notes(tmp_path / "ws")
    cases = [
        ("untrusted", _tls_url(front, other.path, cert, key), "certificate verify failed"),
        ("uncertified", _tls_url(front, front.authority.path), "requires a valid client certificate"),
    ]
    for name, url, reason in cases:
        daemon = _daemon(tmp_path / name, ws, _agent_table("main", ws, url, name))
        try:
            with daemon.client() as client, pytest.raises(RemoteError) as refused:
                client.search("valkey")
            assert refused.value.code == "store_unavailable", refused.value.message
            assert reason in refused.value.message
            assert daemon.status()["store_health"]["ok"] is False
            doctor = _doctor(daemon.config)
            assert reason in doctor and PASSPHRASE not in doctor + refused.value.message
        finally:
            cleanup(daemon)
    assert cluster.sql(
        "SELECT count(*) FROM pg_namespace WHERE nspname IN ('memoryd_untrusted', 'memoryd_uncertified')"
    ) == [(0,)]
    assert front.clients == []
    assert front.refused[0].startswith("handshake") and "no client certificate" in front.refused
    assert "clear" not in front.refused


def test_doctor_warns_of_sessions_in_clear_to_another_host() -> None:
    from memoryd.store.postgres.checks import live_check

    def said(**sessions: tuple[bool, str, bool]) -> list[tuple[str, str]]:
        state = {"role": "writer", "namespace": "n", "sessions": {}}
        for server, (tls, host, local) in sessions.items():
            state["sessions"][server] = {"tls": tls, "host": host, "local": local}
        return [(level, text) for level, text, _ in live_check(state) if "sessions" in text]

    assert said(primary=(False, "db.example.com", False)) == [
        ("warn", "primary sessions to db.example.com are in clear")
    ]
    assert said(primary=(False, "127.0.0.1", True)) == []  # this machine: nothing on the way to overhear
    assert said(primary=(True, "db1", False), replica=(False, "db2.internal", False)) == [
        ("ok", "primary sessions use TLS"),
        ("warn", "replica sessions to db2.internal are in clear"),
    ]


def test_a_session_is_local_only_on_a_socket_or_a_loopback_address(cluster: Cluster) -> None:
    import psycopg

    from memoryd.store.postgres.liveness import session_of

    with psycopg.connect(cluster.url()) as conn:
        assert session_of(conn) == {"tls": False, "host": cluster.socket_dir, "local": True}
