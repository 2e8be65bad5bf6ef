"""The issue-4 benchmark set in one command (under 10 minutes by default).

    .venv/bin/python benchmarks/run_all.py [--full | --quick]

Default: the full set (every size of the Fig. 12/13 grids, the 11 full-size ResNet18
layers, the TinyBERT layer MatMuls) with few repetitions; ``--flow auto`` against its
exhaustive search on all six Fig. 14 permutations at 1/8 of their sizes (at full size the
exhaustive search alone takes about an hour; that target then reads REDUCED, never MET).
``--full``: 5 repetitions, the exhaustive Fig. 14 search, ``--flow auto`` at the Fig. 14 sizes.
``--quick``: every step in its own ``--quick`` mode (seconds each; the targets then say MISSED).

Each invocation is one benchmark run with a fresh id (``$LOOM_BENCH_RUN``, passed to
every step): the CSV files the steps write carry it, and ``figures/targets.py`` reports
only files of this run (anything else is STALE). Exit status: non-zero when a step
fails (it is named) or a target has no figure from this run.
CSV and PNG files go to ``$LOOM_FIGURES_OUT`` (default benchmarks/figures/out/, git-ignored).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "figures"))

import run_stamp  # noqa: E402

PY = sys.executable
TARGETS = HERE / "figures" / "targets.py"


def steps(full: bool, quick: bool) -> list[list[str]]:
    """The commands of one run (the targets check comes after them)."""
    if quick:
        scripts = ["figures/coalesce_gain.py", "figures/fig10.py", "bench_generated_vs_manual.py", "figures/fig12.py",
                   "figures/fig14.py", "figures/fig16.py", "bench_flow_auto.py", "figures/tinybert.py"]
        return [[str(HERE / s), "--quick"] for s in scripts]
    reps = ["--repeats", "5" if full else "3"]
    return [
        [str(HERE / "figures" / "coalesce_gain.py"), *reps],
        [str(HERE / "figures" / "fig10.py"), *reps],
        [str(HERE / "bench_generated_vs_manual.py"), *reps],
        [str(HERE / "figures" / "fig12.py"), *reps, "--dims", "64,128,256"],
        [str(HERE / "figures" / "fig14.py"), *(["--exhaustive"] if full else [])],
        [str(HERE / "figures" / "fig16.py"), "--scale", "1"],
        [str(HERE / "bench_flow_auto.py"), *reps, *([] if full else ["--scale", "8"])],
        [str(HERE / "figures" / "tinybert.py"), *reps],
    ]


def _label(cmd: list[str]) -> str:
    return " ".join(Path(c).name if c.endswith(".py") else c for c in cmd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true",
                      help="5 repetitions, the exhaustive Fig. 14 search and --flow auto at the Fig. 14 sizes (hours)")
    mode.add_argument("--quick", action="store_true", help="every step's --quick mode (a smoke run; targets MISSED)")
    ap.add_argument("--list", action="store_true", help="print the steps' commands and stop")
    args = ap.parse_args(argv)
    if args.list:
        for cmd in steps(args.full, args.quick):
            print(" ".join(cmd))
        return 0
    run_id = run_stamp.new_run_id()
    env = dict(os.environ, **{run_stamp.RUN_ENV: run_id})
    print(f"benchmark run {run_id}; CSV/PNG in {run_stamp.out_dir()}", flush=True)
    start = time.perf_counter()
    failed = []
    for cmd in steps(args.full, args.quick):
        t = time.perf_counter()
        print(f"\n=== {_label(cmd)}", flush=True)
        rc = subprocess.run([PY, *cmd], env=env).returncode
        print(f"--- {time.perf_counter() - t:.0f} s, exit {rc}", flush=True)
        if rc:
            failed.append(f"{_label(cmd)} (exit {rc})")
    print(f"\nall benchmarks: {time.perf_counter() - start:.0f} s")
    targets_rc = subprocess.run([PY, str(TARGETS), "--run-id", run_id], env=env).returncode
    if failed:
        print(f"run_all: FAILED steps: {'; '.join(failed)}", file=sys.stderr)
    if targets_rc:
        print(f"run_all: targets.py exit {targets_rc}: some targets have no figure from run {run_id}", file=sys.stderr)
    return 1 if failed or targets_rc else 0


if __name__ == "__main__":
    sys.exit(main())
