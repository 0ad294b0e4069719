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


def test_cpu_turns_let_as_many_run_as_there_are_cores_and_waiting_gives_a_turn_up() -> None:
    from memoryd import threads

    cores = threads._cores()
    inside = 0
    most = 0
    count_lock = threading.Lock()
    release = threading.Event()
    waiting = threading.Event()

    def work(wait_outside: bool) -> None:
        nonlocal inside, most
        with threads.cpu_turn():
            with count_lock:
                inside += 1
                most = max(most, inside)
            if wait_outside:
                with count_lock:
                    inside -= 1
                with threads.turn_given_up():
                    waiting.set()
                    release.wait(10)
                with count_lock:
                    inside += 1
            else:
                release.wait(0.2)
            with count_lock:
                inside -= 1

    # every turn held by threads waiting outside it: the others still get in
    outside = [threading.Thread(target=work, args=(True,)) for _ in range(cores)]
    for t in outside:
        t.start()
    assert waiting.wait(10)
    others = [threading.Thread(target=work, args=(False,)) for _ in range(cores * 3)]
    for t in others:
        t.start()
    for t in others:
        t.join(10)
    assert not any(t.is_alive() for t in others)
    release.set()
    for t in outside:
        t.join(10)
    assert not any(t.is_alive() for t in outside)
    assert most == cores
