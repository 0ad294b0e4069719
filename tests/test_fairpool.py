"""The RPC workers take turns between connections, cap each one's share, and drop what a departed one queued."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError

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
