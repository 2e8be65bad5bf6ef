"""Simulator throughput: a 512^3 int32 MatMul on the simulated v3-16 accelerator.

The tile loops run in a small C driver compiled together with the runtime
(the way generated drivers link), so the figure measures the runtime copies
plus the accelerator model, not Python call overhead. Targets: >= 50 M MAC/s
and < 3 s for the whole MatMul. Also reports the Ns and As flows.

Run: .venv/bin/python benchmarks/bench_simulator.py [--size 512] [--flow Cs] [--quick]

``--quick``: a 128^3 MatMul (the targets are stated for 512^3).
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
from loom.runtime import load_library, memref_descriptor  # noqa: E402

DRIVER_C = r"""
#include <stdint.h>
#include "dma_runtime.h"

typedef struct { int32_t *allocated, *aligned; intptr_t offset, sizes[2], strides[2]; } memref2;

static memref2 tile(memref2 *m, intptr_t r, intptr_t c, intptr_t rows, intptr_t cols) {
  memref2 t = *m;
  t.offset = m->offset + r * m->strides[0] + c * m->strides[1];
  t.sizes[0] = rows, t.sizes[1] = cols;
  return t;
}

static int send(int words) { dma_start_send(words, 0); return dma_wait_send(); }
static int recv(memref2 *c, int acc) {
  dma_start_recv((int)(c->sizes[0] * c->sizes[1]), 0);
  dma_wait_recv();
  return acc ? copy_from_outbuffer_acc_i32(2, c, 0) : copy_from_outbuffer_i32(2, c, 0);
}

/* flow 0 = Cs (m,n,k: ((7 A B) 8 r)), 1 = Ns (m,n,k: (15 A B r+=)), 2 = As (m,k,n: (1 A (14 B r+=))) */
int bench_matmul_v3(memref2 *A, memref2 *B, memref2 *C, int S, int flow) {
  const intptr_t M = A->sizes[0], K = A->sizes[1], N = B->sizes[1];
  if (flow == 2) {
    for (intptr_t m = 0; m < M; m += S)
      for (intptr_t k = 0; k < K; k += S) {
        memref2 a = tile(A, m, k, S, S);
        send(copy_to_inbuffer_i32(2, &a, write_literal(1, 0)));
        for (intptr_t n = 0; n < N; n += S) {
          memref2 b = tile(B, k, n, S, S), c = tile(C, m, n, S, S);
          send(copy_to_inbuffer_i32(2, &b, write_literal(14, 0)));
          recv(&c, 1);
        }
      }
    return loom_dma_error_code();
  }
  for (intptr_t m = 0; m < M; m += S)
    for (intptr_t n = 0; n < N; n += S) {
      memref2 c = tile(C, m, n, S, S);
      for (intptr_t k = 0; k < K; k += S) {
        memref2 a = tile(A, m, k, S, S), b = tile(B, k, n, S, S);
        int off = write_literal(flow == 0 ? 7 : 15, 0);
        off = copy_to_inbuffer_i32(2, &a, off);
        send(copy_to_inbuffer_i32(2, &b, off));
        if (flow == 1) recv(&c, 1);
      }
      if (flow == 0) { send(write_literal(8, 0)); recv(&c, 0); }
    }
  return loom_dma_error_code();
}
"""

FLOWS = {"Cs": 0, "Ns": 1, "As": 2}


def build_driver():
    src = Path(tempfile.gettempdir()) / "loom_bench_simulator_driver.c"
    if not src.exists() or src.read_text() != DRIVER_C:
        src.write_text(DRIVER_C)
    lib = load_library([src], name="loom_bench_simulator")
    lib.bench_matmul_v3.restype = ctypes.c_int
    lib.bench_matmul_v3.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int, ctypes.c_int]
    return lib


def run(lib, size: int, flow: str, tile: int = 16) -> tuple[float, bool]:
    rng = np.random.default_rng(0)
    a = rng.integers(-100, 100, size=(size, size), dtype=np.int32)
    b = rng.integers(-100, 100, size=(size, size), dtype=np.int32)
    c = np.zeros((size, size), dtype=np.int32)
    descs = [memref_descriptor(x) for x in (a, b, c)]
    assert lib.loom_sim_use_model(3, tile, 0) == 0
    assert lib.dma_init(0, 0, 0, 0, 0) == 0
    start = time.perf_counter()
    rc = lib.bench_matmul_v3(*(ctypes.addressof(d) for d in descs), tile, FLOWS[flow])
    elapsed = time.perf_counter() - start
    if rc != 0:
        raise SystemExit(f"driver failed: {lib.loom_dma_last_error().decode()}")
    lib.dma_free()
    ok = np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    return elapsed, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--flow", choices=[*FLOWS, "all"], default="all")
    parser.add_argument("--quick", action="store_true", help="a 128^3 MatMul")
    args = parser.parse_args()
    if args.quick:
        args.size = 128
    lib = build_driver()
    macs = args.size**3
    for flow in FLOWS if args.flow == "all" else [args.flow]:
        elapsed, ok = run(lib, args.size, flow)
        rate = macs / elapsed / 1e6
        verdict = "PASS" if rate >= 50 and elapsed < 3 else "FAIL"
        print(f"v3-16 {flow}: {args.size}^3 int32 MatMul simulated in {elapsed:.3f} s, "
              f"{rate:.0f} M MAC/s, result {'correct' if ok else 'WRONG'} "
              f"[{verdict}: target >= 50 M MAC/s, < 3 s]")


if __name__ == "__main__":
    main()
