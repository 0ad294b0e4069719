"""TLS in front of the test PostgreSQL: the `pgserver` wheel's server is built without SSL, so a front end speaks
PostgreSQL's TLS negotiation (an SSLRequest answered 'S', then the handshake, a client certificate required) and
passes the decrypted session on to the server's Unix socket. libpq, in the daemons, does TLS as it would against
any server: verify-full against the certificates made here."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import selectors
import socket
import ssl
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path, passphrase: str | None = None) -> None:
    crypt = serialization.BestAvailableEncryption(passphrase.encode()) if passphrase else serialization.NoEncryption()
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, crypt))
    path.chmod(0o600)  # libpq refuses a key that others may read


@dataclass
class Authority:
    """A certificate authority made for one test, which signs the server's and the clients' certificates."""

    folder: Path
    name: str = "memoryd test CA"
    key: ec.EllipticCurvePrivateKey = field(init=False)
    cert: x509.Certificate = field(init=False)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(self.name))
            .issuer_name(_name(self.name))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        self.path = self.folder / "ca.crt"
        self.path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, common: str, *, server: bool = False, passphrase: str | None = None) -> tuple[Path, Path]:
        """A certificate and its key (encrypted with `passphrase`, if given), as files: a server's names
        127.0.0.1 and localhost; a client's common name is the role it logs in as."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        stem = self.folder / common.replace(" ", "_")
        cert_path, key_path = stem.with_suffix(".crt"), stem.with_suffix(".key")
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, key_path, passphrase)
        return cert_path, key_path


class TlsFront:
    """Listens on 127.0.0.1; each session must negotiate TLS, and is then joined to the PostgreSQL server's Unix
    socket `target`. A client certificate is asked for, and one `authority` did not sign fails the handshake; a
    session without one is refused after the handshake with the FATAL a server's `clientcert=verify-full` (pg_hba)
    sends. Counts what it saw."""

    def __init__(self, authority: Authority, target: str) -> None:
        self.authority = authority
        cert, key = authority.issue("localhost", server=True)
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(authority.path))
        self.context.verify_mode = ssl.CERT_OPTIONAL  # as PostgreSQL asks: refused later, by pg_hba, if absent
        self.context.load_cert_chain(str(cert), str(key))
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.clients: list[str] = []  # the common name of each session's client certificate
        self.refused: list[str] = []  # why a session was not served: in clear, a failed handshake, no certificate
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, role: str, query: str) -> str:
        return f"postgresql://{role}@127.0.0.1:{self.port}/postgres?{query}"

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone does not)
        with contextlib.suppress(OSError):
            self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self._closed:
                conn.close()
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _note(self, where: list[str], what: str) -> None:
        with self._lock:
            where.append(what)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while True:
                head = _read_exactly(conn, 8)
                if head is None:
                    return
                length, code = struct.unpack("!ii", head)
                if length == 8 and code == GSSENC_REQUEST:
                    conn.sendall(b"N")
                    continue
                if length == 8 and code == SSL_REQUEST:
                    break
                self._note(self.refused, "clear")  # a startup message in clear: never served
                return
            conn.sendall(b"S")
            tls = _Tls(conn, self.context)
            try:
                tls.handshake()
            except (ssl.SSLError, OSError, EOFError) as exc:
                self._note(self.refused, f"handshake: {exc}")
                return
            peer = tls.obj.getpeercert() or {}
            common = next((v for rdn in peer.get("subject", ()) for k, v in rdn if k == "commonName"), "")
            if not common:
                self._note(self.refused, "no client certificate")
                with contextlib.suppress(OSError, EOFError, ssl.SSLError):
                    tls.read_startup()
                    tls.send(_fatal("28000", "connection requires a valid client certificate"))
                return
            self._note(self.clients, common)
            with socket.socket(socket.AF_UNIX) as server:
                server.connect(self.target)
                with contextlib.suppress(OSError, EOFError, ssl.SSLError):
                    tls.join(server)


class _Tls:
    """The server side of one TLS session over a socket, through memory buffers (ssl.SSLObject): one thread reads
    and writes both ways without ever blocking on the other direction."""

    def __init__(self, conn: socket.socket, context: ssl.SSLContext) -> None:
        self.conn = conn
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = context.wrap_bio(self.incoming, self.outgoing, server_side=True)

    def _flush(self) -> None:
        if data := self.outgoing.read():
            self.conn.sendall(data)

    def _fill(self) -> None:
        data = self.conn.recv(65536)
        if not data:
            raise EOFError("the client left")
        self.incoming.write(data)

    def handshake(self) -> None:
        while True:
            try:
                self.obj.do_handshake()
                self._flush()
                return
            except ssl.SSLWantReadError:
                self._flush()
                self._fill()

    def send(self, data: bytes) -> None:
        self.obj.write(data)
        self._flush()

    def _decrypted(self) -> bytes:
        """What the records received so far hold (b"" if none is whole yet)."""
        out = b""
        while True:
            try:
                out += self.obj.read(65536)
            except ssl.SSLWantReadError:
                self._flush()  # a record that wants an answer (a key update)
                return out
            except ssl.SSLZeroReturnError:
                raise EOFError("the client closed the session") from None

    def read_startup(self) -> bytes:
        data = self._decrypted()  # the client's last handshake message and its first may come in one read
        while len(data) < 4 or len(data) < struct.unpack("!i", data[:4])[0]:
            self._fill()
            data += self._decrypted()
        return data

    def join(self, server: socket.socket) -> None:
        """Copy both ways until either side ends."""
        if data := self._decrypted():  # sent with the client's last handshake message
            server.sendall(data)
        with selectors.DefaultSelector() as selector:
            selector.register(self.conn, selectors.EVENT_READ, "client")
            selector.register(server, selectors.EVENT_READ, "server")
            while True:
                for key, _ in selector.select():
                    if key.data == "client":
                        self._fill()
                        if data := self._decrypted():
                            server.sendall(data)
                    else:
                        data = server.recv(65536)
                        if not data:
                            return
                        self.send(data)


def _fatal(code: str, message: str) -> bytes:
    """A PostgreSQL ErrorResponse."""
    fields = b"".join(
        kind + value.encode() + b"\0"
        for kind, value in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", code), (b"M", message))
    )
    body = fields + b"\0"
    return b"E" + struct.pack("!i", len(body) + 4) + body


def _read_exactly(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            return None
        data += more
    return data
