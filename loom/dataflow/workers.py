"""Reusable daemon threads for nodes: a graph's nodes start without paying for a new thread each.

Every submitted job runs at once on its own thread (an idle worker, or a new one if none
is idle), so all nodes of a graph still run concurrently; a worker returns to the idle
list when its node ends. Threads are daemons: a node stuck in user code never keeps the
interpreter alive.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_lock = threading.Lock()
_idle: list["_Worker"] = []


class _Worker:
    def __init__(self):
        self.job: Callable[[], None] | None = None
        self.ready = threading.Semaphore(0)
        self.thread = threading.Thread(target=self._loop, name="loom-dataflow-worker", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            self.ready.acquire()
            job, self.job = self.job, None
            try:
                job()  # type: ignore[misc]
            finally:
                with _lock:
                    _idle.append(self)


def submit(job: Callable[[], None]) -> None:
    """Run ``job`` now on a thread of its own (jobs handle their own exceptions)."""
    with _lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    worker.job = job
    worker.ready.release()
