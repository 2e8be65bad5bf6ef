"""Built-in kernels of ``loom accel run|compile`` and ``loom demo``: matmul and NCHW conv2d.

Each has default problem sizes, a module builder (static shapes), the operand
shapes, and an independent float64 reference of its output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from loom.frontends.kernel import linalg as L


@dataclass(frozen=True)
class Builtin:
    dims: dict[str, int]  # defaults
    build: Callable[[dict[str, int], object], ModuleOp]
    reference: Callable[[dict[str, int], list[np.ndarray]], np.ndarray]  # the expected output
    shapes: Callable[[dict[str, int]], list[tuple[int, ...]]]


def _matmul_shapes(d):
    return [(d["M"], d["K"]), (d["K"], d["N"]), (d["M"], d["N"])]


def _build_matmul(d, elem):
    return L.op_module("matmul", _matmul_shapes(d), elem, L.matmul)


def _conv_out(d):
    return (d["H"] - d["R"]) // d["S"] + 1, (d["W"] - d["R"]) // d["S"] + 1


def _conv_shapes(d):
    oh, ow = _conv_out(d)
    return [(d["B"], d["C"], d["H"], d["W"]), (d["F"], d["C"], d["R"], d["R"]), (d["B"], d["F"], oh, ow)]


def _build_conv(d, elem):
    return L.op_module("conv2d", _conv_shapes(d), elem,
                  lambda i, w, o: L.conv_2d_nchw_fchw(i, w, o, strides=(d["S"], d["S"])))


def conv_reference(I: np.ndarray, W: np.ndarray, O: np.ndarray, stride: int) -> np.ndarray:
    """O + conv(I, W) in float64 (exact for small integers), im2col + matmul."""
    b, c, _, _ = I.shape
    f, _, r, _ = W.shape
    oh, ow = O.shape[2:]
    out = O.astype(np.float64).copy()
    w2 = W.reshape(f, -1).astype(np.float64)
    for n in range(b):
        cols = np.empty((c * r * r, oh * ow))
        row = 0
        for ch in range(c):
            for y in range(r):
                for x in range(r):
                    cols[row] = I[n, ch, y:y + stride * (oh - 1) + 1:stride, x:x + stride * (ow - 1) + 1:stride].reshape(-1)
                    row += 1
        out[n] += (w2 @ cols).reshape(f, oh, ow)
    return out


BUILTINS: dict[str, Builtin] = {
    "matmul": Builtin({"M": 64, "N": 64, "K": 64}, _build_matmul,
                      lambda d, a: a[2].astype(np.float64) + a[0].astype(np.float64) @ a[1].astype(np.float64),
                      _matmul_shapes),
    "conv2d": Builtin({"B": 1, "C": 16, "F": 16, "H": 18, "W": 18, "R": 3, "S": 1}, _build_conv,
                      lambda d, a: conv_reference(a[0], a[1], a[2], d["S"]), _conv_shapes),
}
