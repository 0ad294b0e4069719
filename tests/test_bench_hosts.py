"""bench.hosts holds a simulated host's processes, and those they start later, to its CPU quota, and gives them back
to the machine when it closes."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from bench import hosts

pytestmark = pytest.mark.skipif(hosts.available() is not None, reason=f"no simulated hosts here: {hosts.available()}")

BUSY = "import subprocess, sys; child = subprocess.Popen([sys.executable, '-c', 'while True: pass']); child.wait()"


def test_a_host_holds_a_process_and_its_children_to_its_quota() -> None:
    parent = subprocess.Popen([sys.executable, "-c", BUSY])
    host = hosts.Host("test-quota", 0.05)
    try:
        time.sleep(0.5)  # the child is started
        host.add(parent.pid)
        held = set(host.pids())
        assert parent.pid in held
        assert len(held) >= 2  # the spinning child too
        deadline = time.monotonic() + 10
        while host.throttled_s() == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert host.throttled_s() > 0  # a spinning process at 5% of a core waits for its quota
    finally:
        host.close()
        for pid in hosts.descendants(parent.pid)[::-1]:
            subprocess.run(["kill", "-9", str(pid)], check=False)
        parent.wait()
    assert not host.path.exists()


def test_a_servers_pid_is_read_from_its_data_folder(tmp_path) -> None:
    (tmp_path / "postmaster.pid").write_text("4242\n/var/lib/pg\n1700000000\n")
    assert hosts.postmaster(tmp_path) == 4242
