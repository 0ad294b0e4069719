"""A thread pool that takes turns between its callers (the RPC connections).

A plain pool runs calls in arrival order: one client that pipelines 64 slow calls puts every other client's
search behind all 64 (10 such clients held every worker for minutes). Here each caller has its own queue and
the workers serve the queues in turn, so a call waits behind at most one call of each other busy caller; a
caller may also hold at most `per_caller` workers at once, and a caller that left has its queued calls dropped."""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any

_Job = tuple[Future, Callable[..., Any], tuple[Any, ...]]


class FairPool:
    def __init__(self, workers: int, name: str, per_caller: int | None = None) -> None:
        self.per_caller = per_caller or max(1, workers - 1)
        self._queues: OrderedDict[Hashable, deque[_Job]] = OrderedDict()
        self._running: dict[Hashable, int] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(workers)]
        for thread in self._threads:
            thread.start()

    def submit(self, caller: Hashable, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("the pool is shut down")
            self._queues.setdefault(caller, deque()).append((future, fn, args))
            self._cond.notify()
        return future

    def drop(self, caller: Hashable) -> int:
        """Cancel the calls `caller` queued that have not started; returns how many."""
        with self._cond:
            queue = self._queues.pop(caller, None)
        for future, _, _ in queue or ():
            future.cancel()
        return len(queue or ())

    def shutdown(self) -> None:
        """Cancel every queued call; running ones finish on their own (the threads are daemons)."""
        with self._cond:
            self._closed = True
            queues, self._queues = list(self._queues.values()), OrderedDict()
            self._cond.notify_all()
        for queue in queues:
            for future, _, _ in queue:
                future.cancel()

    def _next(self) -> tuple[Hashable, _Job] | None:
        """The first caller in turn that has a queued call and a free share of the workers; it goes to the back."""
        for caller, queue in self._queues.items():
            if self._running.get(caller, 0) < self.per_caller:
                job = queue.popleft()
                if queue:
                    self._queues.move_to_end(caller)
                else:
                    del self._queues[caller]
                return caller, job
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    if (picked := self._next()) is not None:
                        break
                    self._cond.wait()
                caller, (future, fn, args) = picked
                self._running[caller] = self._running.get(caller, 0) + 1
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(fn(*args))
                    except BaseException as exc:
                        future.set_exception(exc)
            finally:
                with self._cond:
                    left = self._running[caller] - 1
                    if left:
                        self._running[caller] = left
                    else:
                        del self._running[caller]
                    self._cond.notify()
