"""Compile latency of a 256x256x256 matmul kernel.

cold: trace + lower + C compile with empty caches (fresh kernel object, fresh cache dir,
      in-process cache cleared); Python imports are not counted.
warm: the whole call of an already compiled kernel (argument checks, descriptors, ctypes),
      measured on a 1x1x1 call of a dynamic-shape kernel so the matmul work itself is negligible.
Targets (issue 2): cold < 1.5 s, warm call overhead < 20 ms.

    python benchmarks/bench_compile_latency.py [--quick]

``--quick``: one cold compile instead of three, 50 warm calls instead of 200.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

SOURCE = textwrap.dedent(
    """
    from loom import F32, MemRef, kernel, Dim

    @kernel
    def matmul_static(A: MemRef[(256, 256), F32], B: MemRef[(256, 256), F32], C: MemRef[(256, 256), F32]):
        for i in range(256):
            for j in range(256):
                acc = C[i, j]
                for k in range(256):
                    acc = acc + A[i, k] * B[k, j]
                C[i, j] = acc

    M, N, K = Dim("M"), Dim("N"), Dim("K")

    @kernel
    def matmul_dynamic(A: MemRef[(M, K), F32], B: MemRef[(K, N), F32], C: MemRef[(M, N), F32]):
        for i in range(M):
            for j in range(N):
                acc = C[i, j]
                for k in range(K):
                    acc = acc + A[i, k] * B[k, j]
                C[i, j] = acc
    """
)


def _load(directory: Path, tag: str):
    path = directory / f"bench_kernels_{tag}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 cold compile, 50 warm calls")
    quick = ap.parse_args().quick
    import loom.backends.c  # noqa: F401  (imports are not part of the compile latency)
    import loom.passes.recipes  # noqa: F401

    colds = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(1 if quick else 3):
            os.environ["LOOM_CACHE_DIR"] = str(Path(tmp) / f"cache{run}")
            module = _load(Path(tmp), str(run))
            loom.backends.c._LOADED.clear()  # a cold compile: no in-process cache either
            start = time.perf_counter()
            module.matmul_static.compile()
            colds.append(time.perf_counter() - start)
            a, b = np.ones((256, 256), np.float32), np.ones((256, 256), np.float32)
            c = np.zeros((256, 256), np.float32)
            module.matmul_static(a, b, c)
            assert c[0, 0] == 256.0
        dyn = module.matmul_dynamic
        one = np.ones((1, 1), np.float32)
        dyn(one, one, one.copy())
        warms = []
        for _ in range(50 if quick else 200):
            out = np.zeros((1, 1), np.float32)
            start = time.perf_counter()
            dyn(one, one, out)
            warms.append(time.perf_counter() - start)

    cold = statistics.median(colds)
    warm_ms = statistics.median(warms) * 1e3
    print(f"{'measure':40s} {'value':>12s} {'target':>10s}")
    print(f"{'cold trace+lower+compile 256^3 matmul':40s} {cold:10.3f} s {'< 1.5 s':>10s}  {'OK' if cold < 1.5 else 'MISSED'}")
    print(f"{'warm call overhead (1x1x1 call)':40s} {warm_ms:9.3f} ms {'< 20 ms':>10s}  {'OK' if warm_ms < 20 else 'MISSED'}")


if __name__ == "__main__":
    sys.exit(main())
