"""The RPC workers take turns between connections, cap each one's share, and drop what a departed one queued."""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError
from pathlib import Path

import pytest

from memoryd.daemon.fairpool import FairPool


def test_a_caller_with_a_long_queue_does_not_delay_another_by_more_than_a_turn() -> None:
    pool = FairPool(1, "t")
    gate = threading.Event()
    order: list[str] = []
    try:
        blocker = pool.submit("flood", gate.wait)
        flood = [pool.submit("flood", order.append, f"flood{i}") for i in range(50)]
        late = pool.submit("late", order.append, "late")
        gate.set()
        late.result(timeout=10)
        for future in flood:
            future.result(timeout=10)
        blocker.result(timeout=10)
    finally:
        pool.shutdown()
    assert order.index("late") <= 1  # at most one flood call (its turn) before the newcomer's


def test_one_caller_never_holds_every_worker() -> None:
    pool = FairPool(3, "t")
    gate = threading.Event()
    started = threading.Semaphore(0)

    def hold() -> None:
        started.release()
        gate.wait()

    try:
        held = [pool.submit("greedy", hold) for _ in range(10)]
        for _ in range(2):
            assert started.acquire(timeout=10)
        assert not started.acquire(timeout=0.3)  # two of three workers at most, the third stays free
        assert pool.submit("other", lambda: "answered").result(timeout=10) == "answered"
        gate.set()
        for future in held:
            future.result(timeout=10)
    finally:
        gate.set()
        pool.shutdown()


def test_a_caller_that_left_has_its_queued_calls_dropped() -> None:
    pool = FairPool(1, "t")
    gate = threading.Event()
    ran: list[int] = []
    started = threading.Event()
    try:
        running = pool.submit("gone", lambda: (started.set(), gate.wait()))
        assert started.wait(10)
        queued = [pool.submit("gone", ran.append, i) for i in range(20)]
        assert pool.drop("gone") == 20
        gate.set()
        running.result(timeout=10)
        for future in queued:
            with pytest.raises(CancelledError):
                future.result(timeout=10)
        assert pool.submit("next", lambda: 1).result(timeout=10) == 1
        assert ran == []
    finally:
        pool.shutdown()


def test_cpu_turns_let_as_many_run_as_there_are_cores_and_waiting_gives_a_turn_up() -> None:
    from memoryd import threads

    cores = threads._cores()
    inside = most = 0
    count_lock = threading.Lock()
    release = threading.Event()
    all_waiting = threading.Barrier(cores + 1)

    def wait_outside() -> None:
        with threads.cpu_turn(), threads.turn_given_up():
            all_waiting.wait(10)
            release.wait(60)

    def work() -> None:
        nonlocal inside, most
        with threads.cpu_turn():
            with count_lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0.05)
            with count_lock:
                inside -= 1

    waiting = [threading.Thread(target=wait_outside) for _ in range(cores)]
    for t in waiting:
        t.start()
    all_waiting.wait(10)  # every turn taken, then given up while waiting
    others = [threading.Thread(target=work) for _ in range(cores * 3)]
    for t in others:
        t.start()
    deadline = time.monotonic() + 5
    for t in others:
        t.join(max(0.0, deadline - time.monotonic()))
    finished = not any(t.is_alive() for t in others)
    release.set()
    for t in [*others, *waiting]:
        t.join(60)
    assert finished  # the waiting threads' turns were free meanwhile
    assert most == cores


def test_the_cores_counted_are_capped_by_the_cgroup_quota(tmp_path: Path) -> None:
    from memoryd import threads

    v2 = tmp_path / "v2"
    (v2 / "team" / "host").mkdir(parents=True)
    (v2 / "team" / "cpu.max").write_text("150000 100000\n")
    (v2 / "team" / "host" / "cpu.max").write_text("max 100000\n")
    own = tmp_path / "cgroup"
    own.write_text("0::/team/host\n")
    assert threads._cgroup_quota(v2, own) == 1.5  # a parent's quota holds its children
    v1 = tmp_path / "v1"
    (v1 / "cpu,cpuacct" / "host").mkdir(parents=True)
    (v1 / "cpu,cpuacct" / "host" / "cpu.cfs_quota_us").write_text("30000\n")
    (v1 / "cpu,cpuacct" / "host" / "cpu.cfs_period_us").write_text("100000\n")
    (v1 / "cpu,cpuacct" / "cpu.cfs_quota_us").write_text("-1\n")
    own.write_text("5:memory:/host\n4:cpu,cpuacct:/host\n0::/\n")
    assert threads._cgroup_quota(v1, own) == 0.3
    own.write_text("4:cpu,cpuacct:/\n")
    assert threads._cgroup_quota(v1, own) is None  # no quota: the affinity alone counts
