"""The linalg kernels (MLIR text, dynamic shapes) the example accelerators run, and numpy references."""

from __future__ import annotations

import numpy as np
from xdsl.parser import Parser

from loom.dialects import context


def generic(name: str, maps: list[str], iterators: list[str], ranks: list[int], elem: str = "i32") -> str:
    types = ["memref<" + "?x" * r + f"{elem}>" for r in ranks]
    mul, add = ("arith.muli", "arith.addi") if elem == "i32" else ("arith.mulf", "arith.addf")
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    return f"""builtin.module {{
  func.func @{name}({args}) {{
    linalg.generic {{indexing_maps = [{", ".join(f"affine_map<{m}>" for m in maps)}],
                    iterator_types = [{", ".join(f'"{t}"' for t in iterators)}]}}
        ins(%a0, %a1 : {types[0]}, {types[1]}) outs(%a2 : {types[2]}) {{
    ^bb0(%x: {elem}, %y: {elem}, %z: {elem}):
      %p = {mul} %x, %y : {elem}
      %s = {add} %z, %p : {elem}
      linalg.yield %s : {elem}
    }}
    func.return
  }}
}}"""


MATVEC = (["(m, k) -> (m, k)", "(m, k) -> (k)", "(m, k) -> (m)"], ["parallel", "reduction"], [2, 1, 1])
ELEMENTWISE = (["(i, j) -> (i, j)"] * 3, ["parallel", "parallel"], [2, 2, 2])
MATMUL = (["(m, n, k) -> (m, k)", "(m, n, k) -> (k, n)", "(m, n, k) -> (m, n)"], ["parallel", "parallel", "reduction"],
          [2, 2, 2])
MATMUL_TB = (["(m, n, k) -> (m, k)", "(m, n, k) -> (n, k)", "(m, n, k) -> (m, n)"],
             ["parallel", "parallel", "reduction"], [2, 2, 2])
BATCH_MATMUL = (["(b, m, n, k) -> (b, m, k)", "(b, m, n, k) -> (b, k, n)", "(b, m, n, k) -> (b, m, n)"],
                ["parallel", "parallel", "parallel", "reduction"], [3, 3, 3])


def module(kind: tuple, elem: str = "i32"):
    return Parser(context(), generic("kernel", *kind, elem=elem)).parse_module()


def arrays(shapes, seed: int = 0, dtype=np.int32) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-9, 9, s).astype(dtype) for s in shapes]


REFERENCES = {
    "matvec": lambda a, x, y: y + a @ x,
    "elementwise": lambda a, b, c: c + a * b,
    "matmul": lambda a, b, c: c + a @ b,
    "matmul_tb": lambda a, b, c: c + a @ b.T,
    "batch_matmul": lambda a, b, c: c + a @ b,
}


def kernel_text(acc, name: str = "kernel", elem: str = "i32") -> str:
    """A linalg.generic with dynamic shapes computing an accelerator's (mul-add) kernel."""
    maps = [f"({', '.join(m.dims)}) -> ({', '.join(str(r) for r in m.results)})" for m in acc.kernel.indexing_maps]
    return generic(name, maps, list(acc.kernel.iterator_types), [len(m.results) for m in acc.kernel.indexing_maps],
                   elem)
