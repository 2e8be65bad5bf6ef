"""Measured results keyed by the content hash of (IR, options): a point measured once is free later.

One SQLite table in ``$LOOM_CACHE_DIR/tune.sqlite`` (default ``~/.cache/loom``), safe for several
processes. The key covers everything that decides the figure: the IR text, the schedule, the
objective's options (argument shapes, repeats) and the machine (CPU model, core count), so a
result measured elsewhere is never reused here.
"""

from __future__ import annotations

import os
import platform
import sqlite3
from pathlib import Path

from loom.tune.space import content_hash, point_key


def machine_id() -> str:
    cpu = ""
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{platform.machine()} {cpu} x{os.cpu_count()}"


class ResultCache:
    def __init__(self, path: str | Path | None = None):
        if path is None:
            root = Path(os.environ.get("LOOM_CACHE_DIR") or Path.home() / ".cache" / "loom")
            root.mkdir(parents=True, exist_ok=True)
            path = root / "tune.sqlite"
        self.path = Path(path)
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value REAL, detail TEXT)")
        self.hits = 0

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    @staticmethod
    def key(ir: str, point: dict, options: dict) -> str:
        return content_hash(ir, point_key(point), point_key(options), machine_id())

    def get(self, key: str) -> tuple[float, str] | None:
        with self._connect() as db:
            row = db.execute("SELECT value, detail FROM results WHERE key = ?", (key,)).fetchone()
        if row is not None:
            self.hits += 1
        return row

    def put(self, key: str, value: float, detail: str = "") -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", (key, value, detail))
