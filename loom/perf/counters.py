"""Host-side performance counters for a command, without hardware counters.

These machines have no PMU access (``perf stat`` reports "not supported"), so
counts come from valgrind's cachegrind, a CPU simulator: instructions (Ir),
data-cache references (Dr + Dw), branches (Bc + Bi), first-level data misses
(D1mr + D1mw) and last-level misses (ILmr + DLmr + DLmw). They are exact and
deterministic for a deterministic program, so one valgrind run suffices
(``valgrind_runs`` > 1 takes the median anyway, e.g. for programs whose
allocation addresses change the cache behaviour). The task clock is measured
separately, without valgrind: the median over ``repeats`` runs of the child's
CPU time (user + system, from ``wait4``), with the median wall time beside it.

``exclude_files`` drops the cost of source files (by file name or path
suffix, e.g. ``"model_matmul.c"``) from the counts: cachegrind attributes every count to a
source file when the program is built with ``-g``. Use it to leave out the
in-process accelerator simulator, which on real hardware costs no CPU time.
Commands run with ``LOOM_TIMING=off``: a loom runtime then plays no virtual
timeline, whose clock reads and calibration (at every ``dma_init``) are the
simulation's cost, not the driver's, and would make the counts vary run to run.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterable, Sequence

from loom.errors import LoomError

VALGRIND_HINT = "install it with `apt-get install valgrind`"
CACHEGRIND_FLAGS = ["--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes"]


@dataclass(frozen=True)
class Counters:
    """Counts of one run of a command (medians over the runs taken)."""

    instructions: int
    d_refs: int
    branches: int
    d1_misses: int
    ll_misses: int
    task_clock_s: float
    wall_s: float = 0.0

    def __sub__(self, other: "Counters") -> "Counters":
        """Counts of ``self`` beyond a baseline run (e.g. the harness set-up alone)."""
        return Counters(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def valgrind_path() -> str:
    path = shutil.which("valgrind")
    if path is None:
        raise LoomError(f"valgrind is not installed (needed for host counters); {VALGRIND_HINT}",
                        where="loom.perf.measure")
    return path


def _run_checked(cmd: Sequence[str], what: str, timeout: float | None) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout,
                                env={**os.environ, "LOOM_TIMING": "off"})
    except FileNotFoundError as exc:
        raise LoomError(f"cannot run {cmd[0]!r}: {exc.strerror}", where=what) from None
    except subprocess.TimeoutExpired:
        raise LoomError(f"{' '.join(cmd)} took longer than {timeout} s", where=what) from None
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip()[-2000:]
        raise LoomError(f"{' '.join(cmd)} exited with status {result.returncode}:\n{tail}", where=what)
    return result


def parse_cachegrind(path: Path | str, exclude_files: Iterable[str] = ()) -> dict[str, int]:
    """Event totals of a ``cachegrind.out`` file, minus the lines of excluded files.

    The ``summary:`` line holds the totals in ``events:`` order; per-line
    records follow ``fl=`` (file) headers and may omit trailing zero counts."""
    exclude = tuple(exclude_files)
    events: list[str] = []
    summary: list[int] | None = None
    excluded: list[int] = []
    in_excluded_file = False
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("events:"):
                events = line.split()[1:]
                excluded = [0] * len(events)
            elif line.startswith("summary:"):
                summary = [int(x) for x in line.split()[1:]]
            elif line.startswith("fl="):
                name = line[3:].strip()
                in_excluded_file = any(name == e or name.endswith("/" + e) for e in exclude)
            elif in_excluded_file and line[:1].isdigit():
                for i, count in enumerate(line.split()[1:]):
                    excluded[i] += int(count)
    if not events or summary is None:
        raise LoomError(f"{path} has no 'events:' / 'summary:' line (not a cachegrind output file)",
                        where="loom.perf.parse_cachegrind")
    summary += [0] * (len(events) - len(summary))
    return {name: total - skip for name, total, skip in zip(events, summary, excluded)}


def counters_from_events(events: dict[str, int], task_clock_s: float = 0.0, wall_s: float = 0.0) -> Counters:
    missing = {"Ir", "Dr", "Dw", "Bc", "Bi", "D1mr", "D1mw", "DLmr", "DLmw"} - events.keys()
    if missing:
        raise LoomError(f"cachegrind output lacks events {sorted(missing)}; run with --cache-sim=yes "
                        "--branch-sim=yes", where="loom.perf.counters_from_events")
    return Counters(
        instructions=events["Ir"],
        d_refs=events["Dr"] + events["Dw"],
        branches=events["Bc"] + events["Bi"],
        d1_misses=events["D1mr"] + events["D1mw"],
        ll_misses=events.get("ILmr", 0) + events["DLmr"] + events["DLmw"],
        task_clock_s=task_clock_s,
        wall_s=wall_s,
    )


def cachegrind_events(cmd: Sequence[str], exclude_files: Iterable[str] = (),
                      timeout: float | None = None) -> dict[str, int]:
    """Run ``cmd`` once under cachegrind; its event totals."""
    valgrind = valgrind_path()
    with tempfile.TemporaryDirectory(prefix="loom-cg-") as tmp:
        out = Path(tmp) / "cachegrind.out"
        _run_checked([valgrind, *CACHEGRIND_FLAGS, f"--cachegrind-out-file={out}", *cmd],
                     "valgrind --tool=cachegrind", timeout)
        return parse_cachegrind(out, exclude_files)


def task_clock(cmd: Sequence[str], repeats: int = 5, timeout: float | None = None) -> tuple[float, float]:
    """Median (child CPU seconds, wall seconds) over ``repeats`` plain runs.

    CPU time is user + system time of the reaped child (``RUSAGE_CHILDREN``
    before/after), less noisy than wall time on a shared machine."""
    cpu, wall = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        _run_checked(cmd, "loom.perf.task_clock", timeout)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(cpu), statistics.median(wall)


def measure(cmd: Sequence[str], repeats: int = 5, *, valgrind_runs: int = 1,
            exclude_files: Iterable[str] = (), timeout: float | None = 600.0) -> Counters:
    """Counters of ``cmd``: cachegrind counts (median of ``valgrind_runs`` runs,
    deterministic so 1 is enough) and the median task clock of ``repeats`` runs."""
    if repeats < 1 or valgrind_runs < 1:
        raise LoomError(f"repeats={repeats}, valgrind_runs={valgrind_runs}; each must be >= 1",
                        where="loom.perf.measure")
    if not cmd:
        raise LoomError("empty command", where="loom.perf.measure")
    valgrind_path()
    exclude = tuple(exclude_files)
    runs = [cachegrind_events(cmd, exclude, timeout) for _ in range(valgrind_runs)]
    events = {name: int(statistics.median(run[name] for run in runs)) for name in runs[0]}
    cpu_s, wall_s = task_clock(cmd, repeats, timeout)
    return counters_from_events(events, cpu_s, wall_s)
