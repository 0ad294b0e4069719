"""A real PostgreSQL 16 with pgvector for tests and benches: the `pgserver` wheel's server as the primary, a
streaming replica made with its `pg_basebackup`, and roles. Started as root, the servers run as the system user
`pgserver` (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import psycopg


def _bin(name: str) -> str:
    import pgserver

    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


class Cluster:
    """A primary (and optionally a replica), each listening on a Unix socket in its own folder only."""

    def __init__(self, root: Path) -> None:
        import pgserver

        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.server = pgserver.get_server(self.root / "primary", cleanup_mode="stop")
        info = psycopg.conninfo.conninfo_to_dict(self.server.get_uri())
        self.socket_dir = str(info["host"])
        self.user = self.server.system_user  # None unless started as root
        self.replica_dir: Path | None = None
        self.replica_socket: str | None = None
        self.port: int | None = None  # a TCP port (serve_tcp), which names the Unix socket too
        self.more_replicas: list[Path] = []  # replicas past the first
        self.sql("CREATE EXTENSION IF NOT EXISTS vector")  # a deployment's one superuser step

    def url(self, role: str = "postgres", *, replica: bool = False) -> str:
        host = self.replica_socket if replica else self.socket_dir
        port = f"&port={self.port}" if self.port and not replica else ""
        return f"postgresql://{role}@/postgres?host={host}{port}"

    def sql(self, statement: str, params: tuple = (), *, replica: bool = False) -> list[tuple]:
        with psycopg.connect(self.url(replica=replica), autocommit=True) as conn:
            cur = conn.execute(statement, params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def role(self, name: str, *, create_schemas: bool = False) -> str:
        """A login role (no password: the sockets trust local users); with `create_schemas`, it may make the
        schemas of the namespaces it writes."""
        if not self.sql("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)):
            self.sql(f'CREATE ROLE "{name}" LOGIN')
        if create_schemas:
            self.sql(f'GRANT CREATE ON DATABASE postgres TO "{name}"')
        return self.url(name)

    def _run(self, *args: str) -> None:
        demote = None
        if self.user is not None:
            entry = pwd.getpwnam(self.user)

            def demote() -> None:
                os.setgid(entry.pw_gid)
                os.setuid(entry.pw_uid)

        subprocess.run(list(args), check=True, capture_output=True, preexec_fn=demote, timeout=60)

    def stop(self) -> None:
        """Stop the primary at once (clients see their connections drop)."""
        self._run(_bin("pg_ctl"), "-D", str(self.root / "primary"), "-m", "immediate", "-w", "stop")

    def start(self) -> None:
        self._run(
            _bin("pg_ctl"), "-D", str(self.root / "primary"), "-o", f'-h "" -k {self.socket_dir}',
            "-l", str(self.root / "primary" / "log"), "-w", "start",
        )  # fmt: skip

    def add_replica(self, name: str = "replica") -> str:
        """A streaming replica of the primary (pg_basebackup -R), started on its own socket; returns its URL. The
        first one is the replica the other methods (promote_replica, stop_replica) act on."""
        folder = self.root / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(mode=0o700)
        if self.user is not None:
            shutil.chown(folder, self.user, self.user)
        self._run(
            _bin("pg_basebackup"),
            "-h",
            self.socket_dir,
            "-U",
            "postgres",
            "-D",
            str(folder),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        for copied in folder.glob(".s.PGSQL.*"):  # the primary's socket lock, copied with its data folder
            copied.unlink()
        self._run(
            _bin("pg_ctl"), "-D", str(folder), "-o", f'-h "" -k {folder} -c hot_standby_feedback=on',
            "-l", str(folder / "log"), "-w", "start",
        )  # fmt: skip
        if self.replica_dir is None or self.replica_dir == folder:
            self.replica_dir, self.replica_socket = folder, str(folder)
        else:
            self.more_replicas.append(folder)
        return f"postgresql://postgres@/postgres?host={folder}"

    def serve_tcp(self, port: int) -> None:
        """Restart the primary listening on 127.0.0.1:`port` too (the Unix socket's name then carries the port)."""
        data = self.root / "primary"
        self._run(
            _bin("pg_ctl"), "-D", str(data), "-o", f"-h 127.0.0.1 -p {port} -k {self.socket_dir}",
            "-l", str(data / "log"), "-w", "restart",
        )  # fmt: skip
        self.port = port

    def promote_replica(self) -> None:
        """Make the replica a primary of its own (it stops following the primary)."""
        assert self.replica_dir is not None
        self._run(_bin("pg_ctl"), "-D", str(self.replica_dir), "-w", "promote")

    def stop_replica(self) -> None:
        assert self.replica_dir is not None
        self._run(_bin("pg_ctl"), "-D", str(self.replica_dir), "-m", "immediate", "-w", "stop")

    def close(self) -> None:
        for folder in [self.replica_dir, *self.more_replicas] if self.replica_dir is not None else []:
            with contextlib.suppress(subprocess.CalledProcessError):
                self._run(_bin("pg_ctl"), "-D", str(folder), "-m", "immediate", "-w", "stop")
        self.server.cleanup()
        if (self.root / "primary" / "postmaster.pid").exists():  # pgserver leaves a server it did not start running
            with contextlib.suppress(subprocess.CalledProcessError):
                self.stop()
