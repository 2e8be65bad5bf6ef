"""Run work on several threads started together, with a tiny switch interval to provoke interleavings."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable


def run_together(work: Callable[[int, int], None], threads: int = 8, rounds: int = 12,
                 before_round: Callable[[], None] | None = None) -> list[str]:
    """``work(thread, round)`` on ``threads`` threads, each round started together (``before_round`` runs
    first, on one thread, while the others wait); the failures as text, in no particular order."""
    failures: list[str] = []
    barrier = threading.Barrier(threads, action=before_round)

    def loop(t: int) -> None:
        for r in range(rounds):
            barrier.wait()
            try:
                work(t, r)
            except Exception as e:  # noqa: BLE001 - any failure is the finding
                failures.append(f"round {r}: {type(e).__name__}: {e}")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the interpreter swaps threads every few bytecodes
    try:
        pool = [threading.Thread(target=loop, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join(timeout=120)
    finally:
        sys.setswitchinterval(old)
    assert not any(th.is_alive() for th in pool), "a thread hung"
    return failures
