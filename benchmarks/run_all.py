"""The issue-4 benchmark set in one command (under 10 minutes by default).

    .venv/bin/python benchmarks/run_all.py [--full]

Default: the full set (every size of the Fig. 12/13 grids, the 11 full-size ResNet18
layers, all six Fig. 14 permutations for --flow auto) with few repetitions.
``--full``: the same set with 5 repetitions and the exhaustive Fig. 14 search.
``--quick``: reduced sizes (the targets printed at the end then say MISSED).
CSV and PNG files go to benchmarks/figures/out/.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable


def steps(full: bool, quick: bool) -> list[list[str]]:
    reps = ["--repeats", "5" if full else "1" if quick else "3"]
    return [
        [str(HERE / "figures" / "coalesce_gain.py"), *reps, *(["--dims", "64,128"] if quick else [])],
        [str(HERE / "figures" / "fig10.py"), "--repeats", "5" if full else "3"],
        [str(HERE / "bench_generated_vs_manual.py"), *reps, *(["--quick"] if quick else [])],
        [str(HERE / "figures" / "fig12.py"), *reps, "--dims", "64" if quick else "64,128,256"],
        [str(HERE / "figures" / "fig14.py"), *(["--exhaustive"] if full else [])],
        [str(HERE / "figures" / "fig16.py"), "--scale", "4" if quick else "1"],
        [str(HERE / "bench_flow_auto.py"), *reps, *(["--quick"] if quick else [])],
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="5 repetitions and the exhaustive Fig. 14 search")
    ap.add_argument("--quick", action="store_true", help="reduced sizes (a smoke run; targets then say MISSED)")
    args = ap.parse_args()
    start = time.perf_counter()
    failed = []
    for cmd in steps(args.full, args.quick):
        t = time.perf_counter()
        print(f"\n=== {' '.join(Path(c).name if c.endswith('.py') else c for c in cmd)}", flush=True)
        rc = subprocess.run([PY, *cmd]).returncode
        print(f"--- {time.perf_counter() - t:.0f} s, exit {rc}", flush=True)
        if rc:
            failed.append(Path(cmd[0]).name)
    print(f"\nall benchmarks: {time.perf_counter() - start:.0f} s" + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    subprocess.run([PY, str(HERE / "figures" / "targets.py")])  # every target, MET / MISSED
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
