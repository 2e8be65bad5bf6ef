"""Quality of the C backend's code: generated kernels vs the same loops written by hand in C.

Both are compiled with the backend's flags (-std=c99 -O3 -fPIC -shared, -fno-tree-vrp -fno-unswitch-loops on gcc,
+ $LOOM_CFLAGS) and
called through ctypes; the figure is the median time ratio ours/hand (target <= 1.10).

    .venv/bin/python benchmarks/bench_c_quality.py [--repeat N] [--quick]

``--quick``: 3 runs per kernel instead of 11 (same sizes: compiling dominates).
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import sys

import numpy as np
from xdsl.context import Context
from xdsl.dialects.affine import Affine
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.parser import Parser

from loom.backends.c import compile_module
from loom.backends.c.compiler import compile_flags, compiler

N = 256
H = W = 2048
sys.path.insert(0, str(Path(__file__).parent))

MATMUL_MLIR = f"""
func.func @matmul(%A: memref<{N}x{N}xf32>, %B: memref<{N}x{N}xf32>, %C: memref<{N}x{N}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {N} : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {{
        %x = memref.load %A[%i, %k] : memref<{N}x{N}xf32>
        %y = memref.load %B[%k, %j] : memref<{N}x{N}xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %a, %p : f32
        scf.yield %s : f32
      }}
      memref.store %acc, %C[%i, %j] : memref<{N}x{N}xf32>
    }}
  }}
  return
}}
"""

MATMUL_HAND = f"""
void matmul(const float *A, const float *B, float *C) {{
  for (long i = 0; i < {N}; i++)
    for (long j = 0; j < {N}; j++) {{
      float acc = 0.0f;
      for (long k = 0; k < {N}; k++)
        acc += A[i * {N} + k] * B[k * {N} + j];
      C[i * {N} + j] = acc;
    }}
}}
"""

_TAPS = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
_LOADS = "\n".join(
    f"        %t{k} = affine.load %I[%y + {dy}, %x + {dx}] : memref<{H}x{W}xf32>" for k, (dy, dx) in enumerate(_TAPS)
)
_SUMS = "\n".join(
    f"        %s{k} = arith.addf %s{k - 1}, %t{k} : f32" if k > 1 else "        %s1 = arith.addf %t0, %t1 : f32"
    for k in range(1, 9)
)
STENCIL_MLIR = f"""
func.func @blur(%I: memref<{H}x{W}xf32>, %O: memref<{H}x{W}xf32>) {{
  %ninth = arith.constant 0.111111111 : f32
  affine.for %y = 1 to {H - 1} {{
    affine.for %x = 1 to {W - 1} {{
{_LOADS}
{_SUMS}
        %r = arith.mulf %s8, %ninth : f32
        affine.store %r, %O[%y, %x] : memref<{H}x{W}xf32>
    }}
  }}
  return
}}
"""

STENCIL_HAND = f"""
void blur(const float *I, float *O) {{
  for (long y = 1; y < {H - 1}; y++)
    for (long x = 1; x < {W - 1}; x++) {{
      float s = I[(y - 1) * {W} + (x - 1)] + I[(y - 1) * {W} + x];
      s += I[(y - 1) * {W} + (x + 1)];
      s += I[y * {W} + (x - 1)];
      s += I[y * {W} + x];
      s += I[y * {W} + (x + 1)];
      s += I[(y + 1) * {W} + (x - 1)];
      s += I[(y + 1) * {W} + x];
      s += I[(y + 1) * {W} + (x + 1)];
      O[y * {W} + x] = s * 0.111111111f;
    }}
}}
"""

# Tile packing, as an accelerator driver stages its operands: every 32x32 tile of a P x P int32 matrix
# copied row by row into a dense staging buffer (memref.copy of a subview; 128-byte rows), REPS times
# so that the call's own cost (descriptors built in Python) stays small.
P, TILE, REPS = 256, 32, 100
PACK_MLIR = f"""
func.func @pack(%A: memref<{P}x{P}xi32>, %out: memref<?xi32>) {{
  %c0 = arith.constant 0 : index
  %t = arith.constant {TILE} : index
  %p = arith.constant {P} : index
  %tp = arith.constant {TILE * P} : index
  %c1 = arith.constant 1 : index
  %reps = arith.constant {REPS} : index
  scf.for %rep = %c0 to %reps step %c1 {{
  scf.for %i = %c0 to %p step %t {{
    scf.for %j = %c0 to %p step %t {{
      %row = arith.muli %i, %p : index
      %rt = arith.muli %j, %t : index
      %off = arith.addi %row, %rt : index
      %src = memref.subview %A[%i, %j] [{TILE}, {TILE}] [1, 1] : memref<{P}x{P}xi32> to memref<{TILE}x{TILE}xi32, strided<[{P}, 1], offset: ?>>
      %dst = memref.reinterpret_cast %out to offset: [%off], sizes: [{TILE}, {TILE}], strides: [{TILE}, 1] : memref<?xi32> to memref<{TILE}x{TILE}xi32, strided<[{TILE}, 1], offset: ?>>
      "memref.copy"(%src, %dst) : (memref<{TILE}x{TILE}xi32, strided<[{P}, 1], offset: ?>>, memref<{TILE}x{TILE}xi32, strided<[{TILE}, 1], offset: ?>>) -> ()
    }}
  }}
  }}
  return
}}
"""

# the hand-written drivers' way (benchmarks/manual/matmul_flows.c pack_block): one libc memcpy per row,
# the row length known at run time
PACK_HAND = f"""
#include <string.h>
static volatile int tile_size = {TILE};
void pack(const int *A, int *out) {{
  const int t = tile_size;
  for (int rep = 0; rep < {REPS}; rep++)
  for (long i = 0; i < {P}; i += t)
    for (long j = 0; j < {P}; j += t)
      for (long r = 0; r < t; r++)
        memcpy(out + i * {P} + j * t + r * t, A + (i + r) * {P} + j, (size_t)t * 4);
}}
"""


def parse(text: str):
    ctx = Context()
    for dialect in (Affine, Arith, Builtin, Func, MemRef, Scf):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def build_hand(source: str, workdir: Path) -> ctypes.CDLL:
    c_path = workdir / "hand.c"
    so_path = workdir / f"hand_{abs(hash(source))}.so"
    c_path.write_text(source)
    subprocess.run([compiler(), *compile_flags(False), str(c_path), "-o", str(so_path), "-lm"], check=True)
    return ctypes.CDLL(str(so_path))


def median_times(fns, repeat: int) -> list[float]:
    """Median time of each function; runs are interleaved so machine noise hits all alike."""
    for fn in fns:
        fn()  # warm up caches and page in the code
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, samples):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [statistics.median(s) for s in samples]


def bench(name, ours, fn_name, hand_source, arrays, repeat, workdir, check=None):
    """``ours``: MLIR text (the loop nest as the frontend emits it) or a compiled loom kernel."""
    if isinstance(ours, str):
        ours = compile_module(parse(ours), sanitize=False).function(fn_name)
    hand = getattr(build_hand(hand_source, workdir), fn_name)
    hand.restype = None
    hand.argtypes = [ctypes.c_void_p] * len(arrays)
    ptrs = [a.ctypes.data for a in arrays]
    outs_ours = [a.copy() for a in arrays]
    ours(*outs_ours)
    hand(*ptrs)
    assert np.allclose(outs_ours[-1], arrays[-1], rtol=1e-6), f"{name}: generated and hand-written C disagree"
    if check is not None:  # an independent reference (numpy) for the result
        assert np.array_equal(outs_ours[-1], check), f"{name}: generated C differs from numpy"
    t_ours, t_hand = median_times([lambda: ours(*arrays), lambda: hand(*ptrs)], repeat)
    return name, t_ours, t_hand


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--quick", action="store_true", help="3 runs per kernel")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 3
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        mm = [rng.standard_normal((N, N), dtype=np.float32) for _ in range(2)] + [np.zeros((N, N), np.float32)]
        rows.append(bench(f"matmul {N}^3 f32", MATMUL_MLIR, "matmul", MATMUL_HAND, mm, args.repeat, workdir))
        img = [rng.standard_normal((H, W), dtype=np.float32), np.zeros((H, W), np.float32)]
        rows.append(bench(f"3x3 stencil {H}x{W} f32", STENCIL_MLIR, "blur", STENCIL_HAND, img, args.repeat, workdir))
        # the same loop nests written in Python with @loom.kernel
        import quality_kernels

        rows.append(bench(f"matmul {N}^3 (Python kernel)", quality_kernels.matmul.compile(), "matmul",
                          MATMUL_HAND, mm, args.repeat, workdir))
        rows.append(bench(f"3x3 stencil (Python kernel)", quality_kernels.blur.compile(), "blur",
                          STENCIL_HAND, img, args.repeat, workdir))
        A = rng.integers(-2**31, 2**31, (P, P), dtype=np.int32)
        tiles = A.reshape(P // TILE, TILE, P // TILE, TILE).transpose(0, 2, 1, 3).ravel()
        rows.append(bench(f"pack {TILE}^2 tiles of {P}^2 i32 x{REPS}", PACK_MLIR, "pack", PACK_HAND,
                          [A, np.zeros(P * P, np.int32)], args.repeat, workdir, check=tiles))
    print(f"flags: {' '.join(compile_flags(False))}   median of {args.repeat} runs")
    print(f"{'kernel':<30} {'ours (ms)':>10} {'hand (ms)':>10} {'ours/hand':>10}")
    for name, t_ours, t_hand in rows:
        ratio = t_ours / t_hand
        flag = "" if ratio <= 1.10 else "  (above 1.10 target)"
        print(f"{name:<30} {t_ours * 1e3:>10.2f} {t_hand * 1e3:>10.2f} {ratio:>10.3f}{flag}")


if __name__ == "__main__":
    main()
