"""Behaviour-model speed through the DMA path: Python models (words/s) and C models (MAC/s).

Python: the element-wise example accelerator (models/elementwise.py, a numpy model behind ctypes
callbacks) with large tiles, driven by its compiled driver: words sent to the model per second of
driver time (target >= 5 M words/s), and the per-transaction cost with the shipped 4x16 tiles.
C: the shipped v3 MatMul model selected by its description ("builtin:matmul_v3", its own shared
object behind the same vtable), a MatMul run by the compiled driver (target >= 50 M MAC/s).
Results are checked against numpy.

    python benchmarks/bench_models.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from xdsl.parser import Parser

from loom.dialects import context
from loom.driver.compile import compile_driver
from loom.examples import ACCELERATORS_DIR
from loom.examples.accel_kernels import BUILTINS
from xdsl.dialects.builtin import i32

ELEMENTWISE = """builtin.module {
  func.func @ew(%a: memref<?x?xi32>, %b: memref<?x?xi32>, %c: memref<?x?xi32>) {
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                     affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : memref<?x?xi32>, memref<?x?xi32>) outs(%c : memref<?x?xi32>) {
    ^bb0(%x: i32, %y: i32, %z: i32):
      %p = arith.muli %x, %y : i32
      %s = arith.addi %z, %p : i32
      linalg.yield %s : i32
    }
    func.return
  }
}"""


def elementwise_description(folder: Path, ti: int, tj: int) -> Path:
    """The element-wise example with ti x tj tiles (Python model, path made absolute)."""
    desc = json.loads((ACCELERATORS_DIR / "elementwise.json").read_text())
    desc["cpu"] = str(ACCELERATORS_DIR / desc["cpu"])
    entry = desc["accelerators"][0]
    words = ti * tj
    entry["model"] = {"python": str(ACCELERATORS_DIR / "models" / "elementwise.py") + ":ElementWise"}
    entry["tile_sizes"] = {"i": ti, "j": tj}
    entry["buffers"] = {"A": words, "B": words, "C": words}
    entry["dma"]["input_size"] = entry["dma"]["output_size"] = 4 * (2 * words + 64)
    desc["accelerators"] = [entry]
    path = folder / f"ew_{ti}x{tj}.json"
    path.write_text(json.dumps(desc))
    return path


def python_model_rate(folder: Path, ti: int, tj: int, rows: int, cols: int, repeats: int) -> tuple[float, float, bool]:
    """(words/s into the model, seconds per send transaction, result correct) of the best run."""
    drv = compile_driver(Parser(context(), ELEMENTWISE).parse_module(), elementwise_description(folder, ti, tj),
                         "ew_py", "One")
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-100, 100, (rows, cols)).astype(np.int32) for _ in range(2))
    best, ok = None, True
    for _ in range(repeats):
        c = np.zeros((rows, cols), np.int32)
        stats = drv(a, b, c)
        ok = ok and np.array_equal(c, a * b)
        if best is None or stats.seconds < best.seconds:
            best = stats
    assert best is not None
    return best.transfers.words_sent / best.seconds, best.seconds / best.transfers.sends, ok


def c_model_rate(size: int, repeats: int) -> tuple[float, bool]:
    """(MAC/s, result correct) of the builtin:matmul_v3 model on a size^3 MatMul (flow Cs, 16x16 tiles)."""
    b = BUILTINS["matmul"]
    dims = {**b.dims, "M": size, "N": size, "K": size}
    drv = compile_driver(b.build(dims, i32), ACCELERATORS_DIR / "matmul_v3.json", "v3_16", "Cs")
    rng = np.random.default_rng(1)
    x, y = (rng.integers(-100, 100, (size, size)).astype(np.int32) for _ in range(2))
    best, ok = float("inf"), True
    for _ in range(repeats):
        z = np.zeros((size, size), np.int32)
        best = min(best, drv(x, y, z).seconds)
        ok = ok and np.array_equal(z, (x.astype(np.int64) @ y.astype(np.int64)).astype(np.int32))
    return size**3 / best, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller problems, fewer repeats")
    args = parser.parse_args()
    repeats = 2 if args.quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows, cols = (256, 1024) if args.quick else (1024, 2048)
        rate, _, ok = python_model_rate(folder, 64, 256, rows, cols, repeats)
        verdict = "PASS" if rate >= 5e6 and ok else "FAIL"
        print(f"Python model (element-wise, 64x256 tiles, {rows}x{cols}): {rate / 1e6:.1f} M words/s through the "
              f"DMA path, result {'correct' if ok else 'WRONG'} [{verdict}: target >= 5 M words/s]")
        _, per_send, ok = python_model_rate(folder, 4, 16, 64, 256, repeats)
        print(f"Python model (element-wise, 4x16 tiles): {per_send * 1e6:.1f} us per send transaction "
              f"(driver + callback + numpy), result {'correct' if ok else 'WRONG'}")
    size = 128 if args.quick else 512
    rate, ok = c_model_rate(size, repeats)
    verdict = "PASS" if rate >= 50e6 and ok else "FAIL"
    print(f"C model (builtin:matmul_v3, v3_16 flow Cs, {size}^3 int32): {rate / 1e6:.0f} M MAC/s, "
          f"result {'correct' if ok else 'WRONG'} [{verdict}: target >= 50 M MAC/s]")


if __name__ == "__main__":
    main()
