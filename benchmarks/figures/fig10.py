"""Paper Fig. 10: CPU only vs accelerator offload, square matmul dims 16..256, v3 sizes 4/8/16.

    .venv/bin/python benchmarks/figures/fig10.py [--repeats N] [--quick]

CPU: loom's C backend matmul kernel (linalg -> loops -> C, -O3), median wall time on
this host. Accelerator: the generated v3 driver (C-stationary flow, coalesced),
timing-model total (host copies + DMA + compute + waiting on the modelled board).
The two run on different machines (this host vs the modelled PYNQ-Z2 system), so
the crossover is indicative, as in the paper's figure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as C  # noqa: E402


def cpu_seconds(dim: int, arrays, repeats: int) -> float:
    return C.cpu_matmul_seconds(dim, dim, dim, arrays, repeats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="dims 16 and 32, 1 repetition")
    args = ap.parse_args()
    dims = (16, 32) if args.quick else (16, 32, 64, 128, 256)
    if args.quick:
        args.repeats = 1
    headers = ["dim", "cpu_s", "v3_4_s", "v3_8_s", "v3_16_s", "speedup_4", "speedup_8", "speedup_16"]
    rows = []
    for dim in dims:
        arrays = C.matmul_arrays(dim, dim, dim)
        cpu = cpu_seconds(dim, arrays, args.repeats)
        acc = []
        for size in (4, 8, 16):
            drv = C.generated(dim, dim, dim, "matmul_v3.json", f"v3_{size}", "Cs", coalesce=True)
            t = C.generated_total(drv, arrays, 1)
            acc.append(t if t is not None else drv(*[a.copy() for a in arrays]).seconds)
        rows.append([dim, cpu, *acc, *(cpu / t for t in acc)])
        print(f"  dim {dim}: cpu {cpu * 1e3:.3f} ms, accel " + ", ".join(f"{t * 1e3:.3f}" for t in acc) + " ms",
              flush=True)
    C.print_table(headers, rows)
    C.write_csv("fig10", headers, rows)
    C.bar_plot("fig10", "CPU only vs accelerator (v3, sizes 4/8/16)", [str(r[0]) for r in rows],
               {"cpu": [r[1] * 1e3 for r in rows], "v3_4": [r[2] * 1e3 for r in rows],
                "v3_8": [r[3] * 1e3 for r in rows], "v3_16": [r[4] * 1e3 for r in rows]}, "ms", log_scale=True)


if __name__ == "__main__":
    main()
