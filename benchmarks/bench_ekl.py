"""EKL benchmarks: inverse Helmholtz 11^3 (loom vs numpy.einsum(optimize=True)), the time to
parse + elaborate + lower + compile the RRTMG-style kernel (C compile cache cold and warm), and the
same front half for messner's full plugin_rrtmg_taumol_sw.ekl (36 lets; its cold C compile without --quick).

    python benchmarks/bench_ekl.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def helmholtz(repeat: int) -> None:
    import loom
    from loom.examples.ekl_paths import EKL_EXAMPLES

    kernel = loom.ekl.load(EKL_EXAMPLES["inverse_helmholtz"]).inverse_helmholtz
    rng = np.random.default_rng(0)
    S, D, u = rng.random((11, 11)), rng.random((11,) * 3), rng.random((11,) * 3)
    v = np.zeros((11,) * 3)
    kernel(S, D, u, v)

    def numpy_version():
        t = np.einsum("ia,jb,kc,abc->ijk", S, S, S, u, optimize=True)
        return np.einsum("ai,bj,ck,abc->ijk", S, S, S, D * t, optimize=True)

    err = np.max(np.abs(v - numpy_version())) / np.max(np.abs(v))
    ours = min(timeit.repeat(lambda: kernel(S, D, u, v), number=repeat, repeat=5)) / repeat
    theirs = min(timeit.repeat(numpy_version, number=repeat, repeat=5)) / repeat
    naive = loom.ekl.load(EKL_EXAMPLES["inverse_helmholtz"], factorized=False).inverse_helmholtz.flops
    print(f"inverse Helmholtz 11^3 f64: loom {ours * 1e6:.1f} us, numpy.einsum(optimize=True) {theirs * 1e6:.1f} us, "
          f"speed-up {theirs / ours:.2f}x, max rel. error {err:.2g}")
    print(f"  flops per call: chosen contraction order {kernel.flops}, one loop nest per contraction {naive}")


def compile_time() -> None:
    import loom
    from loom.examples.ekl_paths import EKL_EXAMPLES

    text = EKL_EXAMPLES["rrtmg_major"].read_text()
    loom.ekl.load(text).rrtmg_major.ir("c")  # imports and pass registry warm; the C cache is what differs
    for label in ("cold", "warm"):
        from loom.backends import c as cbackend

        cbackend._LOADED.clear()  # in-process cache off: the on-disk cache decides cold/warm
        started = time.perf_counter()
        loom.ekl.load(text).rrtmg_major.compile()  # cold: first compile into the fresh LOOM_CACHE_DIR
        print(f"RRTMG-style kernel parse + elaborate + lower + compile ({label} C cache): "
              f"{time.perf_counter() - started:.3f} s")


def messner_rrtmg(compile_too: bool) -> None:
    import loom

    path = Path(__file__).resolve().parents[1] / "tests" / "ekl" / "messner" / "plugin_rrtmg_taumol_sw.ekl"
    started = time.perf_counter()
    kernel = loom.ekl.load(path).kernel()
    kernel.ir("linalg")
    front = time.perf_counter() - started
    print(f"messner plugin_rrtmg_taumol_sw.ekl: parse + elaborate + esn + linalg {front:.3f} s "
          f"({len(kernel.form.lets)} lets)")
    if compile_too:
        started = time.perf_counter()
        kernel.compile()
        print(f"  lower to C + cold C compile: {time.perf_counter() - started:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    os.environ["LOOM_CACHE_DIR"] = tempfile.mkdtemp(prefix="loom-bench-ekl-")  # so the first compile is cold
    helmholtz(50 if args.quick else 500)
    compile_time()
    messner_rrtmg(compile_too=not args.quick)


if __name__ == "__main__":
    main()
