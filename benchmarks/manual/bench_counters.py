"""Host counters of the hand-written baseline drivers (the issue-4 bar).

    .venv/bin/python benchmarks/manual/bench_counters.py [--repeats 5] [--quick]

For each configuration: cachegrind counts of the driver alone (the harness's
--baseline run, i.e. input set-up, is subtracted; the simulated accelerator's
files are excluded: on the board that work is the FPGA's), and the median task
clock of the whole run (simulator included: a wall-clock-like figure only).
cachegrind counts are deterministic, so each takes one valgrind run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ -> `import manual`

import manual  # noqa: E402

from loom.perf import measure  # noqa: E402

MATMUL = [  # (version, M, N, K, tile[, harness options]): the paper's Fig. 12 problem (dims 128) on each accelerator
    (1, 128, 128, 128, 16),
    (2, 128, 128, 128, 16),
    (3, 128, 128, 128, 8),
    (3, 128, 128, 128, 16),
    (4, 128, 128, 128, 32),
    (3, 100, 70, 36, 16),
    (2, 128, 128, 128, 16, manual.driver_options("As")),
    (3, 128, 128, 128, 16, manual.driver_options("Bs", coalesce=True)),
    (3, 128, 128, 128, 16, manual.driver_options("Cs", coalesce=True, double_buffer=True)),
]
CONV = [  # (batch, iC, H, W, oC, fHW, stride): ResNet18-like layers, scaled down
    (1, 64, 16, 16, 16, 3, 1),
    (1, 64, 16, 16, 16, 1, 2),
]


def row(label: str, driver, task_clock_s: float) -> str:
    return (f"{label:<34} {driver.instructions:>12,} {driver.d_refs:>11,} {driver.branches:>10,} "
            f"{driver.d1_misses:>9,} {driver.ll_misses:>8,} {task_clock_s * 1e3:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="task-clock runs (median)")
    parser.add_argument("--quick", action="store_true", help="two small configurations, 1 task-clock run")
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
    exclude = manual.SIMULATOR_FILES
    print(f"{'driver (host part)':<34} {'instr':>12} {'d_refs':>11} {'branches':>10} "
          f"{'D1 miss':>9} {'LL miss':>8} {'task ms':>9}")
    configs = [("matmul", c) for c in MATMUL] + [("conv", c) for c in CONV]
    if args.quick:
        configs = [("matmul", (3, 64, 64, 64, 8)), ("conv", (1, 8, 8, 8, 4, 3, 1)),
                   ("matmul", (3, 64, 64, 64, 8, manual.driver_options("Cs", coalesce=True, double_buffer=True)))]
    for kind, c in configs:
        if kind == "matmul":
            v, M, N, K, t, *rest = c
            opts = rest[0] if rest else []
            flow = opts[opts.index("--flow") + 1] if "--flow" in opts else "Ns"
            extra = "".join(f" {o[2]}" for o in opts if o in ("--coalesce", "--double-buffer"))  # c, d
            label = f"v{v}_{t} {flow}{extra} {M}x{N}x{K}"
            run = manual.matmul_command(v, M, N, K, t, "--no-check", *opts)
            base = manual.matmul_command(v, M, N, K, t, "--baseline")
        else:
            label = "conv b{} iC{} {}x{} oC{} f{} s{}".format(*c)
            run, base = manual.conv_command(*c, "--no-check"), manual.conv_command(*c, "--baseline")
        full = measure(run, args.repeats, exclude_files=exclude)
        setup = measure(base, 1, exclude_files=exclude)
        print(row(label, full - setup, full.task_clock_s))


if __name__ == "__main__":
    main()
