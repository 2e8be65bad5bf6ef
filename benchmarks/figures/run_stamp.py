"""Which benchmark run a figure's CSV belongs to, so stale files are never reported as results.

Every CSV under the output folder starts with one comment line::

    # loom-bench {"run": "20260101-120000-1a2b3c4d", "time": "2026-01-01T12:00:00+00:00", "command": "..."}

``run`` is the id of the benchmark run: ``$LOOM_BENCH_RUN`` when set (``run_all.py``
sets it for every step), else a fresh id made by the script that writes the file.
``targets.py`` compares it with the current run and reports any other file as STALE.

Output folder: ``$LOOM_FIGURES_OUT``, else ``benchmarks/figures/out`` (git-ignored).
Standard library only: ``run_all.py`` uses it without importing loom.
"""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import shlex
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

RUN_ENV = "LOOM_BENCH_RUN"
OUT_ENV = "LOOM_FIGURES_OUT"
PREFIX = "# loom-bench "
DEFAULT_OUT = Path(__file__).resolve().parent / "out"


def out_dir() -> Path:
    return Path(os.environ.get(OUT_ENV) or DEFAULT_OUT)


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"


def current_run_id() -> str:
    """The run this process writes for: ``$LOOM_BENCH_RUN``, else a new id (kept in the environment,
    so every later file of this process and its children belongs to the same run)."""
    run = os.environ.get(RUN_ENV)
    if not run:
        run = os.environ[RUN_ENV] = new_run_id()
    return run


@dataclass
class Table:
    path: Path
    stamp: dict | None  # None: the file has no run stamp (written before stamps existed, or by hand)
    rows: list[dict[str, str]]


def write_csv(name: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> Path:
    """``OUT/name.csv`` stamped with the current run; written whole or not at all."""
    folder = out_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = {"run": current_run_id(), "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "command": shlex.join([Path(sys.executable).name, *sys.argv])}
    buf = io.StringIO()
    buf.write(PREFIX + json.dumps(stamp) + "\n")
    w = csv.writer(buf)
    w.writerow(headers)
    w.writerows(rows)
    path = folder / f"{name}.csv"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, path)
    return path


def read_csv(name: str) -> Table | None:
    """``OUT/name.csv`` with its stamp, or None when there is no such file."""
    path = out_dir() / f"{name}.csv"
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    stamp = None
    if lines and lines[0].startswith(PREFIX):
        try:
            stamp = json.loads(lines[0][len(PREFIX):])
        except json.JSONDecodeError:
            stamp = None
        lines = lines[1:]
    return Table(path, stamp if isinstance(stamp, dict) else None, list(csv.DictReader(lines)))


def stale_reason(table: Table, run_id: str) -> str | None:
    """Why ``table`` is not from run ``run_id`` (None: it is)."""
    if table.stamp is None:
        return f"{table.path.name} has no run stamp (not written by this run)"
    if table.stamp.get("run") != run_id:
        return (f"{table.path.name} is from run {table.stamp.get('run')} at {table.stamp.get('time')}, "
                f"not the current run {run_id}")
    return None
