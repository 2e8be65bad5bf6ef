"""Coalescing gain: the same generated driver with and without ``coalesce=True``.

    /work/venv/bin/python benchmarks/figures/coalesce_gain.py

Per (accelerator, flow, dim): send transactions and timing-model total time
without / with coalescing, and the gain (total without / total with).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as C  # noqa: E402

CASES = [("matmul_v3.json", "v3_16", f) for f in ("Ns", "As", "Bs", "Cs")] + \
        [("matmul_v2.json", "v2_8", f) for f in ("As", "Bs")] + [("matmul_v4.json", "v4_16", "Cs")]


def main() -> None:
    headers = ["accel", "flow", "dim", "sends_plain", "sends_coalesced", "total_plain_s", "total_coalesced_s", "gain"]
    rows = []
    for dim in (64, 256):
        arrays = C.matmul_arrays(dim, dim, dim)
        for file, name, flow in CASES:
            out = []
            for co in (False, True):
                drv = C.generated(dim, dim, dim, file, name, flow, coalesce=co)
                stats = drv(*[a.copy() for a in arrays])
                t = C.generated_total(drv, arrays, 3)
                out.append((stats.transfers.sends, t if t is not None else stats.seconds))
            rows.append([name, flow, dim, out[0][0], out[1][0], out[0][1], out[1][1], out[0][1] / out[1][1]])
    C.print_table(headers, rows)
    C.write_csv("coalesce_gain", headers, rows)
    print(f"\ngeomean gain of coalescing (total time): {C.geomean([r[7] for r in rows]):.3f}x; "
          f"send transactions {sum(r[3] for r in rows)} -> {sum(r[4] for r in rows)}")


if __name__ == "__main__":
    main()
