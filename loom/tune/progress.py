"""A one-line progress bar for long runs: done/total, points per second, ETA, failures."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str, enabled: bool = True, stream=None, every: float = 0.5):
        self.total, self.label, self.enabled = total, label, enabled
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.done = self.failed = 0
        self.every = every
        self._last = 0.0

    def advance(self, failed: bool = False, note: str = "") -> None:
        self.done += 1
        self.failed += failed
        now = time.perf_counter()
        if self.enabled and (now - self._last >= self.every or self.done == self.total):
            self._last = now
            self.stream.write("\r" + self.line(note))
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self, note: str = "") -> str:
        rate = self.rate
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        text = (f"{self.label} [{bar}] {self.done}/{self.total} {rate:.1f} points/s ETA {eta:.0f} s"
                f" failed {self.failed}")
        return text + (f"  {note}" if note else "")
