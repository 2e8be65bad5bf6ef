"""EVEREST D4.5 Listing 1 (``listing1.mlir``) with its implementations bound.

``@pow2`` is offloaded: it squares its item as a 1x1x1 matmul (``x * x``) on the
simulated ``v3_16`` accelerator of ``matmul_v3.json`` through a generated host
driver. ``@read_op`` is the environment function that ``@get_op`` injects.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from loom import Dim, I32, MemRef, kernel, linalg

M, N, K = Dim("M"), Dim("N"), Dim("K")
MLIR = Path(__file__).with_name("listing1.mlir")
MATMUL_V3 = str(Path(__file__).parents[1] / "accelerators" / "matmul_v3.json")


@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)


def square_on_matmul(run, x: int) -> int:
    """x * x as C = A.B with A = B = [[x]] (the accelerator accumulates into C = 0)."""
    a = np.array([[x]], np.int32)
    c = np.zeros((1, 1), np.int32)
    run(a, a.copy(), c)
    return int(c[0, 0]) & 0xFFFFFFFF


def bindings(op_b: int = 3) -> dict:
    from loom.dataflow import Accelerator

    return {"read_op": lambda: op_b,
            "pow2": Accelerator(mm, MATMUL_V3, "v3_16", "As", adapter=square_on_matmul)}


def module():
    from xdsl.parser import Parser

    from loom.dialects import context

    return Parser(context(), MLIR.read_text(), str(MLIR)).parse_module()


ENTRY = "run_dfg"
ARGS = (5,)
